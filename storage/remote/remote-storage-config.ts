/**
 * Reading the plugin properties a RemoteStorageManager's configure() receives (the
 * `rsm.config.`-stripped keys, all strings) and the error a bad one raises.
 *
 * Owns: InvalidConfigurationError (Kafka's InvalidConfigurationException / ConfigException, with
 * ConfigException's message forms) and the typed getters the storage managers and their loader
 * share. storage/ may not import config/, so this mirrors config/config-types.ts's message forms
 * instead of using it.
 *
 * Invariants: a getter either returns a value of its type or throws InvalidConfigurationError
 * naming the key; booleans are Java's Boolean.parseBoolean (only "true", any case, is true) except
 * where strict parsing is asked for; nothing here does I/O.
 */

/** A bad plugin or loader config, named by its key (Kafka's ConfigException). */
export class InvalidConfigurationError extends Error {
  readonly configName?: string;
  constructor(message: string, configName?: string) {
    super(message);
    this.name = 'InvalidConfigurationError';
    this.configName = configName;
  }
  static invalid(name: string, value: unknown, reason: string): InvalidConfigurationError {
    return new InvalidConfigurationError(`Invalid value ${value === undefined || value === null ? 'null' : String(value)} for configuration ${name}: ${reason}`, name);
  }
  static missing(name: string): InvalidConfigurationError {
    return new InvalidConfigurationError(`Missing required configuration "${name}" which has no default value.`, name);
  }
}

export type PluginConfigs = Readonly<Record<string, string>>;

/** The trimmed value, or undefined when the key is absent. */
export function optionalString(configs: PluginConfigs, key: string): string | undefined {
  const v = configs[key];
  return v === undefined ? undefined : v.trim();
}

/** A value that must be present and non-empty (ConfigDef.NonEmptyString without a default). */
export function requiredString(configs: PluginConfigs, key: string): string {
  const v = optionalString(configs, key);
  if (v === undefined) throw InvalidConfigurationError.missing(key);
  if (v === '') throw InvalidConfigurationError.invalid(key, v, 'String must be non-empty');
  return v;
}

/** Java's Boolean.parseBoolean: "true" in any case is true, anything else false. */
export function lenientBoolean(configs: PluginConfigs, key: string, dflt: boolean): boolean {
  const v = optionalString(configs, key);
  return v === undefined ? dflt : v.toLowerCase() === 'true';
}

/** ConfigDef.Type.BOOLEAN: "true" or "false" (any case), undefined when absent. */
export function strictBoolean(configs: PluginConfigs, key: string): boolean | undefined {
  const v = optionalString(configs, key);
  if (v === undefined || v === '') return undefined;
  const l = v.toLowerCase();
  if (l === 'true') return true;
  if (l === 'false') return false;
  throw InvalidConfigurationError.invalid(key, v, 'Expected value to be either true or false');
}

/** ConfigDef.Type.INT within [min, max], undefined when absent. */
export function optionalInt(configs: PluginConfigs, key: string, min: number, max: number): number | undefined {
  const v = optionalString(configs, key);
  if (v === undefined) return undefined;
  if (!/^[+-]?\d+$/.test(v)) throw InvalidConfigurationError.invalid(key, v, 'Not a number of type INT');
  const n = Number(v);
  if (n < min) throw InvalidConfigurationError.invalid(key, v, `Value must be at least ${min}`);
  if (n > max) throw InvalidConfigurationError.invalid(key, v, `Value must be no more than ${max}`);
  return n;
}
