/**
 * `--add-scram` (the `scramCredentials` option of startBroker / launch): SCRAM credentials written
 * to the metadata log when a fresh node starts, as `kafka-storage format --add-scram` writes them
 * into the bootstrap metadata. The argument syntax and every message are Kafka's ScramParser's:
 *
 *   SCRAM-SHA-256=[name=alice,password=alice-secret]
 *   SCRAM-SHA-512=[name=alice,iterations=8192,salt="N3E=",saltedpassword="YCE="]
 *
 * - the mechanism is SCRAM-SHA-256 or SCRAM-SHA-512; the configuration is a bracketed, comma
 *   separated list of key=value (a value in double quotes loses them; a key given twice keeps its
 *   last value);
 * - `name` is required; `password`, or `saltedpassword` (base64) together with `salt` (base64);
 *   `iterations` defaults to 4096 and must lie in 4096..16384; `salt` defaults to Kafka's random
 *   salt (the UTF-8 bytes of 130 random bits in base 36); any other key is an error.
 * `parseScramArgument` checks the syntax without any hashing (the CLI rejects a bad argument before
 * starting); `scramCredentialRecords` salts the passwords and yields UserScramCredentialRecords.
 * Invariant: a parsed argument always produces a valid record (the controller would accept it).
 */
import {
  saltedPassword,
  scramCredentialRecord,
  scramMechanismByName,
  secureRandomString,
  type ScramMechanismInfo,
} from '../../../metadata/controller/scram-control-manager';
import type { MetadataRecord } from '../../../metadata/metadata-records';

/** Kafka's FormatterException: a bad --add-scram argument. */
export class ScramArgumentError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ScramArgumentError';
  }
}

/** One parsed --add-scram argument. */
export interface ScramArgument {
  mechanism: ScramMechanismInfo;
  name: string;
  salt: Buffer | null;
  iterations: number;
  password: string | null;
  saltedPassword: Buffer | null;
}

const DEFAULT_ITERATIONS = 4096;

/** Java's String.split(","): trailing empty strings are dropped. */
function javaSplit(s: string, sep: string): string[] {
  const parts = s.split(sep);
  while (parts.length > 1 && parts[parts.length - 1] === '') parts.pop();
  if (parts.length === 1 && parts[0] === '' && s !== '') return [];
  return parts;
}

/** Java's Base64.getDecoder().decode: standard alphabet, padding optional, nothing else. */
function decodeBase64Strict(s: string): Buffer | null {
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}(?:==)?|[A-Za-z0-9+/]{3}=?)?$/.test(s)) return null;
  return Buffer.from(s, 'base64');
}

/** Java's Integer.parseInt. */
function parseJavaInt(s: string): number | null {
  if (!/^[+-]?\d+$/.test(s)) return null;
  const n = Number(s);
  return n >= -2147483648 && n <= 2147483647 ? n : null;
}

/** Kafka's splitTrimmedConfigStringComponent: key up to the first '=', the value without surrounding double quotes. */
function splitComponent(input: string): [string, string] {
  const i = input.indexOf('=');
  if (i < 0) throw new ScramArgumentError(`No equals sign found in SCRAM component: ${input}`);
  let value = input.slice(i + 1);
  if (value.length >= 2 && value.startsWith('"') && value.endsWith('"')) value = value.slice(1, -1);
  return [input.slice(0, i), value];
}

export function parseScramArgument(argument: string): ScramArgument {
  const input = argument.trim();
  const eq = input.indexOf('=');
  if (eq < 0) throw new ScramArgumentError(`Failed to find equals sign in SCRAM argument '${input}'`);
  const mechanismString = input.slice(0, eq);
  const configString = input.slice(eq + 1);
  const mechanism = scramMechanismByName(mechanismString);
  if (!mechanism) throw new ScramArgumentError(`The add-scram mechanism ${mechanismString} is not supported.`);
  if (!configString.startsWith('[')) throw new ScramArgumentError('Expected configuration string to start with [');
  if (!configString.endsWith(']')) throw new ScramArgumentError('Expected configuration string to end with ]');
  const components = new Map<string, string>();
  for (const c of javaSplit(configString.slice(1, -1), ',')) {
    const [k, v] = splitComponent(c);
    components.set(k, v);
  }
  const take = (k: string): string | undefined => {
    const v = components.get(k);
    components.delete(k);
    return v;
  };
  const name = take('name');
  if (name === undefined) throw new ScramArgumentError("You must supply 'name' to add-scram");
  const saltString = take('salt');
  let salt: Buffer | null = null;
  if (saltString !== undefined) {
    salt = decodeBase64Strict(saltString);
    if (!salt) throw new ScramArgumentError(`Failed to decode given salt: ${saltString}`);
  }
  const iterationsString = take('iterations');
  let iterations = DEFAULT_ITERATIONS;
  if (iterationsString !== undefined) {
    const n = parseJavaInt(iterationsString);
    if (n === null) throw new ScramArgumentError(`Failed to parse iterations count: ${iterationsString}`);
    iterations = n;
  }
  const password = take('password');
  const saltedPasswordString = take('saltedpassword');
  let salted: Buffer | null = null;
  if (password === undefined) {
    if (saltedPasswordString === undefined) throw new ScramArgumentError("You must supply one of 'password' or 'saltedpassword' to add-scram");
    if (!salt) throw new ScramArgumentError("You must supply 'salt' with 'saltedpassword' to add-scram");
    salted = decodeBase64Strict(saltedPasswordString);
    if (!salted) throw new ScramArgumentError(`Failed to decode given saltedPassword: ${saltedPasswordString}`);
    // Kafka's HMAC cannot take an empty key (Java's SecretKeySpec: "Empty key"), so format fails.
    if (salted.length === 0) throw new ScramArgumentError('Empty key');
  }
  if (components.size > 0) throw new ScramArgumentError(`Unknown SCRAM configurations: ${[...components.keys()].sort().join(', ')}`);
  if (iterations < mechanism.minIterations) {
    throw new ScramArgumentError(`The 'iterations' value must be >= ${mechanism.minIterations} for add-scram using ${mechanism.javaName}`);
  }
  if (iterations > mechanism.maxIterations) {
    throw new ScramArgumentError(`The 'iterations' value must be <= ${mechanism.maxIterations} for add-scram using ${mechanism.javaName}`);
  }
  return { mechanism, name, salt, iterations, password: password ?? null, saltedPassword: salted };
}

/** The UserScramCredentialRecords for `arguments` in order (a random salt where none is given). Throws ScramArgumentError. */
export function scramCredentialRecords(args: readonly string[]): MetadataRecord[] {
  return args.map((a) => {
    const p = parseScramArgument(a);
    const salt = p.salt ?? Buffer.from(secureRandomString(), 'utf8');
    const salted = p.saltedPassword ?? saltedPassword(p.mechanism, p.password!, salt, p.iterations);
    return { type: 'UserScramCredentialRecord', data: scramCredentialRecord(p.mechanism, p.name, salt, salted, p.iterations) };
  });
}
