/**
 * Where the controller keeps the cluster metadata: an append-only log of metadata records. Each
 * append is one atomic batch that is durable when `append` returns. The storage-backed
 * implementation lives in metadata-log-store.ts; `InMemoryMetadataLog` serves unit tests.
 */
import type { MetadataRecord } from './metadata-records';
import { encodeMetadataBatch } from './metadata-log-store';

/** Raw record batches of the log, as a Fetch response carries them. */
export interface MetadataLogRead {
  records: Buffer[];
  sizeInBytes: number;
}

export interface MetadataBatch {
  records: MetadataRecord[];
  lastOffset: bigint;
}

export interface MetadataLog {
  /** Every batch in the log, oldest first (replayed at startup). */
  readAll(): MetadataBatch[];
  /** Appends the records as one batch and makes it durable; returns the batch's last offset. */
  append(records: MetadataRecord[]): bigint;
  /** The offset the next batch will get. */
  readonly logEndOffset: bigint;
  /** Whole batches from the one holding `offset`, at least one, about `maxBytes` (brokers fetch the log). */
  read(offset: bigint, maxBytes: number): MetadataLogRead;
  close(): void;
}

export class InMemoryMetadataLog implements MetadataLog {
  private batches: MetadataBatch[] = [];
  private nextOffset = 0n;

  readAll(): MetadataBatch[] {
    return this.batches.map((b) => ({ records: [...b.records], lastOffset: b.lastOffset }));
  }

  append(records: MetadataRecord[]): bigint {
    this.nextOffset += BigInt(records.length);
    const lastOffset = this.nextOffset - 1n;
    this.batches.push({ records: [...records], lastOffset });
    return lastOffset;
  }

  get logEndOffset(): bigint {
    return this.nextOffset;
  }

  read(offset: bigint, maxBytes: number): MetadataLogRead {
    const records: Buffer[] = [];
    let size = 0;
    for (const b of this.batches) {
      if (b.lastOffset < offset) continue;
      const firstOffset = b.lastOffset - BigInt(b.records.length) + 1n;
      const buf = encodeMetadataBatch(b.records, firstOffset);
      if (size > 0 && size + buf.length > maxBytes) break;
      records.push(buf);
      size += buf.length;
    }
    return { records, sizeInBytes: size };
  }

  close(): void {}
}
