/**
 * JAAS login configuration as Kafka reads it from `sasl.jaas.config`-style properties
 * (org.apache.kafka.common.security.JaasConfig and JaasContext):
 *
 *   <loginModuleClass> <controlFlag> (<optionName>=<optionValue>)*;
 *
 * Owns the tokenizer (java.io.StreamTokenizer as JaasConfig configures it), the parser with
 * Kafka's error messages, and where a broker finds the JAAS entry of a listener's mechanism
 * (JaasContext.loadServerContext).
 *
 * Tokenizer rules kept from StreamTokenizer: words are letters, bytes 160-255, any character above
 * 255, '-', '_', '$' and (after the first character) digits and '.'; a token that starts with a
 * digit, '.' or '-'+digit is a number, which has no string value, so `key=123` is "Value not
 * specified" (numbers must be quoted, as in Kafka); values in '"' or '\'' quotes take Java escapes
 * (\n, \t, \\, \", octal) and end at the closing quote or an unescaped line break; `//` and `/* *\/`
 * are comments, and so is a lone '/' up to the end of the line.
 *
 * Precedence (loadServerContext): a broker reads `listener.name.<listener>.<mechanism>.sasl.jaas.config`
 * (both lower-cased). An unprefixed `sasl.jaas.config` is ignored with Kafka's warning; Kafka then
 * falls back to the JVM's static JAAS file (`-Djava.security.auth.login.config`), which krill,
 * having no JVM, does not read: a SASL listener without the prefixed property stops startup with
 * Kafka's own message for that case.
 */
import type { KafkaConfig } from '../../../config/kafka-config';
import { listenerPrefix } from '../../../config/kafka-config';
import { ConfigException } from '../../../config/config-types';
import type { Logger } from '../../../common/logger';

export type JaasControlFlag = 'REQUIRED' | 'REQUISITE' | 'SUFFICIENT' | 'OPTIONAL';

export interface JaasEntry {
  readonly loginModule: string;
  readonly controlFlag: JaasControlFlag;
  readonly options: ReadonlyMap<string, string>;
}

/** Kafka's IllegalArgumentException from JaasConfig / JaasContext. */
export class JaasConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JaasConfigError';
  }
}

// ---------------------------------------------------------------------------------------------
// Tokenizer (java.io.StreamTokenizer with slashSlashComments, slashStarComments and word chars
// '-', '_', '$' added, as JaasConfig sets it up)

const EOF = -1;
type Token =
  | { type: 'eof' }
  | { type: 'word'; sval: string }
  | { type: 'quote'; quote: string; sval: string }
  | { type: 'number' }
  | { type: 'char'; ch: string };

const CT_WHITESPACE = 1;
const CT_DIGIT = 2;
const CT_ALPHA = 4;
const CT_QUOTE = 8;
const CT_COMMENT = 16;

const CTYPE: Uint8Array = (() => {
  const ct = new Uint8Array(256);
  for (let c = 0; c <= 32; c++) ct[c] = CT_WHITESPACE;
  for (let c = 'a'.charCodeAt(0); c <= 'z'.charCodeAt(0); c++) ct[c] |= CT_ALPHA;
  for (let c = 'A'.charCodeAt(0); c <= 'Z'.charCodeAt(0); c++) ct[c] |= CT_ALPHA;
  for (let c = 160; c <= 255; c++) ct[c] |= CT_ALPHA;
  for (let c = '0'.charCodeAt(0); c <= '9'.charCodeAt(0); c++) ct[c] |= CT_DIGIT;
  ct['.'.charCodeAt(0)] |= CT_DIGIT;
  ct['-'.charCodeAt(0)] |= CT_DIGIT;
  ct['"'.charCodeAt(0)] = CT_QUOTE;
  ct["'".charCodeAt(0)] = CT_QUOTE;
  ct['/'.charCodeAt(0)] = CT_COMMENT;
  for (const ch of ['-', '_', '$']) ct[ch.charCodeAt(0)] |= CT_ALPHA;
  return ct;
})();

const ctype = (c: number): number => (c < 0 ? 0 : c < 256 ? CTYPE[c] : CT_ALPHA);
const isEol = (c: number): boolean => c === 10 || c === 13;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;

class Tokenizer {
  private pos = 0;
  private peekc: number | null = null;

  constructor(private readonly s: string) {}

  private read(): number {
    return this.pos < this.s.length ? this.s.charCodeAt(this.pos++) : EOF;
  }

  private nextChar(): number {
    if (this.peekc !== null) {
      const c = this.peekc;
      this.peekc = null;
      return c;
    }
    return this.read();
  }

  next(): Token {
    for (;;) {
      let c = this.nextChar();
      while (c !== EOF && (ctype(c) & CT_WHITESPACE) !== 0) c = this.read();
      if (c === EOF) return { type: 'eof' };
      const ct = ctype(c);
      if ((ct & CT_DIGIT) !== 0) {
        if (c === 45 /* - */) {
          const d = this.read();
          if (d !== 46 && !isDigit(d)) {
            this.peekc = d;
            return { type: 'char', ch: '-' };
          }
          c = d;
        }
        let seenDot = false;
        while (isDigit(c) || (c === 46 && !seenDot)) {
          if (c === 46) seenDot = true;
          c = this.read();
        }
        this.peekc = c;
        return { type: 'number' };
      }
      if ((ct & CT_ALPHA) !== 0) {
        let word = '';
        while ((ctype(c) & (CT_ALPHA | CT_DIGIT)) !== 0) {
          word += String.fromCharCode(c);
          c = this.read();
        }
        this.peekc = c;
        return { type: 'word', sval: word };
      }
      if ((ct & CT_QUOTE) !== 0) return this.quoted(c);
      if (c === 47 /* / */) {
        const d = this.read();
        if (d === 42 /* * */) {
          let prev = 0;
          let e = this.read();
          while (!(prev === 42 && e === 47)) {
            if (e === EOF) return { type: 'eof' };
            prev = e;
            e = this.read();
          }
          continue;
        }
        // `//` comment, or a lone '/': '/' is also StreamTokenizer's single-line comment character.
        let e = d;
        while (e !== EOF && !isEol(e)) e = this.read();
        this.peekc = e;
        continue;
      }
      return { type: 'char', ch: String.fromCharCode(c) };
    }
  }

  private quoted(q: number): Token {
    let out = '';
    let d = this.read();
    while (d !== EOF && d !== q && !isEol(d)) {
      let c: number;
      if (d === 92 /* \ */) {
        c = this.read();
        const first = c;
        if (c >= 48 && c <= 55) {
          c -= 48;
          let c2 = this.read();
          if (c2 >= 48 && c2 <= 55) {
            c = (c << 3) + (c2 - 48);
            c2 = this.read();
            if (c2 >= 48 && c2 <= 55 && first <= 51) {
              c = (c << 3) + (c2 - 48);
              d = this.read();
            } else {
              d = c2;
            }
          } else {
            d = c2;
          }
        } else {
          switch (c) {
            case 97: c = 7; break; // \a
            case 98: c = 8; break; // \b
            case 102: c = 12; break; // \f
            case 110: c = 10; break; // \n
            case 114: c = 13; break; // \r
            case 116: c = 9; break; // \t
            case 118: c = 11; break; // \v
          }
          d = this.read();
        }
        if (c === EOF) break;
      } else {
        c = d;
        d = this.read();
      }
      out += String.fromCharCode(c);
    }
    // A string cut short by a line break or the end leaves that character to be read next.
    if (d !== q) this.peekc = d;
    return { type: 'quote', quote: String.fromCharCode(q), sval: out };
  }
}

const svalOf = (t: Token): string | null => (t.type === 'word' || t.type === 'quote' ? t.sval : null);
const isChar = (t: Token, ch: string): boolean => t.type === 'char' && t.ch === ch;

function controlFlag(flag: string | null): JaasControlFlag {
  if (flag === null) throw new JaasConfigError('Login module control flag is not available in the JAAS config');
  const up = flag.toUpperCase();
  if (up === 'REQUIRED' || up === 'REQUISITE' || up === 'SUFFICIENT' || up === 'OPTIONAL') return up;
  throw new JaasConfigError(`Invalid login module control flag '${flag}' in JAAS config`);
}

/** JaasConfig: every `<module> <flag> options;` entry of a JAAS config property, in order. */
export function parseJaasConfig(text: string): JaasEntry[] {
  const t = new Tokenizer(text);
  const entries: JaasEntry[] = [];
  for (let tok = t.next(); tok.type !== 'eof'; tok = t.next()) {
    const loginModule = svalOf(tok);
    let next = t.next();
    if (next.type === 'eof') throw new JaasConfigError('Login module control flag not specified in JAAS config');
    const flag = controlFlag(svalOf(next));
    const options = new Map<string, string>();
    for (next = t.next(); next.type !== 'eof' && !isChar(next, ';'); next = t.next()) {
      const key = svalOf(next);
      const eq = t.next();
      const value = isChar(eq, '=') ? t.next() : null;
      if (value === null || value.type === 'eof' || svalOf(value) === null) {
        throw new JaasConfigError(`Value not specified for key '${key}' in JAAS config`);
      }
      options.set(key ?? 'null', svalOf(value)!);
    }
    if (!isChar(next, ';')) throw new JaasConfigError('JAAS config entry not terminated by semi-colon');
    if (loginModule === null) throw new JaasConfigError('Invalid null input(s)');
    entries.push({ loginModule, controlFlag: flag, options });
  }
  if (entries.length === 0) throw new JaasConfigError('Login module not specified in JAAS config');
  return entries;
}

/** Kafka's default of `org.apache.kafka.disallowed.login.modules`. */
const DISALLOWED_LOGIN_MODULES = ['com.sun.security.auth.module.JndiLoginModule'];

/**
 * JaasContext.load for a `sasl.jaas.config`-style property: exactly one login module, not a
 * disallowed one.
 */
export function loadJaasProperty(value: string): JaasEntry {
  const entries = parseJaasConfig(value);
  if (entries.length !== 1) throw new JaasConfigError(`JAAS config property contains ${entries.length} login modules, should be 1 module`);
  const module = entries[0].loginModule.trim();
  if (DISALLOWED_LOGIN_MODULES.includes(module)) {
    throw new JaasConfigError(`${module} is not allowed. Update System property 'org.apache.kafka.disallowed.login.modules' to allow ${module}`);
  }
  return entries[0];
}

/** JaasContext.configEntryOption: the option from the first entry (of `loginModule`, when given) that has it. */
export function jaasOption(entries: readonly JaasEntry[], key: string, loginModule?: string): string | undefined {
  for (const e of entries) {
    if (loginModule !== undefined && e.loginModule !== loginModule) continue;
    const v = e.options.get(key);
    if (v !== undefined) return v;
  }
  return undefined;
}

/** The property a broker reads a listener's JAAS for `mechanism` from. */
export function serverJaasConfigKey(listenerName: string, mechanism: string): string {
  return `${listenerPrefix(listenerName)}${mechanism.toLowerCase()}.sasl.jaas.config`;
}

/**
 * JaasContext.loadServerContext: the JAAS entry of `mechanism` on `listenerName`. Throws
 * ConfigException (startup fails) when it is missing or malformed.
 */
export function loadServerJaas(config: KafkaConfig, listenerName: string, mechanism: string, log?: Logger): JaasEntry {
  const key = serverJaasConfigKey(listenerName, mechanism);
  const value = config.listenerOverride(listenerName, `${mechanism.toLowerCase()}.sasl.jaas.config`);
  if (value === null) {
    if (config.getString('sasl.jaas.config') !== null) {
      log?.warn('Server config sasl.jaas.config should be prefixed with SASL mechanism name, ignoring config');
    }
    throw new ConfigException(
      `Could not find a 'KafkaServer' or '${listenerName.toLowerCase()}.KafkaServer' entry in the JAAS configuration. ` +
        `System property 'java.security.auth.login.config' is not set (krill has no JVM JAAS file: set ${key})`,
      key,
    );
  }
  try {
    return loadJaasProperty(value.trim());
  } catch (err) {
    if (err instanceof JaasConfigError) throw new ConfigException(`Invalid ${key}: ${err.message}`, key);
    throw err;
  }
}
