/**
 * The one logger of every layer: leveled, named (`child` appends a dotted component, as Kafka's
 * log4j categories), optionally prefixed (`withPrefix`, Kafka's LogContext:
 * "[UnifiedLog partition=t-0, dir=/data] ..."). Lines go to a sink, stderr by default, as
 * `[time] LEVEL name: prefix message {context}`, so that stdout stays free for the one readiness
 * line the CLI prints. The default level comes from KRILL_LOG_LEVEL (error|warn|info|debug|trace,
 * default info; tests set warn). A failure is logged with its error in the context: `{ err }`.
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
    private readonly prefix = '',
  ) {}

  /** Drops every line: for tools and benchmarks that report on their own. */
  static silent(): Logger {
    return new Logger('silent', 'error', () => {});
  }

  child(name: string): Logger {
    return new Logger(`${this.name}.${name}`, this.currentLevel, this.sink, this.prefix);
  }

  /** The same logger with `prefix` in front of every message. */
  withPrefix(prefix: string): Logger {
    return new Logger(this.name, this.currentLevel, this.sink, this.prefix + prefix);
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
    let line = `[${new Date().toISOString()}] ${level.toUpperCase()} ${this.name}: ${this.prefix}${msg}`;
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
