/**
 * Where the controller keeps the cluster metadata: an append-only log of metadata records. Each
 * append is one atomic batch that is durable when `append` returns. The storage-backed
 * implementation lives in metadata-log-store.ts; `InMemoryMetadataLog` serves unit tests.
 */
import type { MetadataRecord } from '../metadata-records';

export interface MetadataBatch {
  records: MetadataRecord[];
  lastOffset: bigint;
}

export interface MetadataLog {
  /** Every batch in the log, oldest first (replayed at startup). */
  readAll(): MetadataBatch[];
  /** Appends the records as one batch and makes it durable; returns the batch's last offset. */
  append(records: MetadataRecord[]): bigint;
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

  close(): void {}
}
