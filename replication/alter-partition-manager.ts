/**
 * AlterPartitionManager: sends the ISR changes partition leaders propose to the controller, as
 * Kafka's DefaultAlterPartitionManager does: items wait in a queue, one AlterPartition request is
 * in flight at a time carrying everything queued, and each item's answer goes back to the
 * Partition that proposed it. Partitions themselves keep at most one change pending, so at most
 * one item per partition is ever queued or in flight.
 *
 * The request is the real API at the highest version both sides support: topic ids and member
 * broker epochs (v3), topic names before v2. A failed request (controller unreachable) fails its
 * items with REQUEST_TIMED_OUT; the Partition retries. Under a KRaft controller quorum the channel
 * is a ControllerChannel, which sends to the active controller (resending on NOT_CONTROLLER).
 */
import { ErrorCode } from '../protocol/errors';
import type { Logger } from '../common/logger';
import type { AlterPartitionItem, AlterPartitionOutcome } from './partition';
import type { ControllerRequestChannel } from '../metadata/controller-channel';

export type AlterPartitionTransport = (brokerId: number, brokerEpoch: bigint, items: AlterPartitionItem[]) => Promise<Map<AlterPartitionItem, AlterPartitionOutcome>>;

interface Queued {
  item: AlterPartitionItem;
  resolve: (o: AlterPartitionOutcome) => void;
}

export class AlterPartitionManager {
  private queue: Queued[] = [];
  private inFlight = false;
  /** How many AlterPartition requests were sent. */
  sentRequests = 0;

  constructor(
    private readonly brokerId: number,
    private readonly brokerEpoch: () => bigint,
    private readonly transport: AlterPartitionTransport,
    private readonly logger: Logger,
  ) {}

  submit(item: AlterPartitionItem): Promise<AlterPartitionOutcome> {
    return new Promise((resolve) => {
      this.queue.push({ item, resolve });
      this.maybeSend();
    });
  }

  private maybeSend(): void {
    if (this.inFlight || this.queue.length === 0) return;
    const batch = this.queue.splice(0);
    this.inFlight = true;
    this.sentRequests++;
    this.transport(this.brokerId, this.brokerEpoch(), batch.map((q) => q.item))
      .then(
        (outcomes) => {
          for (const q of batch) q.resolve(outcomes.get(q.item) ?? { ok: false, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR });
        },
        (err) => {
          this.logger.debug(`AlterPartition request failed: ${(err as Error).message}`);
          for (const q of batch) q.resolve({ ok: false, errorCode: ErrorCode.REQUEST_TIMED_OUT });
        },
      )
      .finally(() => {
        this.inFlight = false;
        this.maybeSend();
      });
  }
}

/** AlterPartition over the Kafka protocol to a remote controller. */
export function remoteAlterPartition(channel: ControllerRequestChannel): AlterPartitionTransport {
  return async (brokerId, brokerEpoch, items) => {
    const version = await channel.versionFor('AlterPartition');
    const byTopic = new Map<string, AlterPartitionItem[]>();
    for (const it of items) {
      const k = version >= 2 ? it.topicId : it.topic;
      const list = byTopic.get(k) ?? [];
      list.push(it);
      byTopic.set(k, list);
    }
    const res = await channel.send(
      'AlterPartition',
      {
        brokerId,
        brokerEpoch,
        topics: [...byTopic.entries()].map(([k, list]) => ({
          topicName: version < 2 ? k : undefined,
          topicId: version >= 2 ? k : undefined,
          partitions: list.map((it) => ({
            partitionIndex: it.partition,
            leaderEpoch: it.leaderEpoch,
            newIsr: version < 3 ? it.newIsr.map((b) => b.brokerId) : undefined,
            newIsrWithEpochs: version >= 3 ? it.newIsr : undefined,
            leaderRecoveryState: version >= 1 ? 0 : undefined,
            partitionEpoch: it.partitionEpoch,
          })),
        })),
      },
      { version },
    );
    const out = new Map<AlterPartitionItem, AlterPartitionOutcome>();
    for (const it of items) {
      if (res.errorCode !== ErrorCode.NONE) {
        out.set(it, { ok: false, errorCode: res.errorCode });
        continue;
      }
      const t = res.topics.find((x) => (version >= 2 ? x.topicId === it.topicId : x.topicName === it.topic));
      const p = t?.partitions.find((x) => x.partitionIndex === it.partition);
      if (!p) out.set(it, { ok: false, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR });
      else if (p.errorCode !== ErrorCode.NONE) out.set(it, { ok: false, errorCode: p.errorCode });
      else out.set(it, { ok: true, leaderEpoch: p.leaderEpoch, partitionEpoch: p.partitionEpoch, isr: p.isr });
    }
    return out;
  };
}
