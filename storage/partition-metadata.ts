/**
 * `partition.metadata` in each partition directory, as Kafka writes it:
 *
 *     version: 0
 *     topic_id: <22-character base64url topic id>
 *
 * It ties the directory to one incarnation of the topic: a directory left over from a deleted topic
 * of the same name carries a different id, and the log manager refuses to reuse it.
 */
import * as path from 'node:path';
import { isUuid } from '../protocol/primitives/uuid';
import { StorageFs, writeFileAtomic } from './fs';
import { PARTITION_METADATA_FILE } from './log-file-utils';

export class CorruptPartitionMetadataError extends Error {
  constructor(file: string, detail: string) {
    super(`malformed partition metadata file ${file}: ${detail}`);
    this.name = 'CorruptPartitionMetadataError';
  }
}

export function partitionMetadataFile(logDir: string): string {
  return path.join(logDir, PARTITION_METADATA_FILE);
}

export function writePartitionMetadata(fs: StorageFs, logDir: string, topicId: string): void {
  if (!isUuid(topicId)) throw new Error(`invalid topic id ${JSON.stringify(topicId)}`);
  writeFileAtomic(fs, partitionMetadataFile(logDir), `version: 0\ntopic_id: ${topicId}\n`);
}

/** The topic id recorded in `logDir`, or undefined when there is no partition.metadata. */
export function readPartitionMetadata(fs: StorageFs, logDir: string): string | undefined {
  const file = partitionMetadataFile(logDir);
  if (!fs.existsSync(file)) return undefined;
  const lines = fs.readFileSync(file).toString('utf8').split('\n').filter((l) => l.trim() !== '');
  if (lines.length < 2) throw new CorruptPartitionMetadataError(file, 'expected a version and a topic_id line');
  const [vk, vv] = splitField(lines[0]);
  if (vk !== 'version' || vv !== '0') throw new CorruptPartitionMetadataError(file, `unsupported version line ${JSON.stringify(lines[0])}`);
  const [tk, tv] = splitField(lines[1]);
  if (tk !== 'topic_id' || !isUuid(tv)) throw new CorruptPartitionMetadataError(file, `bad topic_id line ${JSON.stringify(lines[1])}`);
  return tv;
}

function splitField(line: string): [string, string] {
  const i = line.indexOf(':');
  if (i < 0) return [line.trim(), ''];
  return [line.slice(0, i).trim(), line.slice(i + 1).trim()];
}
