/**
 * The metadata log on disk: `<metadata.log.dir>/__cluster_metadata-0`, a krill log in Kafka's
 * segment format whose record values are KRaft metadata records framed as Kafka frames them
 * (unsigned varint frame version 1, record type, record version, then the record). Each controller
 * append is one record batch, fsynced before `append` returns, so a committed change survives a
 * crash; loading runs the log's normal truncating recovery, so a torn last batch is dropped rather
 * than failing startup.
 */
import * as path from 'node:path';
import { Reader } from '../protocol/primitives/reader';
import { Writer } from '../protocol/primitives/writer';
import { splitBatches } from '../protocol/records/record-batch';
import { readRecords } from '../protocol/records/record';
import { buildRecordBatch } from '../protocol/records/memory-records-builder';
import { metadataRecordByType, type MetadataRecordInfo } from '../protocol/generated/records';
import { UnifiedLog } from '../storage/unified-log';
import { METADATA_TOPIC_NAME } from '../storage/log-manager';
import { logConfig } from '../storage/log-config';
import type { Logger } from '../common/logger';
import { MetadataRecordType, type MetadataRecord } from './metadata-records';
import type { MetadataBatch, MetadataLog, MetadataLogRead } from './metadata-log';

export const METADATA_TOPIC = METADATA_TOPIC_NAME;
export const METADATA_PARTITION_DIR = `${METADATA_TOPIC}-0`;
const FRAME_VERSION = 1;
const READ_CHUNK = 1 << 20;

const INFO_BY_NAME = new Map<string, MetadataRecordInfo>();
for (const [name, type] of Object.entries(MetadataRecordType)) {
  const info = metadataRecordByType(type);
  if (!info) throw new Error(`no generated codec for metadata record ${name}`);
  INFO_BY_NAME.set(name, info);
}

export function encodeMetadataRecord(rec: MetadataRecord): Buffer {
  const info = INFO_BY_NAME.get(rec.type)!;
  const w = new Writer(128);
  w.unsignedVarint(FRAME_VERSION).unsignedVarint(info.type).unsignedVarint(info.maxVersion);
  info.write(w, info.maxVersion, rec.data as never);
  return w.toBuffer();
}

/** Decodes a framed record; records of types krill does not use are skipped (null). */
export function decodeMetadataRecord(value: Buffer): MetadataRecord | null {
  const r = new Reader(value);
  const frame = r.unsignedVarint();
  if (frame !== FRAME_VERSION) throw new Error(`unknown metadata record frame version ${frame}`);
  const type = r.unsignedVarint();
  const version = r.unsignedVarint();
  const info = metadataRecordByType(type);
  if (!info || !INFO_BY_NAME.has(info.name)) return null;
  return { type: info.name, data: info.read(r, version) } as MetadataRecord;
}

/** One record batch holding `records` (offsets from `baseOffset`, leader epoch 0). */
export function encodeMetadataBatch(records: MetadataRecord[], baseOffset = 0n): Buffer {
  return buildRecordBatch(records.map((r) => ({ value: encodeMetadataRecord(r) })), { baseOffset, partitionLeaderEpoch: 0 });
}

/** Decodes the metadata records of every batch in `buf` (a Fetch response's record set). */
export function decodeMetadataBatches(buf: Buffer): MetadataBatch[] {
  const out: MetadataBatch[] = [];
  for (const batch of splitBatches(buf)) {
    const records: MetadataRecord[] = [];
    for (const rec of readRecords(batch)) {
      if (rec.value === null) continue;
      const decoded = decodeMetadataRecord(rec.value);
      if (decoded) records.push(decoded);
    }
    out.push({ records, lastOffset: batch.lastOffset });
  }
  return out;
}

export class MetadataLogStore implements MetadataLog {
  private readonly log: UnifiedLog;

  constructor(metadataLogDir: string, logger?: Logger) {
    this.log = UnifiedLog.load({
      dir: path.join(metadataLogDir, METADATA_PARTITION_DIR),
      tp: { topic: METADATA_TOPIC, partition: 0 },
      config: logConfig({ segmentBytes: 16 * 1024 * 1024 }),
      logger,
      // The metadata log is small: always re-verify all of it on load.
      hadCleanShutdown: false,
    });
    this.log.updateHighWatermark(this.log.logEndOffset);
  }

  readAll(): MetadataBatch[] {
    const out: MetadataBatch[] = [];
    let offset = this.log.logStartOffset;
    const end = this.log.logEndOffset;
    while (offset < end) {
      const data = this.log.read(offset, READ_CHUNK, { isolation: 'LOG_END', minOneMessage: true });
      if (data.sizeInBytes === 0) break;
      for (const chunk of data.records) {
        for (const b of decodeMetadataBatches(chunk)) {
          out.push(b);
          offset = b.lastOffset + 1n;
        }
      }
    }
    return out;
  }

  get logEndOffset(): bigint {
    return this.log.logEndOffset;
  }

  read(offset: bigint, maxBytes: number): MetadataLogRead {
    const data = this.log.read(offset, maxBytes, { isolation: 'LOG_END', minOneMessage: true });
    return { records: data.records, sizeInBytes: data.sizeInBytes };
  }

  append(records: MetadataRecord[]): bigint {
    const batch = buildRecordBatch(records.map((r) => ({ value: encodeMetadataRecord(r) })));
    const info = this.log.appendAsLeader(batch, { leaderEpoch: 0, origin: 'coordinator' });
    this.log.flush();
    this.log.updateHighWatermark(this.log.logEndOffset);
    return info.lastOffset;
  }

  close(): void {
    this.log.flush();
    this.log.close();
  }
}
