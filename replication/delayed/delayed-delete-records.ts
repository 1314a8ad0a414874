/**
 * A DeleteRecords waiting for the replicas (Kafka's DelayedDeleteRecords): the leader moved its log
 * start offset at once, and the request is answered when, for every partition that was accepted,
 * the low watermark (the smallest log start offset over the leader and its alive followers) has
 * reached the requested offset, or the partition failed meanwhile (no longer led here, gone,
 * offline), or timeout_ms passed.
 *
 * Invariants: a partition that failed before parking keeps its error and is never waited for; a
 * waiting partition reads REQUEST_TIMED_OUT with the low watermark it had when the request was
 * accepted until it is satisfied, so a timeout answers exactly that; the operation completes once
 * (DelayedOperation), woken by checkAndComplete on the partition's key (a follower's new log start
 * offset, a leadership or topic change), never by polling.
 */
import { ErrorCode } from '../../protocol/errors';
import { DelayedOperation } from './purgatory';

export interface DeleteRecordsPartitionStatus {
  topic: string;
  partition: number;
  /** The offset every alive replica's log start must reach (the high watermark for -1). */
  requiredOffset: bigint;
  errorCode: number;
  lowWatermark: bigint;
  /** Still waiting for replicas. */
  acksPending?: boolean;
}

/** The partition's low watermark now, or the error that ends the wait for it. */
export type LowWatermarkProbe = (topic: string, partition: number) => { lowWatermark: bigint } | { errorCode: number };

export class DelayedDeleteRecords extends DelayedOperation {
  constructor(
    timeoutMs: number,
    private readonly status: DeleteRecordsPartitionStatus[],
    private readonly probe: LowWatermarkProbe,
    private readonly done: (status: DeleteRecordsPartitionStatus[]) => void,
  ) {
    super(timeoutMs);
    for (const s of status) {
      if (s.errorCode === ErrorCode.NONE) {
        // Cleared when the replicas catch up.
        s.acksPending = true;
        s.errorCode = ErrorCode.REQUEST_TIMED_OUT;
      } else {
        s.acksPending = false;
      }
    }
  }

  tryComplete(): boolean {
    for (const s of this.status) {
      if (!s.acksPending) continue;
      const now = this.probe(s.topic, s.partition);
      if ('errorCode' in now) {
        s.acksPending = false;
        s.errorCode = now.errorCode;
        s.lowWatermark = -1n;
      } else if (now.lowWatermark >= s.requiredOffset) {
        s.acksPending = false;
        s.errorCode = ErrorCode.NONE;
        s.lowWatermark = now.lowWatermark;
      }
    }
    return this.status.some((s) => s.acksPending) ? false : this.forceComplete();
  }

  protected onComplete(): void {
    this.done(this.status);
  }
}
