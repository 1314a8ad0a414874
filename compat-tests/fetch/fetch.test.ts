/**
 * Fetch behaviours clients rely on, driven with krill's own client against the embedded broker:
 * long polling (max_wait_ms / min_bytes, woken by appends, no busy waiting) and KIP-227
 * incremental fetch sessions. Embedded because the long-poll tests wait for the event "the fetch
 * is parked in the purgatory" inside the broker instead of sleeping.
 */
import { EventEmitter } from 'node:events';
import { ErrorCode } from '../../protocol/errors';
import type { FetchRequest, FetchResponse } from '../../protocol/generated/fetch';
import type { Input } from '../../protocol/primitives/input';
import { BrokerConnection, connect, describeTopic, produce, recordsOf } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';

let broker: TestBroker;
let consumer: BrokerConnection; // fetches
let writer: BrokerConnection; // produces, on its own connection
const parked = new EventEmitter();
const topicIds = new Map<string, string>();

beforeAll(async () => {
  broker = await startTestBroker('embedded');
  // Announce every fetch that goes to the purgatory (the event the long-poll tests wait for).
  const purgatory = broker.embedded!.server.replicaManager['fetchPurgatory'];
  const tryCompleteElseWatch = purgatory.tryCompleteElseWatch.bind(purgatory);
  purgatory.tryCompleteElseWatch = (op, keys) => {
    const completed = tryCompleteElseWatch(op, keys);
    if (!completed) parked.emit('parked', keys.map((k) => k.replace('\0', '-'))); // topicPartitionKey -> "topic-partition"
    return completed;
  };
  consumer = await connect(broker.host, broker.port, { clientId: 'consumer' });
  writer = await connect(broker.host, broker.port, { clientId: 'writer' });
  const res = await writer.send('CreateTopics', undefined, {
    topics: ['poll', 'sess', 'sess-other'].map((name) => ({ name, numPartitions: 2, replicationFactor: 1 })),
    timeoutMs: 10_000,
  });
  expect(res.topics.map((t) => t.errorCode)).toEqual([0, 0, 0]);
  for (const t of ['poll', 'sess', 'sess-other']) topicIds.set(t, (await describeTopic(consumer, t)).topicId);
});

afterAll(async () => {
  await consumer?.close();
  await writer?.close();
  await broker?.close();
});

function nextParked(timeoutMs = 5_000): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      parked.off('parked', on);
      reject(new Error(`no fetch was parked within ${timeoutMs} ms`));
    }, timeoutMs);
    const on = (keys: string[]) => {
      clearTimeout(timer);
      resolve(keys);
    };
    parked.once('parked', on);
  });
}

interface Want {
  topic: string;
  partition: number;
  fetchOffset: bigint;
}

/** A Fetch v17 (topic ids) or v11 (names) body. */
function fetchBody(parts: Want[], opts: { maxWaitMs?: number; minBytes?: number; sessionId?: number; sessionEpoch?: number; forgotten?: { topic: string; partition: number }[] } = {}): Input<FetchRequest> {
  const byTopic = new Map<string, Want[]>();
  for (const p of parts) byTopic.set(p.topic, [...(byTopic.get(p.topic) ?? []), p]);
  const forgotten = new Map<string, number[]>();
  for (const f of opts.forgotten ?? []) forgotten.set(f.topic, [...(forgotten.get(f.topic) ?? []), f.partition]);
  return {
    replicaId: -1,
    replicaState: { replicaId: -1, replicaEpoch: -1n },
    maxWaitMs: opts.maxWaitMs ?? 0,
    minBytes: opts.minBytes ?? 1,
    maxBytes: 1 << 20,
    isolationLevel: 0,
    sessionId: opts.sessionId ?? 0,
    sessionEpoch: opts.sessionEpoch ?? -1,
    topics: [...byTopic].map(([topic, ps]) => ({
      topic,
      topicId: topicIds.get(topic)!,
      partitions: ps.map((p) => ({ partition: p.partition, fetchOffset: p.fetchOffset, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n })),
    })),
    forgottenTopicsData: [...forgotten].map(([topic, partitions]) => ({ topic, topicId: topicIds.get(topic)!, partitions })),
    rackId: '',
  };
}

/** "topic:partition" -> the partition's response, with topic names resolved from ids. */
function partitionsOf(res: FetchResponse): Map<string, FetchResponse['responses'][number]['partitions'][number]> {
  const names = new Map([...topicIds].map(([n, id]) => [id, n]));
  const out = new Map<string, FetchResponse['responses'][number]['partitions'][number]>();
  for (const t of res.responses) for (const p of t.partitions) out.set(`${t.topic || names.get(t.topicId)}:${p.partitionIndex}`, p);
  return out;
}

const values = (records: Buffer | null) => recordsOf(records).map((r) => r.value!.toString());

describe('long poll', () => {
  test('a fetch waiting (max_wait_ms=5000, min_bytes=1) returns promptly when a produce arrives', async () => {
    const wasParked = nextParked();
    const t0 = Date.now();
    const fetching = consumer.send('Fetch', undefined, fetchBody([{ topic: 'poll', partition: 0, fetchOffset: 0n }], { maxWaitMs: 5000, minBytes: 1 }));
    expect(await wasParked).toEqual(['poll-0']);
    // Another connection is served while the fetch waits.
    const tProduce = Date.now();
    await produce(writer, 'poll', 0, [{ value: 'wake up' }], { acks: 1 });
    const res = await fetching;
    const tDone = Date.now();
    expect(values(partitionsOf(res).get('poll:0')!.records)).toEqual(['wake up']);
    expect(tDone - tProduce).toBeLessThan(1000);
    expect(tDone - t0).toBeLessThan(2500);
  });

  test('a produce to another partition of the request wakes it too', async () => {
    const wasParked = nextParked();
    const fetching = consumer.send('Fetch', undefined, fetchBody([
      { topic: 'poll', partition: 0, fetchOffset: 1n },
      { topic: 'poll', partition: 1, fetchOffset: 0n },
    ], { maxWaitMs: 5000 }));
    expect((await wasParked).sort()).toEqual(['poll-0', 'poll-1']);
    const t = Date.now();
    await produce(writer, 'poll', 1, [{ value: 'on p1' }], { acks: -1 });
    const res = await fetching;
    expect(Date.now() - t).toBeLessThan(1000);
    const parts = partitionsOf(res);
    expect(values(parts.get('poll:1')!.records)).toEqual(['on p1']);
    expect(parts.get('poll:0')!.records!.length).toBe(0); // empty, not null
  });

  test('with nothing arriving it returns empty after about max_wait_ms', async () => {
    const maxWaitMs = 2000;
    const wasParked = nextParked();
    const t0 = Date.now();
    const res = await consumer.send('Fetch', undefined, fetchBody([{ topic: 'poll', partition: 0, fetchOffset: 1n }], { maxWaitMs }));
    await wasParked;
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(maxWaitMs - 50);
    expect(elapsed).toBeLessThan(maxWaitMs + 1000);
    const p = partitionsOf(res).get('poll:0')!;
    expect(p.errorCode).toBe(ErrorCode.NONE);
    expect(p.highWatermark).toBe(1n);
    expect(p.records).not.toBeNull();
    expect(p.records!.length).toBe(0);
  });

  test('min_bytes not reached: it waits the full max_wait_ms, then returns what there is', async () => {
    const wasParked = nextParked();
    const t0 = Date.now();
    const fetching = consumer.send('Fetch', undefined, fetchBody([{ topic: 'poll', partition: 0, fetchOffset: 1n }], { maxWaitMs: 1000, minBytes: 1_000_000 }));
    await wasParked;
    await produce(writer, 'poll', 0, [{ value: 'small' }]);
    const res = await fetching;
    expect(Date.now() - t0).toBeGreaterThanOrEqual(950);
    expect(values(partitionsOf(res).get('poll:0')!.records)).toEqual(['small']);
  });

  test('max_wait_ms=0 never parks', async () => {
    const t0 = Date.now();
    const res = await consumer.send('Fetch', undefined, fetchBody([{ topic: 'poll', partition: 0, fetchOffset: 2n }], { maxWaitMs: 0, minBytes: 1 }));
    expect(Date.now() - t0).toBeLessThan(500);
    expect(partitionsOf(res).get('poll:0')!.records!.length).toBe(0);
  });
});

describe('incremental fetch sessions (KIP-227)', () => {
  for (const version of [17, 11]) {
    test(`Fetch v${version}: epoch 0 opens a session, incremental epochs answer only what changed`, async () => {
      const topic = version === 17 ? 'sess' : 'sess-other';
      const send = (body: Input<FetchRequest>) => consumer.send('Fetch', version, body);
      const p0 = { topic, partition: 0, fetchOffset: 0n };
      const p1 = { topic, partition: 1, fetchOffset: 0n };

      // Epoch 0: a full fetch that opens a session; every partition answered.
      const full = await send(fetchBody([p0, p1], { sessionId: 0, sessionEpoch: 0 }));
      expect(full.errorCode).toBe(ErrorCode.NONE);
      const sessionId = full.sessionId;
      expect(sessionId).toBeGreaterThan(0);
      expect([...partitionsOf(full).keys()].sort()).toEqual([`${topic}:0`, `${topic}:1`]);

      // Epoch 1: nothing changed, nothing answered.
      const quiet = await send(fetchBody([], { sessionId, sessionEpoch: 1 }));
      expect(quiet.errorCode).toBe(ErrorCode.NONE);
      expect(quiet.sessionId).toBe(sessionId);
      expect(partitionsOf(quiet).size).toBe(0);

      // Epoch 2: only the partition with new records, although the request lists none.
      await produce(writer, topic, 1, [{ value: 'new on p1' }]);
      const news = await send(fetchBody([], { sessionId, sessionEpoch: 2 }));
      const newsParts = partitionsOf(news);
      expect([...newsParts.keys()]).toEqual([`${topic}:1`]);
      expect(values(newsParts.get(`${topic}:1`)!.records)).toEqual(['new on p1']);
      expect(newsParts.get(`${topic}:1`)!.highWatermark).toBe(1n);

      // Epoch 3: the client moves p1 forward; nothing new, nothing answered.
      const moved = await send(fetchBody([{ ...p1, fetchOffset: 1n }], { sessionId, sessionEpoch: 3 }));
      expect(partitionsOf(moved).size).toBe(0);

      // Epoch 4: forget p0; a record there is no longer reported.
      await send(fetchBody([], { sessionId, sessionEpoch: 4, forgotten: [{ topic, partition: 0 }] }));
      await produce(writer, topic, 0, [{ value: 'unseen on p0' }]);
      const afterForget = await send(fetchBody([], { sessionId, sessionEpoch: 5 }));
      expect(partitionsOf(afterForget).size).toBe(0);

      // An incremental long poll parks and is woken by a produce.
      const wasParked = nextParked();
      const polling = send(fetchBody([], { sessionId, sessionEpoch: 6, maxWaitMs: 5000 }));
      await wasParked;
      const t = Date.now();
      await produce(writer, topic, 1, [{ value: 'woken' }]);
      const woken = await polling;
      expect(Date.now() - t).toBeLessThan(1000);
      expect(values(partitionsOf(woken).get(`${topic}:1`)!.records)).toEqual(['woken']);

      // A wrong epoch: INVALID_FETCH_SESSION_EPOCH, and the session is still there at the right one.
      const stale = await send(fetchBody([], { sessionId, sessionEpoch: 3 }));
      expect(stale.errorCode).toBe(ErrorCode.INVALID_FETCH_SESSION_EPOCH);
      expect((await send(fetchBody([{ ...p1, fetchOffset: 2n }], { sessionId, sessionEpoch: 7 }))).errorCode).toBe(ErrorCode.NONE);

      // Epoch -1 closes it: a full sessionless answer, then the id is unknown.
      const closing = await send(fetchBody([p0], { sessionId, sessionEpoch: -1 }));
      expect(closing.errorCode).toBe(ErrorCode.NONE);
      expect(closing.sessionId).toBe(0);
      expect(values(partitionsOf(closing).get(`${topic}:0`)!.records)).toEqual(['unseen on p0']);
      expect((await send(fetchBody([], { sessionId, sessionEpoch: 8 }))).errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    });
  }

  test('a bogus session id gets FETCH_SESSION_ID_NOT_FOUND', async () => {
    const res = await consumer.send('Fetch', undefined, fetchBody([], { sessionId: 987_654_321, sessionEpoch: 1 }));
    expect(res.errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
    expect(res.responses).toEqual([]);
    // The connection is fine afterwards.
    const ok = await consumer.send('Fetch', undefined, fetchBody([{ topic: 'sess', partition: 1, fetchOffset: 0n }]));
    expect(ok.errorCode).toBe(ErrorCode.NONE);
  });
});
