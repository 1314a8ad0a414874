/**
 * `meta.properties` at the root of each log directory, in the KRaft form Kafka writes:
 *
 *     #
 *     #<date>
 *     node.id=1
 *     directory.id=<base64url uuid>
 *     version=1
 *     cluster.id=<cluster id>
 *
 * It says which cluster and node a directory belongs to; a directory of another cluster or node
 * must not be used (Kafka refuses to start). directory.id identifies the directory itself (JBOD).
 */
import * as path from 'node:path';
import { randomUuid } from '../protocol/primitives/uuid';
import { StorageFs, writeFileAtomic } from './fs';
import { META_PROPERTIES_FILE } from './log-file-utils';

export interface MetaProperties {
  version: number;
  nodeId: number;
  clusterId: string;
  directoryId: string;
}

export class MetaPropertiesError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MetaPropertiesError';
  }
}

export function metaPropertiesFile(logDir: string): string {
  return path.join(logDir, META_PROPERTIES_FILE);
}

/** Java Properties subset: `key=value` or `key: value` lines, `#`/`!` comments. */
export function parseProperties(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    const m = /^([^=:\s]+)\s*[=:]\s*(.*)$/.exec(line);
    if (m) out.set(m[1], m[2]);
  }
  return out;
}

export function readMetaProperties(fs: StorageFs, logDir: string): MetaProperties | undefined {
  const file = metaPropertiesFile(logDir);
  if (!fs.existsSync(file)) return undefined;
  const props = parseProperties(fs.readFileSync(file).toString('utf8'));
  const version = Number(props.get('version'));
  if (version !== 1 && version !== 0) throw new MetaPropertiesError(`${file}: unsupported version ${props.get('version')}`);
  const nodeText = props.get('node.id') ?? props.get('broker.id');
  const nodeId = Number(nodeText);
  if (nodeText === undefined || !Number.isInteger(nodeId)) throw new MetaPropertiesError(`${file}: missing or bad node.id`);
  const clusterId = props.get('cluster.id');
  if (!clusterId) throw new MetaPropertiesError(`${file}: missing cluster.id`);
  return { version, nodeId, clusterId, directoryId: props.get('directory.id') ?? '' };
}

export function writeMetaProperties(fs: StorageFs, logDir: string, meta: MetaProperties): void {
  const text =
    `#\n#${new Date().toUTCString()}\n` +
    `node.id=${meta.nodeId}\n` +
    (meta.directoryId ? `directory.id=${meta.directoryId}\n` : '') +
    `version=${meta.version}\n` +
    `cluster.id=${meta.clusterId}\n`;
  writeFileAtomic(fs, metaPropertiesFile(logDir), text);
}

/**
 * Makes sure `logDir` belongs to this cluster and node: writes meta.properties if absent (with a
 * fresh directory.id), throws MetaPropertiesError on a mismatch. Returns the directory's properties.
 */
export function ensureMetaProperties(fs: StorageFs, logDir: string, nodeId: number, clusterId: string): MetaProperties {
  const existing = readMetaProperties(fs, logDir);
  if (!existing) {
    const meta: MetaProperties = { version: 1, nodeId, clusterId, directoryId: randomUuid() };
    writeMetaProperties(fs, logDir, meta);
    return meta;
  }
  if (existing.clusterId !== clusterId) {
    throw new MetaPropertiesError(
      `the cluster id ${clusterId} does not match the cluster id ${existing.clusterId} stored in ${metaPropertiesFile(logDir)}`,
    );
  }
  if (existing.nodeId !== nodeId) {
    throw new MetaPropertiesError(`the node id ${nodeId} does not match the node id ${existing.nodeId} stored in ${metaPropertiesFile(logDir)}`);
  }
  if (!existing.directoryId) {
    const upgraded = { ...existing, version: 1, directoryId: randomUuid() };
    writeMetaProperties(fs, logDir, upgraded);
    return upgraded;
  }
  return existing;
}
