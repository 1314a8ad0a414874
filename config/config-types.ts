/**
 * The value model shared by the broker and topic config tables: Kafka's config types, how a
 * string from a properties file becomes a typed value (ConfigDef.parseType), how a typed value is
 * written back as a string for DescribeConfigs (ConfigDef.convertToString), validators with
 * Kafka's wording, and the numeric ids DescribeConfigs uses for types and sources.
 *
 * Typed values:
 *   boolean -> boolean        int, short, double -> number
 *   long    -> bigint         (exact: several defaults are Long.MAX_VALUE, beyond 2^53)
 *   string, class, password -> string
 *   list    -> string[]
 * KafkaConfig.getLong() hands out a number for convenience; getLongExact() the bigint.
 */

/** Kafka's ConfigDef.Type, lower-cased as Kafka's docs print it. */
export type ConfigDataType = 'boolean' | 'string' | 'int' | 'short' | 'long' | 'double' | 'list' | 'class' | 'password';

export type ConfigValue = boolean | number | bigint | string | string[];

/** DescribeConfigsResponse ConfigType ids (KIP-336). */
export const ConfigType = {
  UNKNOWN: 0,
  BOOLEAN: 1,
  STRING: 2,
  INT: 3,
  SHORT: 4,
  LONG: 5,
  DOUBLE: 6,
  LIST: 7,
  CLASS: 8,
  PASSWORD: 9,
} as const;

export function configTypeId(t: ConfigDataType | undefined): number {
  return t === undefined ? ConfigType.UNKNOWN : ConfigType[t.toUpperCase() as keyof typeof ConfigType];
}

/** DescribeConfigsResponse ConfigSource ids. */
export const ConfigSource = {
  UNKNOWN: 0,
  DYNAMIC_TOPIC_CONFIG: 1,
  DYNAMIC_BROKER_CONFIG: 2,
  DYNAMIC_DEFAULT_BROKER_CONFIG: 3,
  STATIC_BROKER_CONFIG: 4,
  DEFAULT_CONFIG: 5,
  DYNAMIC_BROKER_LOGGER_CONFIG: 6,
  DYNAMIC_CLIENT_METRICS_CONFIG: 7,
  DYNAMIC_GROUP_CONFIG: 8,
} as const;
export type ConfigSourceId = (typeof ConfigSource)[keyof typeof ConfigSource];

export type Importance = 'high' | 'medium' | 'low';

/** Kafka's "Update Mode" column: read-only, or dynamically updatable per broker or cluster-wide. */
export type UpdateMode = 'read-only' | 'per-broker' | 'cluster-wide';

export const INT_MIN = -2147483648;
export const INT_MAX = 2147483647;
export const SHORT_MIN = -32768;
export const SHORT_MAX = 32767;
export const LONG_MIN = -9223372036854775808n;
export const LONG_MAX = 9223372036854775807n;
/** Long.MAX_VALUE as a JS number (2^63). Sentinels such as flush.messages use it to mean "never". */
export const LONG_MAX_AS_NUMBER = Number(LONG_MAX);

/**
 * A bad config. The message follows Kafka's ConfigException:
 * `Invalid value <v> for configuration <name>: <reason>`, or a free message for cross-key rules.
 */
export class ConfigException extends Error {
  readonly configName?: string;
  constructor(message: string, configName?: string) {
    super(message);
    this.name = 'ConfigException';
    this.configName = configName;
  }
  static invalid(name: string, value: unknown, reason?: string): ConfigException {
    const shown = value === null || value === undefined ? 'null' : Array.isArray(value) ? value.join(',') : String(value);
    return new ConfigException(`Invalid value ${shown} for configuration ${name}${reason ? ': ' + reason : ''}`, name);
  }
  static missing(name: string): ConfigException {
    return new ConfigException(`Missing required configuration "${name}" which has no default value.`, name);
  }
}

/** A Kafka ConfigDef.Validator: throws ConfigException; describe() is the "Valid Values" text. */
export interface Validator {
  ensureValid(name: string, value: ConfigValue | null): void;
  describe(): string;
}

function num(v: ConfigValue): number | bigint {
  if (typeof v === 'number' || typeof v === 'bigint') return v;
  throw new Error(`not a number: ${String(v)}`);
}

function lt(a: number | bigint, b: number | bigint): boolean {
  return typeof a === 'bigint' || typeof b === 'bigint' ? BigInt(a) < BigInt(b) : a < b;
}

function fmtBound(b: number | bigint): string {
  return typeof b === 'bigint' ? b.toString() : javaNumberToString(b, Number.isInteger(b) ? 'int' : 'double');
}

/** ConfigDef.Range: atLeast(min), between(min, max). Bounds may be bigint for long configs. */
export function range(min: number | bigint | null, max: number | bigint | null): Validator {
  return {
    ensureValid(name, value) {
      if (value === null) throw ConfigException.invalid(name, null, 'Value must be non-null');
      const n = num(value);
      if (min !== null && lt(n, min)) throw ConfigException.invalid(name, value, `Value must be at least ${fmtBound(min)}`);
      if (max !== null && lt(max, n)) throw ConfigException.invalid(name, value, `Value must be no more than ${fmtBound(max)}`);
    },
    describe() {
      if (max === null) return `[${fmtBound(min!)},...]`;
      if (min === null) return `[...,${fmtBound(max)}]`;
      return `[${fmtBound(min)},...,${fmtBound(max)}]`;
    },
  };
}
export const atLeast = (min: number | bigint): Validator => range(min, null);
export const between = (min: number | bigint, max: number | bigint): Validator => range(min, max);

/** ConfigDef.ValidString.in: one of the given strings, case-sensitive. */
export function oneOf(...valid: string[]): Validator {
  return {
    ensureValid(name, value) {
      if (value === null || !valid.includes(value as string)) {
        throw ConfigException.invalid(name, value, `String must be one of: ${valid.join(', ')}`);
      }
    },
    describe: () => `[${valid.join(', ')}]`,
  };
}

/** ConfigDef.CaseInsensitiveValidString.in. */
export function oneOfIgnoreCase(...valid: string[]): Validator {
  const upper = valid.map((v) => v.toUpperCase());
  return {
    ensureValid(name, value) {
      if (value === null || !upper.includes(String(value).toUpperCase())) {
        throw ConfigException.invalid(name, value, `String must be one of (case insensitive): ${valid.join(', ')}`);
      }
    },
    describe: () => `(case insensitive) [${valid.join(', ')}]`,
  };
}

/** ConfigDef.ValidList.in: every element one of the given strings. An empty list passes, as in Kafka 4.0. */
export function listOf(...valid: string[]): Validator {
  return {
    ensureValid(name, value) {
      const items = (value ?? []) as string[];
      for (const item of items) {
        if (!valid.includes(item)) throw ConfigException.invalid(name, item, `String must be one of: ${valid.join(', ')}`);
      }
    },
    describe: () => `[${valid.join(', ')}]`,
  };
}

/** ConfigDef.NonEmptyString. */
export const nonEmptyString: Validator = {
  ensureValid(name, value) {
    if (value === null) return; // Kafka lets null through when null is the default
    if ((value as string).trim().length === 0) throw ConfigException.invalid(name, value, 'String may not be empty');
  },
  describe: () => 'non-empty string',
};

/** ConfigDef.NonNullValidator on a string. */
export const nonNullString: Validator = {
  ensureValid(name, value) {
    if (value === null) throw ConfigException.invalid(name, null, 'entry must be non null');
  },
  describe: () => 'non-null string',
};

/** CompressionType.GZIP.levelValidator: 1..9, or -1 for the library default. */
export const gzipLevel: Validator = {
  ensureValid(name, value) {
    const level = value as number;
    if (value === null || level > 9 || (level < 1 && level !== -1)) {
      throw ConfigException.invalid(name, value, 'Value must be between 1 and 9, or -1');
    }
  },
  describe: () => '[1,...,9] or -1',
};

/** QuotaConfig's ThrottledReplicaListValidator: `*`, or partition:broker pairs. */
export const throttledReplicaList: Validator = {
  ensureValid(name, value) {
    const items = ((value ?? []) as string[]).map((s) => s.trim());
    const ok = items.every((s) => /^([0-9]+:[0-9]+)?$/.test(s)) || items.join('') === '*';
    if (!ok) {
      throw ConfigException.invalid(
        name,
        value,
        `${name} must be the literal '*' or a list of replicas in the following format: [partitionId]:[brokerId],[partitionId]:[brokerId],...`,
      );
    }
  },
  describe: () => '[partitionId]:[brokerId],[partitionId]:[brokerId],...',
};

const JAVA_INT = /^[+-]?\d+$/;
// Double.parseDouble accepts decimal and exponent forms, NaN/Infinity, and a trailing d/f.
const JAVA_DOUBLE = /^[+-]?(NaN|Infinity|(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?$/;
const LIST_SPLIT = /\s*,\s*/;

/**
 * ConfigDef.parseType for a string input. Strings are trimmed first (as Kafka does for every
 * type); a list is split on commas with surrounding blanks, "" being the empty list.
 */
export function parseValue(name: string, type: ConfigDataType, raw: string): ConfigValue {
  const trimmed = raw.trim();
  switch (type) {
    case 'boolean':
      if (trimmed.toLowerCase() === 'true') return true;
      if (trimmed.toLowerCase() === 'false') return false;
      throw ConfigException.invalid(name, raw, 'Expected value to be either true or false');
    case 'string':
    case 'class':
    case 'password':
      return trimmed;
    case 'int':
    case 'short': {
      const [lo, hi] = type === 'int' ? [INT_MIN, INT_MAX] : [SHORT_MIN, SHORT_MAX];
      if (!JAVA_INT.test(trimmed)) throw ConfigException.invalid(name, raw, `Not a number of type ${type.toUpperCase()}`);
      const n = Number(trimmed);
      if (n < lo || n > hi) throw ConfigException.invalid(name, raw, `Not a number of type ${type.toUpperCase()}`);
      return n;
    }
    case 'long': {
      if (!JAVA_INT.test(trimmed)) throw ConfigException.invalid(name, raw, 'Not a number of type LONG');
      const n = BigInt(trimmed);
      if (n < LONG_MIN || n > LONG_MAX) throw ConfigException.invalid(name, raw, 'Not a number of type LONG');
      return n;
    }
    case 'double': {
      if (!JAVA_DOUBLE.test(trimmed)) throw ConfigException.invalid(name, raw, 'Not a number of type DOUBLE');
      const s = trimmed.replace(/[fFdD]$/, '');
      return s.endsWith('NaN') ? NaN : Number(s);
    }
    case 'list':
      return trimmed.length === 0 ? [] : trimmed.split(LIST_SPLIT);
  }
}

/** Java's Double.toString / Integer.toString formatting, so "0.5", "1.0", "1.7976931348623157E308". */
export function javaNumberToString(n: number, type: 'int' | 'double'): string {
  if (type === 'int') return String(n);
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? 'Infinity' : '-Infinity';
  if (n === 0) return Object.is(n, -0) ? '-0.0' : '0.0';
  const abs = Math.abs(n);
  if (abs >= 1e-3 && abs < 1e7) {
    const s = String(n);
    return s.includes('.') ? s : s + '.0';
  }
  // Scientific: d.dddE[-]n, mantissa always with a fraction part.
  const [mant, exp] = n.toExponential().split('e');
  const m = mant.includes('.') ? mant : mant + '.0';
  return `${m}E${exp.startsWith('+') ? exp.slice(1) : exp}`;
}

/** ConfigDef.convertToString: the string DescribeConfigs reports for a typed value. */
export function formatValue(type: ConfigDataType | undefined, value: ConfigValue | null): string | null {
  if (value === null) return null;
  if (Array.isArray(value)) return value.join(',');
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number') return javaNumberToString(value, type === 'double' ? 'double' : 'int');
  return String(value);
}

/** One config key, as Kafka's ConfigDef.ConfigKey describes it. */
export interface ConfigKeyDef {
  name: string;
  type: ConfigDataType;
  /**
   * The default in properties-file form, parsed like a user value: a string, null for a null
   * default, or REQUIRED when the key has no default.
   */
  default: string | null | typeof REQUIRED;
  validator?: Validator;
  importance: Importance;
  /** Broker configs only; a topic config is always alterable (AlterConfigs on the topic). */
  updateMode?: UpdateMode;
  /** Our own one-line description. */
  doc: string;
  /** Kafka's defineInternal: accepted, but left out of docs and of DescribeConfigs unless set. */
  internal?: boolean;
}

export const REQUIRED: unique symbol = Symbol('REQUIRED');

/** Parses and validates one raw value for a key. null stays null (only allowed for null defaults). */
export function parseAndValidate(def: ConfigKeyDef, raw: string | null): ConfigValue | null {
  const value = raw === null ? null : parseValue(def.name, def.type, raw);
  if (def.validator && !(value === null && def.default === null)) def.validator.ensureValid(def.name, value);
  return value;
}
