/**
 * A small leveled logger. Lines go to stderr as `[time] LEVEL name: message {context}` so that
 * stdout stays free for the one readiness line the CLI prints. The level comes from
 * KRILL_LOG_LEVEL (error|warn|info|debug|trace, default info; tests set warn).
 */
export type LogLevel = 'error' | 'warn' | 'info' | 'debug' | 'trace';

const ORDER: Record<LogLevel, number> = { error: 0, warn: 1, info: 2, debug: 3, trace: 4 };

export interface LogSink {
  (line: string): void;
}

function defaultLevel(): LogLevel {
  const env = (process.env.KRILL_LOG_LEVEL ?? '').toLowerCase();
  return env in ORDER ? (env as LogLevel) : 'info';
}

export class Logger {
  constructor(
    readonly name: string,
    private currentLevel: LogLevel = defaultLevel(),
    private sink: LogSink = (line) => process.stderr.write(line + '\n'),
  ) {}

  child(name: string): Logger {
    return new Logger(`${this.name}.${name}`, this.currentLevel, this.sink);
  }

  get level(): LogLevel {
    return this.currentLevel;
  }

  setLevel(level: LogLevel): void {
    this.currentLevel = level;
  }

  enabled(level: LogLevel): boolean {
    return ORDER[level] <= ORDER[this.currentLevel];
  }

  private log(level: LogLevel, msg: string, ctx?: Record<string, unknown>): void {
    if (!this.enabled(level)) return;
    let line = `[${new Date().toISOString()}] ${level.toUpperCase()} ${this.name}: ${msg}`;
    if (ctx) line += ' ' + safeJson(ctx);
    this.sink(line);
  }

  error(msg: string, ctx?: Record<string, unknown>): void {
    this.log('error', msg, ctx);
  }
  warn(msg: string, ctx?: Record<string, unknown>): void {
    this.log('warn', msg, ctx);
  }
  info(msg: string, ctx?: Record<string, unknown>): void {
    this.log('info', msg, ctx);
  }
  debug(msg: string, ctx?: Record<string, unknown>): void {
    this.log('debug', msg, ctx);
  }
  trace(msg: string, ctx?: Record<string, unknown>): void {
    this.log('trace', msg, ctx);
  }
}

function safeJson(ctx: Record<string, unknown>): string {
  try {
    return JSON.stringify(ctx, (_k, v) => {
      if (typeof v === 'bigint') return v.toString();
      if (v instanceof Error) return { name: v.name, message: v.message, stack: v.stack };
      return v;
    });
  } catch {
    return String(ctx);
  }
}

export interface StorageLogger {
  debug(msg: string): void;
  info(msg: string): void;
  warn(msg: string): void;
  error(msg: string, err?: unknown): void;
}

export const silentLogger: StorageLogger = {
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: () => {},
};

/** Warnings and errors to stderr; the broker replaces this with its own logger. */
export const consoleLogger: StorageLogger = {
  debug: () => {},
  info: () => {},
  warn: (m) => console.warn(`[storage] ${m}`),
  error: (m, e) => console.error(`[storage] ${m}`, e ?? ''),
};

/** Prefixes every line (Kafka's LogContext: "[UnifiedLog partition=t-0, dir=/data] ..."). */
export function prefixedLogger(inner: StorageLogger, prefix: string): StorageLogger {
  return {
    debug: (m) => inner.debug(`${prefix}${m}`),
    info: (m) => inner.info(`${prefix}${m}`),
    warn: (m) => inner.warn(`${prefix}${m}`),
    error: (m, e) => inner.error(`${prefix}${m}`, e),
  };
}
