/**
 * How a log line is written: krill's text form (`[time] LEVEL name: prefix message {context}`) or
 * one JSON object per line with pino's fields, so log shippers that know pino (or any JSON lines)
 * read it without a parser of their own: `level` (pino's number: trace 10, debug 20, info 30,
 * warn 40, error 50), `time` (epoch ms), `pid`, `hostname`, `name` (krill's logger name),
 * `logger` (the log4j logger name whose level applies), `msg`, then the context's fields; an Error
 * in the context becomes pino's `{ type, message, stack }`, a bigint its decimal string.
 *
 * Invariant: a record is always one line (JSON escapes newlines; the text form keeps the message
 * as given, as before), and formatting never throws.
 */
import * as os from 'node:os';
import type { LogLevel } from './log-levels';

export type LogFormat = 'text' | 'json';

export const LOG_FORMATS: readonly LogFormat[] = ['text', 'json'];

export interface LogRecord {
  level: LogLevel;
  timeMs: number;
  name: string;
  logger: string;
  msg: string;
  ctx?: Record<string, unknown>;
}

export const PINO_LEVELS: Readonly<Record<LogLevel, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50 };

/** Fields a context may not overwrite in the JSON form. */
const RESERVED = new Set(['level', 'time', 'pid', 'hostname', 'name', 'logger', 'msg']);

let host: string | undefined;

/** pino's error serialiser: { type, message, stack }. */
function replacer(_k: string, v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Error) return { type: v.name, message: v.message, stack: v.stack };
  return v;
}

/** The text form's context, as krill always wrote it (an Error as { name, message, stack }). */
function textReplacer(_k: string, v: unknown): unknown {
  if (typeof v === 'bigint') return v.toString();
  if (v instanceof Error) return { name: v.name, message: v.message, stack: v.stack };
  return v;
}

function safeJson(value: Record<string, unknown>): string {
  try {
    return JSON.stringify(value, textReplacer);
  } catch {
    return String(value);
  }
}

export function formatText(r: LogRecord): string {
  let line = `[${new Date(r.timeMs).toISOString()}] ${r.level.toUpperCase()} ${r.name}: ${r.msg}`;
  if (r.ctx) line += ' ' + safeJson(r.ctx);
  return line;
}

export function formatJson(r: LogRecord): string {
  host ??= os.hostname();
  const base: Record<string, unknown> = {
    level: PINO_LEVELS[r.level],
    time: r.timeMs,
    pid: process.pid,
    hostname: host,
    name: r.name,
    logger: r.logger,
    msg: r.msg,
  };
  if (!r.ctx) return JSON.stringify(base);
  const out = { ...base };
  for (const [k, v] of Object.entries(r.ctx)) out[RESERVED.has(k) ? `ctx.${k}` : k] = v;
  try {
    return JSON.stringify(out, replacer);
  } catch {
    // A context that cannot be serialised (a cycle): keep the line, say so.
    return JSON.stringify({ ...base, ctx: '[unserialisable context]' });
  }
}

export function formatterFor(format: LogFormat): (r: LogRecord) => string {
  return format === 'json' ? formatJson : formatText;
}
