/**
 * The partition leader's side of transaction verification (Kafka's AddPartitionsToTxnManager,
 * KIP-890 part 1): before a transactional batch may start a transaction in a partition, the leader
 * asks the transactional id's coordinator, with AddPartitionsToTxn v4+ `verify_only`, whether the
 * partition was added to the producer's ongoing transaction. KIP-890 part 2 (Produce v12,
 * TxnOffsetCommit v5): the leader asks the coordinator to add the partition instead, with
 * AddPartitionsToTxn v5 and `verify_only` false; a coordinator without v5 cannot be asked
 * (NETWORK_EXCEPTION).
 *
 * Requests go over the Kafka protocol to the leader of the id's __transaction_state partition (this
 * broker included), one in flight per coordinator node; verifications queued meanwhile travel
 * together in the next request, one transaction entry per transactional id (a second verification
 * of the same id waits for the following request). A coordinator that cannot be found answers
 * COORDINATOR_NOT_AVAILABLE, one that cannot be reached (connection, timeout, no v4) NETWORK_EXCEPTION;
 * the produce path turns both into a retriable error for the client.
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import type { AddPartitionsToTxnResponse } from '../../protocol/generated/add-partitions-to-txn';
import type { MetadataCache } from '../../metadata/metadata-cache';
import { BrokerChannels } from '../../client/broker-channels';
import type { ClientSecurity } from '../../client/network-client';
import type { TransactionVerifier } from '../../replication/replica-manager';
import { TRANSACTION_STATE_TOPIC } from '../../config/kafka-config';
import type { Logger } from '../../common/logger';
import { partitionForGroup } from '../group/group-partition';
import { partitionsByTopic } from './transaction-metadata';
import { topicPartitionKey } from '../../common/topic-partition';

interface Verification {
  transactionalId: string;
  producerId: bigint;
  producerEpoch: number;
  partitions: { topic: string; partition: number }[];
  /** false: add the partitions to the transaction (KIP-890 part 2). */
  verifyOnly: boolean;
  resolve(answers: Map<string, number>): void;
}

export interface AddPartitionsToTxnManagerOptions {
  nodeId: number;
  metadata: MetadataCache;
  /** inter.broker.listener.name */
  listenerName: string;
  requestTimeoutMs: number;
  /** transaction.state.log.num.partitions (until __transaction_state exists; then its real count). */
  transactionLogNumPartitions: number;
  logger: Logger;
  /** TLS (and SASL) of the inter-broker listener, when it is secured. */
  security?: ClientSecurity;
}

export class AddPartitionsToTxnManager implements TransactionVerifier {
  private readonly channels: BrokerChannels;
  private readonly queues = new Map<number, Verification[]>();
  private readonly inFlight = new Set<number>();
  private closed = false;

  constructor(private readonly opts: AddPartitionsToTxnManagerOptions) {
    this.channels = new BrokerChannels(opts.metadata, opts.listenerName, {
      clientId: `krill-broker-${opts.nodeId}-txn-verification`,
      timeoutMs: Math.min(10_000, opts.requestTimeoutMs),
      requestTimeoutMs: opts.requestTimeoutMs,
      ...opts.security,
    });
  }

  verify(
    transactionalId: string,
    producerId: bigint,
    producerEpoch: number,
    partitions: { topic: string; partition: number }[],
    addPartitions = false,
  ): Promise<Map<string, number>> {
    const all = (code: number) => new Map(partitions.map((tp) => [topicPartitionKey(tp.topic, tp.partition), code]));
    if (this.closed) return Promise.resolve(all(ErrorCode.NETWORK_EXCEPTION));
    const md = this.opts.metadata;
    const topic = md.topic(TRANSACTION_STATE_TOPIC);
    const numPartitions = topic?.partitions.size || this.opts.transactionLogNumPartitions;
    const leader = topic?.partitions.get(partitionForGroup(transactionalId, numPartitions))?.leader ?? -1;
    const node = leader >= 0 ? md.broker(leader) : undefined;
    if (!node || node.fenced) return Promise.resolve(all(ErrorCode.COORDINATOR_NOT_AVAILABLE));
    return new Promise((resolve) => {
      let q = this.queues.get(leader);
      if (!q) this.queues.set(leader, (q = []));
      q.push({ transactionalId, producerId, producerEpoch, partitions, verifyOnly: !addPartitions, resolve });
      this.drain(leader);
    });
  }

  close(): void {
    this.closed = true;
    this.channels.close();
    for (const q of this.queues.values()) {
      for (const v of q) v.resolve(new Map(v.partitions.map((tp) => [topicPartitionKey(tp.topic, tp.partition), ErrorCode.NETWORK_EXCEPTION])));
    }
    this.queues.clear();
  }

  private drain(node: number): void {
    if (this.closed || this.inFlight.has(node)) return;
    const q = this.queues.get(node);
    if (!q || q.length === 0) return;
    const batch: Verification[] = [];
    const rest: Verification[] = [];
    const ids = new Set<string>();
    for (const v of q) {
      if (ids.has(v.transactionalId)) rest.push(v);
      else {
        ids.add(v.transactionalId);
        batch.push(v);
      }
    }
    this.queues.set(node, rest);
    this.inFlight.add(node);
    void this.send(node, batch).finally(() => {
      this.inFlight.delete(node);
      this.drain(node);
    });
  }

  private async send(node: number, batch: Verification[]): Promise<void> {
    const fail = (code: number) => {
      for (const v of batch) v.resolve(new Map(v.partitions.map((tp) => [topicPartitionKey(tp.topic, tp.partition), code])));
    };
    const ch = this.channels.channel(node);
    if (!ch) return fail(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    let res: AddPartitionsToTxnResponse;
    try {
      const version = await ch.versionFor('AddPartitionsToTxn');
      if (version < 4) {
        this.opts.logger.warn(`broker ${node} does not support AddPartitionsToTxn v4+; transactional writes cannot be verified`);
        return fail(ErrorCode.NETWORK_EXCEPTION);
      }
      if (version < 5 && batch.some((v) => !v.verifyOnly)) {
        // Only the verifications can go; the additions fail.
        this.opts.logger.warn(`broker ${node} does not support AddPartitionsToTxn v5; partitions cannot be added to transactions for Produce v12 / TxnOffsetCommit v5`);
        for (const v of batch) if (!v.verifyOnly) v.resolve(new Map(v.partitions.map((tp) => [topicPartitionKey(tp.topic, tp.partition), ErrorCode.NETWORK_EXCEPTION])));
        batch = batch.filter((v) => v.verifyOnly);
        if (batch.length === 0) return;
      }
      res = await ch.send('AddPartitionsToTxn', {
        transactions: batch.map((v) => {
          const byTopic = partitionsByTopic(v.partitions);
          return {
            transactionalId: v.transactionalId,
            producerId: v.producerId,
            producerEpoch: v.producerEpoch,
            verifyOnly: v.verifyOnly,
            topics: [...byTopic].map(([name, partitions]) => ({ name, partitions })),
          };
        }),
      });
    } catch (err) {
      if (!this.closed) this.opts.logger.info(`verifying transactions with broker ${node} failed: ${err instanceof Error ? err.message : String(err)}`);
      return fail(ErrorCode.NETWORK_EXCEPTION);
    }
    if (res.errorCode !== ErrorCode.NONE) {
      this.opts.logger.info(`AddPartitionsToTxn verification on broker ${node} answered ${errorName(res.errorCode)}`);
      return fail(res.errorCode);
    }
    for (const v of batch) {
      const answers = new Map<string, number>();
      const result = res.resultsByTransaction.find((r) => r.transactionalId === v.transactionalId);
      for (const t of result?.topicResults ?? []) for (const p of t.resultsByPartition) answers.set(topicPartitionKey(t.name, p.partitionIndex), p.partitionErrorCode);
      v.resolve(answers);
    }
  }
}
