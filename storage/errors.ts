/**
 * The typed errors the storage layer raises. The KafkaErrors carry the error code of the request
 * they fail; CorruptIndexError never leaves storage: an index that fails its sanity check or does
 * not decode is rebuilt from the log.
 */
import { ErrorCode, KafkaError } from '../protocol/errors';

/** KAFKA_STORAGE_ERROR: the log's directory failed (or is failing) an I/O call; the log is offline. */
export class KafkaStorageError extends KafkaError {
  constructor(message: string, override readonly cause?: unknown) {
    super(ErrorCode.KAFKA_STORAGE_ERROR, message);
    this.name = 'KafkaStorageError';
  }
}

/** A follower append whose first offset is below the log end offset (the fetcher must truncate). */
export class UnexpectedAppendOffsetError extends KafkaError {
  constructor(
    message: string,
    readonly firstOffset: bigint,
    readonly lastOffset: bigint,
  ) {
    super(ErrorCode.UNKNOWN_SERVER_ERROR, message);
    this.name = 'UnexpectedAppendOffsetError';
  }
}

/** Offsets inside a follower append that do not increase. */
export class OffsetsOutOfOrderError extends KafkaError {
  constructor(message: string) {
    super(ErrorCode.UNKNOWN_SERVER_ERROR, message);
    this.name = 'OffsetsOutOfOrderError';
  }
}

/** An index file that fails its sanity check; the loader rebuilds it from the log. */
export class CorruptIndexError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CorruptIndexError';
  }
}
