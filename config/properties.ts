/**
 * A reader for Java's `.properties` format, as `java.util.Properties.load` reads it, because
 * server.properties files written for Kafka must mean the same thing to krill; and a writer
 * (formatProperties) whose output parseProperties reads back exactly.
 *
 * The rules kept (java.util.Properties / LineReader):
 * - Natural lines end at `\n`, `\r` or `\r\n`. Leading blanks (space, tab, form feed) are skipped.
 * - A line whose first non-blank character is `#` or `!` is a comment. A comment never continues
 *   onto the next line, whatever it ends with.
 * - A line ending in an odd number of backslashes continues on the next natural line; the
 *   backslash is dropped and so are the next line's leading blanks. A continuation line that
 *   starts with `#` is part of the value, not a comment. A blank continuation line ends the value.
 * - The key ends at the first unescaped `=`, `:` or blank. After it, blanks, then at most one `=`
 *   or `:`, then blanks are skipped; the rest of the line (trailing blanks included) is the value.
 * - Escapes in keys and values: `\t \n \r \f`, `\uXXXX` (UTF-16 code unit, so a surrogate pair is
 *   two escapes), and `\c` for any other character c means c itself (`\=`, `\:`, `\ `, `\\`, `\#`).
 *   A malformed `\u` escape is an error, as in Java.
 * - A key seen twice keeps its last value.
 *
 * One deliberate difference: Kafka loads the file through `Properties.load(InputStream)`, which
 * decodes ISO-8859-1. krill reads files as UTF-8 by default, because a UTF-8 path in log.dirs
 * should just work; pass `latin1` to get Kafka's byte-for-byte reading.
 */
import * as fs from 'fs';

export class PropertiesParseError extends Error {
  constructor(message: string, readonly line: number) {
    super(`${message} (line ${line})`);
    this.name = 'PropertiesParseError';
  }
}

const isBlank = (c: string): boolean => c === ' ' || c === '\t' || c === '\f';

interface LogicalLine {
  text: string;
  line: number; // 1-based number of the natural line the logical line starts on
}

/** Splits text into logical lines: comments and blank lines dropped, continuations joined. */
function logicalLines(text: string): LogicalLine[] {
  // Natural lines, keeping track of numbers for error messages.
  const natural = text.split(/\r\n|\r|\n/);
  const out: LogicalLine[] = [];
  let i = 0;
  while (i < natural.length) {
    const startLine = i + 1;
    let line = stripLeadingBlanks(natural[i++]);
    if (line.length === 0 || line[0] === '#' || line[0] === '!') continue;
    let acc = '';
    for (;;) {
      if (!endsWithOddBackslashes(line)) {
        acc += line;
        break;
      }
      acc += line.slice(0, -1);
      if (i >= natural.length) break; // a trailing backslash at end of input is dropped
      line = stripLeadingBlanks(natural[i++]);
      if (line.length === 0) break; // a blank continuation line ends the logical line
    }
    out.push({ text: acc, line: startLine });
  }
  return out;
}

function stripLeadingBlanks(s: string): string {
  let k = 0;
  while (k < s.length && isBlank(s[k])) k++;
  return s.slice(k);
}

function endsWithOddBackslashes(s: string): boolean {
  let n = 0;
  for (let k = s.length - 1; k >= 0 && s[k] === '\\'; k--) n++;
  return n % 2 === 1;
}

/** Resolves escapes the way Properties.loadConvert does. */
function unescape(s: string, line: number): string {
  if (!s.includes('\\')) return s;
  let out = '';
  for (let k = 0; k < s.length; k++) {
    const c = s[k];
    if (c !== '\\') {
      out += c;
      continue;
    }
    k++;
    if (k >= s.length) break; // a lone trailing backslash means nothing
    const e = s[k];
    switch (e) {
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        const hex = s.slice(k + 1, k + 5);
        if (!/^[0-9a-fA-F]{4}$/.test(hex)) throw new PropertiesParseError('Malformed \\uxxxx encoding.', line);
        out += String.fromCharCode(parseInt(hex, 16));
        k += 4;
        break;
      }
      default:
        out += e;
    }
  }
  return out;
}

/** Splits one logical line into key and value (both still escaped). */
function splitKeyValue(s: string): [string, string] {
  let keyLen = 0;
  let valueStart = s.length;
  let hasSep = false;
  let precedingBackslash = false;
  while (keyLen < s.length) {
    const c = s[keyLen];
    if ((c === '=' || c === ':') && !precedingBackslash) {
      valueStart = keyLen + 1;
      hasSep = true;
      break;
    }
    if (isBlank(c) && !precedingBackslash) {
      valueStart = keyLen + 1;
      break;
    }
    precedingBackslash = c === '\\' ? !precedingBackslash : false;
    keyLen++;
  }
  while (valueStart < s.length) {
    const c = s[valueStart];
    if (!isBlank(c)) {
      if (!hasSep && (c === '=' || c === ':')) hasSep = true;
      else break;
    }
    valueStart++;
  }
  return [s.slice(0, keyLen), s.slice(valueStart)];
}

/**
 * Parses properties text. The result keeps first-appearance order of keys; a repeated key keeps
 * its last value (in its first position).
 */
export function parseProperties(text: string): Map<string, string> {
  const props = new Map<string, string>();
  // A UTF-8 byte order mark is not part of the first key.
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  for (const { text: line, line: n } of logicalLines(text)) {
    const [k, v] = splitKeyValue(line);
    props.set(unescape(k, n), unescape(v, n));
  }
  return props;
}

/** Reads and parses a properties file. */
export function loadPropertiesFile(path: string, encoding: 'utf8' | 'latin1' = 'utf8'): Map<string, string> {
  return parseProperties(fs.readFileSync(path, encoding));
}

/** Escapes a key or value so that parseProperties reads it back unchanged. */
export function escapeProperty(s: string, isKey: boolean): string {
  let out = '';
  for (let k = 0; k < s.length; k++) {
    const c = s[k];
    const code = c.charCodeAt(0);
    if (c === '\\') out += '\\\\';
    else if (c === '\t') out += '\\t';
    else if (c === '\n') out += '\\n';
    else if (c === '\r') out += '\\r';
    else if (c === '\f') out += '\\f';
    else if (c === '=' || c === ':' || c === '#' || c === '!') out += '\\' + c;
    else if (c === ' ' && (isKey || k === 0)) out += '\\ ';
    else if (code < 0x20 || code === 0x7f) out += '\\u' + code.toString(16).padStart(4, '0');
    else out += c;
  }
  return out;
}

/** Writes properties text (one `key=value` line each) that parseProperties reads back exactly. */
export function formatProperties(props: Iterable<[string, string]>): string {
  let out = '';
  for (const [k, v] of props) out += `${escapeProperty(k, true)}=${escapeProperty(v, false)}\n`;
  return out;
}
