/**
 * Picks and configures the broker's RemoteStorageManager from its configs, as Kafka's
 * RemoteLogManager does (createRemoteStorageManager + configureRSM).
 *
 * Owns: the mapping of `remote.log.storage.manager.class.name` to an implementation, and the
 * plugin properties handed to configure().
 * - `org.apache.kafka.server.log.remote.storage.LocalTieredStorage` -> local-tiered-storage.ts;
 * - `io.aiven.kafka.tieredstorage.RemoteStorageManager` with `<prefix>storage.backend.class` =
 *   `io.aiven.kafka.tieredstorage.storage.s3.S3Storage` -> s3-remote-storage-manager.ts;
 * - a path to a JS module (absolute, or `./`/`../` relative to the working directory) or a module
 *   name Node resolves from there, optionally `#<export>`: its export (`<export>`, else the
 *   default export, else module.exports) is a class (constructed with no arguments) or a factory
 *   function (called with no arguments, may return a promise) giving the RSM;
 * - anything else, or an export that is not an RSM: InvalidConfigurationError naming the key.
 * `remote.log.storage.manager.class.path` (a Java class path) is ignored with an info line.
 * configure() receives the broker configs under `remote.log.storage.manager.impl.prefix` (default
 * `rsm.config.`) with the prefix stripped, plus `broker.id`, as Kafka's configureRSM adds it.
 *
 * Invariants: the SDK of the S3 manager is loaded only when that manager is configured; a custom
 * module is loaded only when named; every refusal names the config key it is about.
 */
import * as path from 'node:path';
import type { Logger } from '../../common/logger';
import { LOCAL_TIERED_STORAGE_CLASS_NAME, LocalTieredStorage } from './local-tiered-storage';
import type { RemoteStorageManager } from './remote-storage-manager';
import { InvalidConfigurationError } from './remote-storage-config';
import {
  AIVEN_REMOTE_STORAGE_MANAGER_CLASS_NAME,
  AIVEN_S3_STORAGE_BACKEND_CLASS_NAME,
  S3_CONFIGS,
  S3RemoteStorageManager,
} from './s3-remote-storage-manager';

export const REMOTE_STORAGE_MANAGER_CLASS_NAME_PROP = 'remote.log.storage.manager.class.name';
export const REMOTE_STORAGE_MANAGER_CLASS_PATH_PROP = 'remote.log.storage.manager.class.path';
export const REMOTE_STORAGE_MANAGER_CONFIG_PREFIX_PROP = 'remote.log.storage.manager.impl.prefix';
export const DEFAULT_REMOTE_STORAGE_MANAGER_CONFIG_PREFIX = 'rsm.config.';

export type BrokerConfigs = ReadonlyMap<string, string> | Readonly<Record<string, string>>;

export interface RemoteStorageManagerLoaderOptions {
  /** This broker's id, passed to configure() as `broker.id`. */
  brokerId: number;
  logger?: Logger;
  /** Where relative module paths and module names are resolved from (default: the working directory). */
  baseDir?: string;
}

export interface CreatedRemoteStorageManager {
  manager: RemoteStorageManager;
  /** What `remote.log.storage.manager.class.name` said. */
  className: string;
  /** What configure() is to receive. */
  configs: Record<string, string>;
}

const RSM_METHODS = ['configure', 'copyLogSegmentData', 'fetchLogSegment', 'fetchIndex', 'deleteLogSegmentData', 'close'] as const;

function get(configs: BrokerConfigs, key: string): string | undefined {
  return configs instanceof Map ? configs.get(key) : (configs as Readonly<Record<string, string>>)[key];
}

function entries(configs: BrokerConfigs): [string, string][] {
  return configs instanceof Map ? [...configs.entries()] : Object.entries(configs);
}

/** The `remote.log.storage.manager.impl.prefix` in force (Kafka's NonEmptyString, default rsm.config.). */
export function remoteStorageManagerConfigPrefix(configs: BrokerConfigs): string {
  const p = get(configs, REMOTE_STORAGE_MANAGER_CONFIG_PREFIX_PROP);
  if (p === undefined) return DEFAULT_REMOTE_STORAGE_MANAGER_CONFIG_PREFIX;
  if (p.trim() === '') throw InvalidConfigurationError.invalid(REMOTE_STORAGE_MANAGER_CONFIG_PREFIX_PROP, p, 'String must be non-empty');
  return p;
}

/** The properties configure() receives: the prefixed broker configs, prefix stripped, and broker.id (Kafka's remoteStorageManagerProps + configureRSM). */
export function remoteStorageManagerConfigs(configs: BrokerConfigs, brokerId: number): Record<string, string> {
  const prefix = remoteStorageManagerConfigPrefix(configs);
  const out: Record<string, string> = {};
  for (const [k, v] of entries(configs)) if (k.startsWith(prefix) && k.length > prefix.length) out[k.slice(prefix.length)] = v;
  out['broker.id'] = String(brokerId);
  return out;
}

function looksLikePath(name: string): boolean {
  return path.isAbsolute(name) || name.startsWith('./') || name.startsWith('../') || name.startsWith('.\\') || name.startsWith('..\\');
}

/** A Java class name (`a.b.C`), which krill cannot load. */
function looksLikeJavaClass(name: string): boolean {
  return /^[A-Za-z_$][\w$]*(\.[A-Za-z_$][\w$]*)+$/.test(name) && /\.[A-Z][\w$]*$/.test(name);
}

function isRsm(x: unknown): x is RemoteStorageManager {
  return typeof x === 'object' && x !== null && RSM_METHODS.every((m) => typeof (x as Record<string, unknown>)[m] === 'function');
}

async function fromModule(spec: string, opts: RemoteStorageManagerLoaderOptions): Promise<RemoteStorageManager> {
  const key = REMOTE_STORAGE_MANAGER_CLASS_NAME_PROP;
  const hash = spec.lastIndexOf('#');
  const moduleName = hash > 0 ? spec.slice(0, hash) : spec;
  const exportName = hash > 0 ? spec.slice(hash + 1) : undefined;
  const base = opts.baseDir ?? process.cwd();
  let resolved: string;
  try {
    resolved = looksLikePath(moduleName) ? require.resolve(path.resolve(base, moduleName)) : require.resolve(moduleName, { paths: [base] });
  } catch (e) {
    const hint = looksLikeJavaClass(moduleName)
      ? `a Java class krill cannot load; krill runs ${LOCAL_TIERED_STORAGE_CLASS_NAME}, ${AIVEN_REMOTE_STORAGE_MANAGER_CLASS_NAME} (S3 backend) or a JavaScript module (a path or a module name)`
      : `no JavaScript module ${moduleName} found from ${base}: ${(e as Error).message.split('\n')[0]}`;
    throw InvalidConfigurationError.invalid(key, spec, hint);
  }
  let mod: Record<string, unknown>;
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    mod = require(resolved) as Record<string, unknown>;
  } catch (e) {
    throw InvalidConfigurationError.invalid(key, spec, `loading ${resolved} failed: ${(e as Error).message}`);
  }
  const exported = exportName !== undefined ? mod[exportName] : (mod.default ?? mod);
  if (typeof exported !== 'function') {
    throw InvalidConfigurationError.invalid(key, spec, `${resolved} exports ${exportName ?? 'default'} as ${typeof exported}, not a RemoteStorageManager class or factory`);
  }
  const f = exported as { prototype?: unknown } & ((...a: unknown[]) => unknown);
  const proto = f.prototype as Record<string, unknown> | undefined;
  let instance: unknown;
  try {
    instance = proto !== undefined && typeof proto.copyLogSegmentData === 'function' ? new (f as unknown as new () => unknown)() : await f();
  } catch (e) {
    throw InvalidConfigurationError.invalid(key, spec, `creating the RemoteStorageManager failed: ${(e as Error).message}`);
  }
  if (!isRsm(instance)) {
    throw InvalidConfigurationError.invalid(key, spec, `${resolved} did not give a RemoteStorageManager (missing ${RSM_METHODS.filter((m) => typeof (instance as Record<string, unknown> | null)?.[m] !== 'function').join(', ')})`);
  }
  return instance;
}

/** Creates (does not configure) the RemoteStorageManager the broker configs name. */
export async function createRemoteStorageManager(configs: BrokerConfigs, opts: RemoteStorageManagerLoaderOptions): Promise<CreatedRemoteStorageManager> {
  const key = REMOTE_STORAGE_MANAGER_CLASS_NAME_PROP;
  const className = get(configs, key)?.trim();
  if (className === undefined || className === '') throw InvalidConfigurationError.missing(key);
  const classPath = get(configs, REMOTE_STORAGE_MANAGER_CLASS_PATH_PROP);
  if (classPath !== undefined && classPath.trim() !== '') {
    opts.logger?.info(`${REMOTE_STORAGE_MANAGER_CLASS_PATH_PROP}=${classPath} ignored: krill loads JavaScript modules, resolved by ${key} itself`);
  }
  const rsmConfigs = remoteStorageManagerConfigs(configs, opts.brokerId);
  const logger = opts.logger;
  let manager: RemoteStorageManager;
  if (className === LOCAL_TIERED_STORAGE_CLASS_NAME) {
    manager = new LocalTieredStorage({ logger: logger?.child(LOCAL_TIERED_STORAGE_CLASS_NAME) });
  } else if (className === AIVEN_REMOTE_STORAGE_MANAGER_CLASS_NAME) {
    const prefix = remoteStorageManagerConfigPrefix(configs);
    const backend = rsmConfigs[S3_CONFIGS.STORAGE_BACKEND_CLASS]?.trim();
    if (backend === undefined || backend === '') throw InvalidConfigurationError.missing(prefix + S3_CONFIGS.STORAGE_BACKEND_CLASS);
    if (backend !== AIVEN_S3_STORAGE_BACKEND_CLASS_NAME) {
      throw InvalidConfigurationError.invalid(prefix + S3_CONFIGS.STORAGE_BACKEND_CLASS, backend, `krill implements Aiven's RemoteStorageManager with the ${AIVEN_S3_STORAGE_BACKEND_CLASS_NAME} backend only`);
    }
    manager = new S3RemoteStorageManager({ logger: logger?.child('io.aiven.kafka.tieredstorage.storage.s3.S3Storage') });
  } else {
    manager = await fromModule(className, opts);
  }
  logger?.info(`remote storage manager: ${className}`);
  return { manager, className, configs: rsmConfigs };
}

/** Creates the RemoteStorageManager the broker configs name and configures it (what the RemoteLogManager does at startup). */
export async function loadRemoteStorageManager(configs: BrokerConfigs, opts: RemoteStorageManagerLoaderOptions): Promise<RemoteStorageManager> {
  const created = await createRemoteStorageManager(configs, opts);
  await created.manager.configure(created.configs);
  return created.manager;
}
