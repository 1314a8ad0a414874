/**
 * Test support for tiered storage: an embedded broker with remote.log.storage.system.enable, the
 * file-system storage manager Kafka's tests use (LocalTieredStorage) in a temp dir, short task and
 * retention intervals; a tiered topic with small segments and no local retention to speak of; and
 * a wait until the broker has moved a partition's old segments to remote storage.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { connect } from '../../client/network-client';
import { createTopic } from '../recovery/helpers';
import { waitFor } from '../replication/helpers';
import type { Kafka } from 'kafkajs';
import { disconnectAll } from '../helpers/kafkajs';

export const LOCAL_TIERED_STORAGE = 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage';

const dirs: string[] = [];
export function remoteDir(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-remote-'));
  dirs.push(d);
  return d;
}
export function removeRemoteDirs(): void {
  for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

/** The broker configs of a tiered broker (a Kafka server.properties would say the same). */
export function tieredConfig(extra: Record<string, string | number | boolean> = {}): Record<string, string | number | boolean> {
  return {
    'auto.create.topics.enable': false,
    'group.initial.rebalance.delay.ms': 0,
    'remote.log.storage.system.enable': true,
    'remote.log.storage.manager.class.name': LOCAL_TIERED_STORAGE,
    'rsm.config.dir': remoteDir(),
    'remote.log.manager.task.interval.ms': 100,
    'log.retention.check.interval.ms': 100,
    'rlmm.config.remote.log.metadata.topic.num.partitions': 5,
    ...extra,
  };
}

/** A tiered broker on LocalTieredStorage unless `extra` names another storage manager. */
export function startTieredBroker(extra: Record<string, string | number | boolean> = {}): Promise<RunningBroker> {
  return startBroker({ logLevel: 'warn', config: tieredConfig(extra) });
}

/** A tiered topic: 2 KiB segments, local data kept only until it is in remote storage. */
export async function createTieredTopic(broker: RunningBroker, topic: string, partitions = 1, configs: Record<string, string> = {}): Promise<void> {
  const [host, port] = broker.bootstrapServers[0].split(':');
  const conn = await connect(host, Number(port));
  try {
    await createTopic(conn, topic, { 'remote.storage.enable': 'true', 'segment.bytes': '2048', 'local.retention.bytes': '1', 'retention.ms': '-1', ...configs }, partitions);
  } finally {
    await conn.close();
  }
  for (let p = 0; p < partitions; p++) await waitFor(`${topic}-${p} on the broker`, () => broker.server.logManager.getLog(topic, p));
}

/** Waits until the partition's local log starts at or after `offset`: what is below is only in remote storage. */
export async function waitUntilTiered(broker: RunningBroker, topic: string, partition: number, offset: bigint, timeoutMs = 20_000): Promise<void> {
  await waitFor(
    `${topic}-${partition} tiered up to ${offset}`,
    () => {
      const log = broker.server.logManager.getLog(topic, partition);
      return log !== undefined && log.localLogStartOffset >= offset && log.highestOffsetInRemoteStorage >= offset - 1n;
    },
    timeoutMs,
    50,
  );
}

/** The values a fresh KafkaJS group consumer reads from the beginning of `topic`, once it has `expected` of them (bounded). */
export async function kafkajsReadFromStart(kafka: Kafka, topic: string, expected: number, opts: { readCommitted?: boolean; timeoutMs?: number } = {}): Promise<string[]> {
  const consumer = kafka.consumer({ groupId: `g-${topic}-${Math.random()}`, maxWaitTimeInMs: 200, readUncommitted: !opts.readCommitted });
  const got: string[] = [];
  await consumer.connect();
  try {
    await consumer.subscribe({ topic, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`KafkaJS read ${got.length} of ${expected} from ${topic}`)), opts.timeoutMs ?? 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          got.push(message.value!.toString());
          if (got.length >= expected) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
  } finally {
    await disconnectAll(consumer);
  }
  return got;
}
