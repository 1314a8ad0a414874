/**
 * Kafka's offset checkpoint files (recovery-point-offset-checkpoint, log-start-offset-checkpoint,
 * replication-offset-checkpoint): plain text,
 *
 *     0                      <- version
 *     2                      <- number of entries
 *     my-topic 0 1234        <- topic partition offset
 *     my-topic 1 99
 *
 * Writes are atomic (temp file, fsync, rename, fsync directory), so a crash leaves the old file or
 * the new one. A file that does not parse is reported as CorruptCheckpointError; callers fall back
 * (a corrupt recovery point means full recovery, never a failed startup).
 */
import { StorageFs, writeFileAtomic } from '../fs';
import { TopicPartition, topicPartitionKey } from '../../common/topic-partition';

export const CHECKPOINT_VERSION = 0;

export class CorruptCheckpointError extends Error {
  constructor(
    readonly file: string,
    detail: string,
  ) {
    super(`malformed checkpoint file ${file}: ${detail}`);
    this.name = 'CorruptCheckpointError';
  }
}

export interface CheckpointEntry {
  tp: TopicPartition;
  offset: bigint;
}

export class OffsetCheckpointFile {
  constructor(
    private readonly fs: StorageFs,
    readonly file: string,
  ) {}

  write(entries: Iterable<CheckpointEntry>): void {
    const list = [...entries];
    const lines = [String(CHECKPOINT_VERSION), String(list.length)];
    for (const e of list) {
      if (/\s/.test(e.tp.topic)) throw new Error(`topic name ${JSON.stringify(e.tp.topic)} cannot be checkpointed`);
      lines.push(`${e.tp.topic} ${e.tp.partition} ${e.offset}`);
    }
    writeFileAtomic(this.fs, this.file, lines.join('\n') + '\n');
  }

  /** Entries keyed by topicPartitionKey; an empty map if the file does not exist. */
  read(): Map<string, CheckpointEntry> {
    const out = new Map<string, CheckpointEntry>();
    if (!this.fs.existsSync(this.file)) return out;
    const text = this.fs.readFileSync(this.file).toString('utf8');
    const lines = text.split('\n');
    if (lines.length > 0 && lines[lines.length - 1] === '') lines.pop();
    if (lines.length < 2) throw new CorruptCheckpointError(this.file, 'missing version or count line');
    if (lines[0].trim() !== String(CHECKPOINT_VERSION)) {
      throw new CorruptCheckpointError(this.file, `unrecognized version ${JSON.stringify(lines[0])}`);
    }
    const countText = lines[1].trim();
    if (!/^\d+$/.test(countText)) throw new CorruptCheckpointError(this.file, `bad entry count ${JSON.stringify(lines[1])}`);
    const count = Number(countText);
    if (lines.length - 2 !== count) {
      throw new CorruptCheckpointError(this.file, `expected ${count} entries, found ${lines.length - 2} lines`);
    }
    for (let i = 2; i < lines.length; i++) {
      const parts = lines[i].trim().split(/\s+/);
      if (parts.length !== 3 || !/^\d+$/.test(parts[1]) || !/^-?\d+$/.test(parts[2])) {
        throw new CorruptCheckpointError(this.file, `bad entry on line ${i + 1}: ${JSON.stringify(lines[i])}`);
      }
      const tp = { topic: parts[0], partition: Number(parts[1]) };
      out.set(topicPartitionKey(tp.topic, tp.partition), { tp, offset: BigInt(parts[2]) });
    }
    return out;
  }
}
