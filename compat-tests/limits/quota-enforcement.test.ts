/**
 * Client quotas enforced over the wire (KIP-13, KIP-124, KIP-219, KIP-599, KIP-612), each set with
 * AlterClientQuotas on a broker of its own:
 * - producer_byte_rate: produce responses carry throttle_time_ms once the client is over its rate,
 *   and the connection is muted for that long (the next answer on it comes no sooner);
 * - consumer_byte_rate: a fetch over the rate is answered empty with throttle_time_ms, and the data
 *   comes on a later fetch;
 * - request_percentage: requests of a client over its share of request time are throttled;
 * - controller_mutation_rate: CreateTopics v6+ over the rate gets THROTTLING_QUOTA_EXCEEDED;
 * - connection_creation_rate (ip entity): connections over the rate are closed, unserved.
 * A client without a quota on another connection is never throttled meanwhile.
 */
import { ApiKey } from '../../protocol/generated';
import { ErrorCode } from '../../protocol/errors';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { BrokerConnection, connect, produce } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { RawSocket, requestFrame } from '../helpers/raw-socket';

const brokers: TestBroker[] = [];
const conns: BrokerConnection[] = [];

afterEach(async () => {
  for (const c of conns.splice(0)) await c.close();
  for (const b of brokers.splice(0)) await b.close();
});

async function broker(config: Record<string, string | number> = {}): Promise<TestBroker> {
  const b = await startTestBroker('embedded', { config: { 'quota.window.num': 2, 'quota.window.size.seconds': 1, ...config } });
  brokers.push(b);
  return b;
}

async function client(b: TestBroker, clientId: string): Promise<BrokerConnection> {
  const c = await connect(b.host, b.port, { clientId });
  conns.push(c);
  return c;
}

async function setQuota(c: BrokerConnection, entity: [string, string | null][], key: string, value: number): Promise<void> {
  const res = await c.send('AlterClientQuotas', undefined, {
    entries: [{ entity: entity.map(([entityType, entityName]) => ({ entityType, entityName })), ops: [{ key, value, remove: false }] }],
    validateOnly: false,
  });
  expect(res.entries.map((e) => [e.errorCode, e.errorMessage])).toEqual([[0, null]]);
}

async function createTopic(c: BrokerConnection, name: string, partitions = 1): Promise<void> {
  const res = await c.send('CreateTopics', undefined, { topics: [{ name, numPartitions: partitions, replicationFactor: 1 }], timeoutMs: 10_000 });
  expect(res.topics[0].errorCode).toBe(0);
}

describe('connection_creation_rate (ip entity)', () => {
  test('connections over the rate of their address are closed unserved; within it they are served', async () => {
    const b = await broker();
    const admin = await client(b, 'admin');
    await setQuota(admin, [['ip', '127.0.0.1']], 'connection_creation_rate', 2);
    const sockets: RawSocket[] = [];
    try {
      const outcomes: string[] = [];
      for (let i = 0; i < 8; i++) {
        const s = await RawSocket.connect(b.host, b.port);
        sockets.push(s);
        await s.write(requestFrame(ApiKey.ApiVersions, 3, 1, { clientSoftwareName: 'q', clientSoftwareVersion: '1' })).catch(() => undefined);
        outcomes.push(await s.nextFrame(5000).then(() => 'served', () => (s.closed ? 'closed' : 'silent')));
      }
      // Two per second, measured over (at least) one second of one-second samples.
      expect(outcomes.slice(0, 2)).toEqual(['served', 'served']);
      expect(outcomes.filter((o) => o === 'closed').length).toBeGreaterThanOrEqual(4);
      expect(outcomes).not.toContain('silent');
    } finally {
      for (const s of sockets) s.destroy();
    }
  });
});

describe('request_percentage', () => {
  test('a client over its share of request time gets throttle_time_ms; another client does not', async () => {
    const b = await broker();
    const admin = await client(b, 'admin');
    await setQuota(admin, [['client-id', 'greedy']], 'request_percentage', 0.01);
    const greedy = await client(b, 'greedy');
    let throttled = 0;
    for (let i = 0; i < 50 && throttled === 0; i++) {
      const md = await greedy.send('Metadata', undefined, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
      if (md.throttleTimeMs > 0) throttled = md.throttleTimeMs;
    }
    expect(throttled).toBeGreaterThan(0);
    expect(throttled).toBeLessThanOrEqual(1000); // capped at one quota window
    const polite = await client(b, 'polite');
    const md = await polite.send('Metadata', undefined, { topics: null, allowAutoTopicCreation: false, includeTopicAuthorizedOperations: false });
    expect(md.throttleTimeMs).toBe(0);
  });
});

describe('producer_byte_rate', () => {
  test('produce responses carry the throttle time and the connection is muted for it', async () => {
    const b = await broker();
    const admin = await client(b, 'admin');
    await createTopic(admin, 'bytes');
    await setQuota(admin, [['client-id', 'slow-producer']], 'producer_byte_rate', 50_000);
    const p = await client(b, 'slow-producer');
    const value = Buffer.alloc(40_000, 1);
    let throttleMs = 0;
    for (let i = 0; i < 10 && throttleMs === 0; i++) {
      const res = await p.send('Produce', undefined, {
        transactionalId: null,
        acks: 1,
        timeoutMs: 10_000,
        topicData: [{ name: 'bytes', partitionData: [{ index: 0, records: buildRecordBatch([{ value }]) }] }],
      });
      expect(res.responses[0].partitionResponses[0].errorCode).toBe(0);
      throttleMs = res.throttleTimeMs;
    }
    expect(throttleMs).toBeGreaterThan(0);
    // The broker does not read this connection until the throttle time has passed.
    const t0 = Date.now();
    await p.send('ApiVersions', undefined, { clientSoftwareName: 'q', clientSoftwareVersion: '1' });
    expect(Date.now() - t0).toBeGreaterThanOrEqual(throttleMs - 50);
    // A producer without a quota is not held back.
    const other = await client(b, 'other');
    const r = await produce(other, 'bytes', 0, [{ value }], { acks: 1 });
    expect(r).not.toBeNull();
  });
});

describe('consumer_byte_rate', () => {
  test('a fetch over the rate is answered empty with throttle_time_ms; the data comes later', async () => {
    const b = await broker();
    const admin = await client(b, 'admin');
    await createTopic(admin, 'reads');
    for (let i = 0; i < 5; i++) await produce(admin, 'reads', 0, [{ value: Buffer.alloc(30_000, i) }], { acks: 1 });
    await setQuota(admin, [['client-id', 'slow-consumer']], 'consumer_byte_rate', 20_000);
    const c = await client(b, 'slow-consumer');
    const fetch = (offset: bigint) =>
      c.send('Fetch', 4, {
        replicaId: -1,
        maxWaitMs: 0,
        minBytes: 0,
        maxBytes: 1 << 20,
        isolationLevel: 0,
        topics: [{ topic: 'reads', partitions: [{ partition: 0, fetchOffset: offset, partitionMaxBytes: 1 << 20 }] }],
      });
    let emptyThrottled = false;
    let got = 0;
    for (let i = 0; i < 20 && !(emptyThrottled && got > 0); i++) {
      const res = await fetch(0n);
      const bytes = res.responses.reduce((n, t) => n + t.partitions.reduce((m, p) => m + (p.records?.length ?? 0), 0), 0);
      if (res.throttleTimeMs > 0 && bytes === 0) emptyThrottled = true;
      if (bytes > 0) got++;
    }
    expect(got).toBeGreaterThan(0);
    expect(emptyThrottled).toBe(true);
  }, 30_000);
});

describe('controller_mutation_rate', () => {
  test('CreateTopics v6+ over the rate gets THROTTLING_QUOTA_EXCEEDED with the throttle time', async () => {
    const b = await broker({ 'controller.quota.window.num': 2, 'controller.quota.window.size.seconds': 1 });
    const admin = await client(b, 'admin');
    await setQuota(admin, [['client-id', 'creator']], 'controller_mutation_rate', 5);
    const c = await client(b, 'creator');
    // The bucket holds 5/s * 2 samples * 1 s = 10 partitions. Each topic is checked, then takes its
    // partitions: m1 (12) is created and leaves the bucket below zero, so m2 is refused.
    const first = await c.send('CreateTopics', 7, {
      topics: [
        { name: 'm1', numPartitions: 12, replicationFactor: 1 },
        { name: 'm2', numPartitions: 1, replicationFactor: 1 },
      ],
      timeoutMs: 10_000,
    });
    expect(first.topics.map((t) => [t.name, t.errorCode, t.errorMessage])).toEqual([
      ['m1', ErrorCode.NONE, null],
      ['m2', ErrorCode.THROTTLING_QUOTA_EXCEEDED, 'The throttling quota has been exceeded.'],
    ]);
    expect(first.throttleTimeMs).toBeGreaterThan(0);
    // The connection was muted until the bucket is back at zero: the next request is served.
    // Versions before 6 are permissive: both topics are created, and the response says to slow down.
    const old = await c.send('CreateTopics', 5, {
      topics: [
        { name: 'm3', numPartitions: 6, replicationFactor: 1 },
        { name: 'm4', numPartitions: 1, replicationFactor: 1 },
      ],
      timeoutMs: 10_000,
    });
    expect(old.topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    expect(old.throttleTimeMs).toBeGreaterThan(0);
    // DeleteTopics v5+ is strict: m3 (6 partitions) is deleted, m1 is refused.
    const del = await c.send('DeleteTopics', 5, { topicNames: ['m3', 'm1'], timeoutMs: 10_000 });
    expect(del.responses.map((r) => [r.name, r.errorCode])).toEqual([
      ['m3', ErrorCode.NONE],
      ['m1', ErrorCode.THROTTLING_QUOTA_EXCEEDED],
    ]);
    // CreatePartitions v3 is strict: growing m4 by 2 goes through, m1 by 1 does not.
    const grow = await c.send('CreatePartitions', 3, {
      topics: [
        { name: 'm4', count: 3, assignments: null },
        { name: 'm1', count: 13, assignments: null },
      ],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    expect(grow.results.map((r) => [r.name, r.errorCode])).toEqual([
      ['m4', ErrorCode.NONE],
      ['m1', ErrorCode.THROTTLING_QUOTA_EXCEEDED],
    ]);
    // Another client is not limited.
    const free = await client(b, 'free');
    const res = await free.send('CreateTopics', 7, { topics: [{ name: 'm5', numPartitions: 50, replicationFactor: 1 }], timeoutMs: 10_000 });
    expect([res.topics[0].errorCode, res.throttleTimeMs]).toEqual([ErrorCode.NONE, 0]);
  });
});
