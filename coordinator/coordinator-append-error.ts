/**
 * What a coordinator answers when its write to its own internal topic fails (Kafka's
 * appendGroupMetadataErrorToResponseError, the offset commit mapping, and TransactionStateManager's
 * appendTransactionToLog mapping share this shape): the client retries later on
 * COORDINATOR_NOT_AVAILABLE (the partition is there but cannot take the write now), looks the
 * coordinator up again on NOT_COORDINATOR (this broker no longer leads it, or its disk failed), and
 * gets `tooLarge` for a write that can never fit: UNKNOWN_SERVER_ERROR for group and transaction
 * state, INVALID_COMMIT_OFFSET_SIZE for offsets. Anything else passes through.
 */
import { ErrorCode } from '../protocol/errors';

export function coordinatorAppendError(code: number, tooLarge: number): number {
  switch (code) {
    case ErrorCode.UNKNOWN_TOPIC_OR_PARTITION:
    case ErrorCode.NOT_ENOUGH_REPLICAS:
    case ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case ErrorCode.REQUEST_TIMED_OUT:
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    case ErrorCode.NOT_LEADER_OR_FOLLOWER:
    case ErrorCode.KAFKA_STORAGE_ERROR:
      return ErrorCode.NOT_COORDINATOR;
    case ErrorCode.MESSAGE_TOO_LARGE:
    case ErrorCode.RECORD_LIST_TOO_LARGE:
    case ErrorCode.INVALID_FETCH_SIZE:
      return tooLarge;
    default:
      return code;
  }
}
