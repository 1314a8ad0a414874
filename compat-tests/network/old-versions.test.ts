/**
 * The fixed old versions kafka-python 2.0.2 sends (issue 2, "Traps real clients fall into"):
 * ApiVersions v0 only, then Metadata v1, Produce v3, ListOffsets v1, Fetch v4. A broker without
 * them is unusable for it. (Its group APIs, FindCoordinator v0 ... OffsetFetch v1, come with
 * consumer groups.) Driven with krill's client capped to those versions.
 */
import { ErrorCode } from '../../protocol/errors';
import { CompressionType } from '../../protocol/records/record-batch';
import { BrokerConnection, OffsetSpec, connect, fetchAll, listOffset, metadata, produce } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { RawSocket, requestFrame } from '../helpers/raw-socket';

let broker: TestBroker;
let conn: BrokerConnection;

beforeAll(async () => {
  broker = await startTestBroker('embedded');
  conn = await connect(broker.host, broker.port, {
    clientId: 'kafka-python',
    maxVersions: { ApiVersions: 0, Metadata: 1, Produce: 3, ListOffsets: 1, Fetch: 4, CreateTopics: 0 },
  });
});

afterAll(async () => {
  await conn?.close();
  await broker?.close();
});

test('ApiVersions v0 is answered with a v0 body (and a v0 request header is all it takes)', async () => {
  const r = await RawSocket.connect(broker.host, broker.port);
  try {
    await r.write(requestFrame(18, 0, 9, {}));
    const frame = await r.nextFrame();
    expect(frame.readInt32BE(0)).toBe(9);
    expect(frame.readInt16BE(4)).toBe(ErrorCode.NONE);
    // v0 body: error, then the array; no throttle time after it.
    const n = frame.readInt32BE(6);
    expect(frame.length).toBe(4 + 2 + 4 + n * 6);
  } finally {
    r.destroy();
  }
  expect(conn.versionFor('Metadata')).toBe(1);
  expect(conn.versionFor('Fetch')).toBe(4);
});

test('CreateTopics v0, Metadata v1, Produce v3, ListOffsets v1 and Fetch v4 work together', async () => {
  const created = await conn.send('CreateTopics', 0, { topics: [{ name: 'py', numPartitions: 2, replicationFactor: 1 }], timeoutMs: 5000 });
  expect(created.topics[0].errorCode).toBe(ErrorCode.NONE);

  const md = await metadata(conn, ['py']);
  expect(md.brokers).toEqual([expect.objectContaining({ nodeId: 1, host: broker.host, port: broker.port })]);
  expect(md.controllerId).toBe(1);
  expect(md.topics[0]).toMatchObject({ errorCode: 0, name: 'py' });
  expect(md.topics[0].partitions.map((p) => p.leaderId)).toEqual([1, 1]);

  const records = Array.from({ length: 20 }, (_, i) => ({ key: `k${i}`, value: `v${i}`, headers: [{ key: 'h', value: String(i) }], timestamp: 1_600_000_000_000 + i }));
  expect((await produce(conn, 'py', 0, records.slice(0, 10)))!.baseOffset).toBe(0n);
  expect((await produce(conn, 'py', 0, records.slice(10), { batch: { compression: CompressionType.GZIP } }))!.baseOffset).toBe(10n);

  expect((await listOffset(conn, 'py', 0, OffsetSpec.LATEST)).offset).toBe(20n);
  expect((await listOffset(conn, 'py', 0, OffsetSpec.EARLIEST)).offset).toBe(0n);
  expect((await listOffset(conn, 'py', 0, 1_600_000_000_015n)).offset).toBe(15n);

  const read = await fetchAll(conn, 'py', 0, 3n);
  expect(read.records.map((r) => r.value!.toString())).toEqual(records.slice(3).map((r) => r.value));
  expect(read.records.map((r) => r.headers[0].value!.toString())).toEqual(records.slice(3).map((r) => r.headers[0].value));
  expect(read.records.map((r) => Number(r.timestamp))).toEqual(records.slice(3).map((r) => r.timestamp));
});
