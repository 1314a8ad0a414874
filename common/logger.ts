/**
 * The one logger of every layer: leveled, named (`child` appends a dotted component),
 * optionally prefixed (`withPrefix`, Kafka's LogContext: "[UnifiedLog partition=t-0, dir=/data] ...").
 * Lines go to a sink, stderr by default, so that stdout stays free for the one readiness line the
 * CLI prints, in the tree's format (log-format.ts): text, `[time] LEVEL name: prefix message
 * {context}`, or JSON lines with pino's fields. A failure is logged with its error in the context:
 * `{ err }`.
 *
 * Levels are log4j's (log-levels.ts): every logger answers to a log4j logger name (its `category`:
 * the Kafka logger of the component, e.g. child('replica-manager') is kafka.server.ReplicaManager,
 * see KAFKA_LOGGER_NAMES; the root logger is "root"), and its level is that name's in the tree's
 * LogLevels, inherited from the nearest ancestor name without one of its own. A tree is a root
 * logger and everything made from it; `withOwnLevels` starts a new tree over the same sink (each
 * broker has its own, so BROKER_LOGGER changes stay on that broker). The root level comes from
 * KRILL_LOG_LEVEL (error|warn|info|debug|trace, default info; tests set warn) unless given.
 */
import { formatterFor, type LogFormat, type LogRecord } from './log-format';
import { KAFKA_LOGGER_NAMES, LEVEL_ORDER, LogLevels, ROOT_LOGGER, type LogLevel } from './log-levels';

export type { LogLevel } from './log-levels';
export type { LogFormat } from './log-format';

export interface LogSink {
  (line: string): void;
}

function defaultLevel(): LogLevel {
  const env = (process.env.KRILL_LOG_LEVEL ?? '').toLowerCase();
  return env in LEVEL_ORDER ? (env as LogLevel) : 'info';
}

/** What the loggers of one tree share. */
interface LoggerTree {
  levels: LogLevels;
  format: (r: LogRecord) => string;
  formatName: LogFormat;
}

export interface RootLoggerOptions {
  level?: LogLevel;
  format?: LogFormat;
  sink?: LogSink;
}

/** The log4j name of child `name` of a logger answering to `parent`. */
function childCategory(parent: string, name: string): string {
  const mapped = KAFKA_LOGGER_NAMES[name];
  if (mapped !== undefined) return mapped;
  if (name.includes('.')) return name;
  return parent === ROOT_LOGGER ? `krill.${name}` : `${parent}.${name}`;
}

export class Logger {
  private readonly tree: LoggerTree;
  /** The log4j logger name this logger's level is looked up by. */
  readonly category: string;
  private seenVersion = -1;
  private order = 0;

  constructor(
    readonly name: string,
    level: LogLevel = defaultLevel(),
    private readonly sink: LogSink = (line) => process.stderr.write(line + '\n'),
    private readonly prefix = '',
    shared?: { tree: LoggerTree; category: string },
  ) {
    this.tree = shared?.tree ?? { levels: new LogLevels(level), format: formatterFor('text'), formatName: 'text' };
    this.category = shared?.category ?? ROOT_LOGGER;
    this.tree.levels.register(this.category);
  }

  /** A root logger with the given level, format (text or json) and sink. */
  static root(name: string, opts: RootLoggerOptions = {}): Logger {
    const level = opts.level ?? defaultLevel();
    const format = opts.format ?? 'text';
    return new Logger(name, level, opts.sink, '', { tree: { levels: new LogLevels(level), format: formatterFor(format), formatName: format }, category: ROOT_LOGGER });
  }

  /** Drops every line: for tools and benchmarks that report on their own. */
  static silent(): Logger {
    return new Logger('silent', 'error', () => {});
  }

  child(name: string): Logger {
    return new Logger(`${this.name}.${name}`, undefined, this.sink, this.prefix, { tree: this.tree, category: childCategory(this.category, name) });
  }

  /** The same logger with `prefix` in front of every message. */
  withPrefix(prefix: string): Logger {
    return new Logger(this.name, undefined, this.sink, this.prefix + prefix, { tree: this.tree, category: this.category });
  }

  /**
   * The root of a new tree over the same sink and format, its root level this logger's level now:
   * level changes in either tree do not reach the other.
   */
  withOwnLevels(): Logger {
    const tree = { ...this.tree, levels: new LogLevels(this.level) };
    return new Logger(this.name, undefined, this.sink, this.prefix, { tree, category: ROOT_LOGGER });
  }

  /** This tree's levels by log4j logger name (BROKER_LOGGER configs). */
  get levels(): LogLevels {
    return this.tree.levels;
  }

  get format(): LogFormat {
    return this.tree.formatName;
  }

  /** The level this logger logs at (its category's, inherited as log4j does). */
  get level(): LogLevel {
    return this.tree.levels.effective(this.category);
  }

  /** Sets the level of this logger's category (and so of the categories inheriting from it). */
  setLevel(level: LogLevel): void {
    this.tree.levels.set(this.category, level);
  }

  enabled(level: LogLevel): boolean {
    const levels = this.tree.levels;
    if (this.seenVersion !== levels.version) {
      this.order = LEVEL_ORDER[levels.effective(this.category)];
      this.seenVersion = levels.version;
    }
    return LEVEL_ORDER[level] <= this.order;
  }

  private log(level: LogLevel, msg: string, ctx?: Record<string, unknown>): void {
    if (!this.enabled(level)) return;
    this.sink(this.tree.format({ level, timeMs: Date.now(), name: this.name, logger: this.category, msg: this.prefix + msg, ctx }));
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
