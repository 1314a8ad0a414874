/**
 * krill's own Kafka client (client/network-client.ts) against a real krill broker: negotiated
 * versions, pipelining, produce / listOffset / fetch round trips in every codec, acks=0.
 * (The same client against a scripted fake broker is client/network-client.test.ts.)
 */
import { APIS, ApiKey, ALL_APIS } from '../../protocol/generated';
import { Reader } from '../../protocol/primitives/reader';
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { CompressionType } from '../../protocol/records/record-batch';
import { startBroker, type RunningBroker } from '../../broker';
import { Logger } from '../../common/logger';
import {
  BrokerConnection,
  OffsetSpec,
  connect,
  decodeRecordSet,
  describeTopic,
  fetchAll,
  listOffset,
  metadata,
  produce,
} from '../../client/network-client';

describe('BrokerConnection against a krill broker', () => {
  let broker: RunningBroker;
  let conn: BrokerConnection;
  beforeAll(async () => {
    broker = await startBroker({ logger: new Logger('krill', 'warn') });
    conn = await connect(broker.host, broker.port, { clientId: 'network-client-test' });
    const res = await conn.send('CreateTopics', undefined, {
      topics: [{ name: 'nc', numPartitions: 2, replicationFactor: 1, assignments: [], configs: [] }],
      timeoutMs: 10_000,
      validateOnly: false,
    });
    expect(res.topics[0].errorCode).toBe(0);
  });
  afterAll(async () => {
    await conn?.close();
    await broker?.close();
  });

  test('negotiated versions are min(ours, broker) for every API the broker advertises', () => {
    expect(conn.apiVersions.size).toBeGreaterThan(5);
    for (const [key, range] of conn.apiVersions) {
      const ours = ALL_APIS.find((a) => a.apiKey === key)!;
      expect(conn.versionFor(key)).toBe(Math.min(ours.maxVersion, range.maxVersion));
    }
  });

  test('200 pipelined requests of mixed APIs resolve in request order', async () => {
    const order: number[] = [];
    const sends = Array.from({ length: 200 }, (_, i) => {
      const p: Promise<unknown> =
        i % 3 === 0
          ? metadata(conn, ['nc'])
          : i % 3 === 1
            ? conn.send('ApiVersions', 0, {})
            : conn.send('ListOffsets', undefined, {
                replicaId: -1,
                topics: [{ name: 'nc', partitions: [{ partitionIndex: i % 2, timestamp: OffsetSpec.LATEST, currentLeaderEpoch: -1 }] }],
              });
      return p.then(() => order.push(i));
    });
    await Promise.all(sends);
    expect(order).toEqual(Array.from({ length: 200 }, (_, i) => i));
  });

  test('produce, listOffset and fetchAll round-trip records in every codec, from any offset', async () => {
    const codecs = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD];
    let expected = 0n;
    for (const compression of codecs) {
      const records = Array.from({ length: 5 }, (_, i) => ({
        key: `k${compression}-${i}`,
        value: Buffer.from([compression, i]),
        headers: [{ key: 'h', value: `v${i}` }],
        timestamp: 1_700_000_000_000 + i,
      }));
      const r = await produce(conn, 'nc', 0, records, { batch: { compression } });
      expect(r!.baseOffset).toBe(expected);
      expected += 5n;
    }
    expect((await listOffset(conn, 'nc', 0, OffsetSpec.LATEST)).offset).toBe(25n);
    expect((await listOffset(conn, 'nc', 0, OffsetSpec.EARLIEST)).offset).toBe(0n);
    const all = await fetchAll(conn, 'nc', 0);
    expect(all.records.map((r) => r.offset)).toEqual(Array.from({ length: 25 }, (_, i) => BigInt(i)));
    expect(all.highWatermark).toBe(25n);
    expect(all.records[7].key!.toString()).toBe(`k${CompressionType.GZIP}-2`);
    expect(all.records[7].headers[0].value!.toString()).toBe('v2');
    expect(all.records[7].timestamp).toBe(1_700_000_000_002n);
    // From inside a batch: the broker returns the whole batch, fetchAll drops what precedes.
    const tail = await fetchAll(conn, 'nc', 0, 13n, { partitionMaxBytes: 1 });
    expect(tail.records.map((r) => Number(r.offset))).toEqual(Array.from({ length: 12 }, (_, i) => 13 + i));
    expect(tail.fetches).toBeGreaterThan(1);
    // Old and new Fetch versions read the same records (by name before v13, by id from v13).
    for (const version of [4, 11, 12, 13, APIS.Fetch.maxVersion]) {
      const r = await fetchAll(conn, 'nc', 0, 0n, { version });
      expect(r.records.map((x) => x.value!.toString('hex'))).toEqual(all.records.map((x) => x.value!.toString('hex')));
    }
  });

  test('an acks=0 produce gets no answer and the next request is still answered', async () => {
    const before = (await listOffset(conn, 'nc', 1, OffsetSpec.LATEST)).offset;
    expect(await produce(conn, 'nc', 1, [{ value: 'fire-and-forget' }], { acks: 0 })).toBeNull();
    const md = await metadata(conn, ['nc']);
    expect(md.topics[0].name).toBe('nc');
    const after = await fetchAll(conn, 'nc', 1, before);
    expect(after.records.map((r) => r.value!.toString())).toEqual(['fire-and-forget']);
  });

  test('helpers turn error codes into KafkaError', async () => {
    await expect(describeTopic(conn, 'no-such-topic')).rejects.toMatchObject({ code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    await expect(produce(conn, 'no-such-topic', 0, [{ value: 'x' }])).rejects.toMatchObject({ code: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION });
    await expect(fetchAll(conn, 'nc', 0, 1000n, { version: 12 })).rejects.toMatchObject({ code: ErrorCode.OFFSET_OUT_OF_RANGE });
    await expect(listOffset(conn, 'nc', 7, OffsetSpec.LATEST)).rejects.toBeInstanceOf(KafkaError);
  });

  test('decodeRecordSet reports a trailing partial batch instead of failing', async () => {
    const all = await fetchAll(conn, 'nc', 0);
    const res = await conn.send('Fetch', 12, {
      replicaId: -1, maxWaitMs: 0, minBytes: 0, maxBytes: 1 << 20, isolationLevel: 0, sessionId: 0, sessionEpoch: -1,
      topics: [{ topic: 'nc', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, lastFetchedEpoch: -1, logStartOffset: -1n }] }],
      forgottenTopicsData: [], rackId: '',
    });
    const bytes = res.responses[0].partitions[0].records!;
    const whole = decodeRecordSet(bytes);
    expect(whole.partialBytes).toBe(0);
    expect(whole.batches.length).toBe(5);
    const cut = decodeRecordSet(bytes.subarray(0, bytes.length - 10));
    expect(cut.batches.length).toBe(4);
    expect(cut.partialBytes).toBeGreaterThan(0);
    expect(all.records.length).toBe(25);
  });

  test('sendRaw returns the body bytes of any request', async () => {
    // The ApiVersions v1 request body is empty; decode the answer ourselves.
    const body = (await conn.sendRaw(ApiKey.ApiVersions, 1, Buffer.alloc(0)))!;
    const res = APIS.ApiVersions.readResponse(new Reader(body), 1);
    expect(res.errorCode).toBe(0);
    expect(res.apiKeys.length).toBe(conn.apiVersions.size);
  });
});
