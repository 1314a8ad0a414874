/**
 * The network layer's rules for input no good client sends, and for ordering (issue 2, broker/):
 * a malformed frame, an oversized frame, an unknown API key or an unsupported version closes only
 * the offending connection, with a logged reason, and the broker keeps serving everyone else (a
 * bystander connection opened before, and a fresh connection doing real work after).
 * ApiVersions at an unsupported version is answered (KIP-511): a v0 body, UNSUPPORTED_VERSION and
 * the broker's ranges, response header v0. Pipelined requests are answered in order; an acks=0
 * produce gets no response and does not disturb that order.
 */
import { ALL_APIS, APIS, ApiKey } from '../../protocol/generated';
import { ErrorCode } from '../../protocol/errors';
import { Reader } from '../../protocol/primitives/reader';
import { Writer } from '../../protocol/primitives/writer';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { BrokerConnection, connect, fetchAll, metadata, produce } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { RawSocket, requestFrame, sizePrefixed } from '../helpers/raw-socket';

const MAX_REQUEST_BYTES = 64 * 1024;

let broker: TestBroker;
let bystander: BrokerConnection;
const logLines: string[] = [];
const raws: RawSocket[] = [];
let proofs = 0;

beforeAll(async () => {
  broker = await startTestBroker('embedded', {
    config: { 'socket.request.max.bytes': MAX_REQUEST_BYTES },
    logSink: (line) => logLines.push(line),
  });
  bystander = await connect(broker.host, broker.port, { clientId: 'bystander' });
  const res = await bystander.send('CreateTopics', undefined, {
    topics: [
      { name: 'alive', numPartitions: 1, replicationFactor: 1 },
      { name: 'order', numPartitions: 1, replicationFactor: 1 },
    ],
    timeoutMs: 10_000,
  });
  expect(res.topics.map((t) => t.errorCode)).toEqual([0, 0]);
});

afterAll(async () => {
  for (const r of raws) r.destroy();
  await bystander?.close();
  await broker?.close();
});

async function raw(): Promise<RawSocket> {
  const r = await RawSocket.connect(broker.host, broker.port);
  raws.push(r);
  return r;
}

/** The broker still does real work: a new connection produces and reads back, the bystander still answers. */
async function expectStillServing(): Promise<void> {
  const c = await connect(broker.host, broker.port, { clientId: 'after' });
  try {
    const value = `alive-${++proofs}`;
    const r = await produce(c, 'alive', 0, [{ key: 'k', value }]);
    const read = await fetchAll(c, 'alive', 0, r!.baseOffset);
    expect(read.records.map((x) => x.value!.toString())).toEqual([value]);
  } finally {
    await c.close();
  }
  const md = await metadata(bystander, ['alive']);
  expect(md.topics[0].errorCode).toBe(ErrorCode.NONE);
  expect(bystander.isClosed).toBe(false);
}

/** Sends `bytes` on a fresh connection and expects the broker to close it, logging `reason`. */
async function expectClosed(bytes: Buffer, reason: RegExp): Promise<void> {
  const r = await raw();
  const logged = logLines.length;
  await r.write(bytes);
  await r.waitForClose();
  expect(r.bufferedFrames).toBe(0);
  const closeLines = logLines.slice(logged).filter((l) => l.includes('closing connection'));
  expect(closeLines.join('\n')).toMatch(reason);
  await expectStillServing();
}

describe('bad input closes only the offending connection', () => {
  test('garbage bytes: a plausible size followed by junk', async () => {
    await expectClosed(sizePrefixed(Buffer.alloc(40, 0xff)), /unknown or disabled API key -1|cannot decode/);
  });

  test('garbage bytes: an HTTP request (its first four bytes read as a huge size)', async () => {
    await expectClosed(Buffer.from('GET / HTTP/1.1\r\nHost: x\r\n\r\n'), /larger than socket.request.max.bytes/);
  });

  test('a negative frame size', async () => {
    await expectClosed(sizePrefixed(Buffer.alloc(8), -2), /invalid frame size -2/);
  });

  test('an undecodable header: shorter than api key + version + correlation id', async () => {
    await expectClosed(sizePrefixed(Buffer.from([0, 3, 0])), /cannot decode request header/);
  });

  test('an undecodable header: a client id longer than the frame', async () => {
    const h = new Writer().int16(ApiKey.Metadata).int16(1).int32(7).int16(500).toBuffer();
    await expectClosed(sizePrefixed(Buffer.concat([h, Buffer.from('abc')])), /cannot decode request header/);
  });

  test('a truncated body: Metadata v1 announcing 5 topics and carrying none', async () => {
    await expectClosed(requestFrame(ApiKey.Metadata, 1, 1, new Writer().int32(5).toBuffer()), /cannot decode Metadata v1 request/);
  });

  test('a truncated body: a Produce cut in the middle of its record set', async () => {
    const full = requestFrame(ApiKey.Produce, 7, 1, {
      acks: -1,
      timeoutMs: 1000,
      topicData: [{ name: 'alive', partitionData: [{ index: 0, records: buildRecordBatch([{ value: 'x'.repeat(100) }]) }] }],
    });
    const cut = full.subarray(0, full.length - 40);
    cut.writeInt32BE(cut.length - 4, 0);
    await expectClosed(cut, /cannot decode Produce v7 request/);
  });

  test('an oversized frame (declared size above socket.request.max.bytes) is refused before its body arrives', async () => {
    await expectClosed(sizePrefixed(Buffer.alloc(16), MAX_REQUEST_BYTES + 1), new RegExp(`frame of ${MAX_REQUEST_BYTES + 1} bytes is larger than socket.request.max.bytes \\(${MAX_REQUEST_BYTES}\\)`));
  });

  test('an oversized Produce request closes the connection; one under the limit is served', async () => {
    const produceOf = (bytes: number, corr: number) =>
      requestFrame(ApiKey.Produce, 7, corr, {
        acks: 1,
        timeoutMs: 1000,
        topicData: [{ name: 'alive', partitionData: [{ index: 0, records: buildRecordBatch([{ value: Buffer.alloc(bytes, 1) }]) }] }],
      });
    const ok = await raw();
    await ok.write(produceOf(MAX_REQUEST_BYTES - 1024, 1));
    const res = APIS.Produce.readResponse(new Reader((await ok.nextFrame()).subarray(4)), 7);
    expect(res.responses[0].partitionResponses[0].errorCode).toBe(ErrorCode.NONE);
    await expectClosed(produceOf(MAX_REQUEST_BYTES, 1), /larger than socket.request.max.bytes/);
  });

  test('an unknown API key', async () => {
    await expectClosed(requestFrame(1000, 0, 1, Buffer.alloc(0)), /unknown or disabled API key 1000/);
  });

  test('an API key in the schemas that krill does not advertise is treated like an unknown key', async () => {
    const api = ALL_APIS.find((a) => !bystander.apiVersions.has(a.apiKey) && a.listeners.includes('broker'))!;
    expect(api).toBeDefined();
    await expectClosed(requestFrame(api.apiKey, api.minVersion, 1, Buffer.alloc(0)), new RegExp(`unknown or disabled API key ${api.apiKey}`));
  });

  test('an unsupported version of a known API: above the range (Metadata v99) and below it (Produce v2, Fetch v3)', async () => {
    await expectClosed(requestFrame(ApiKey.Metadata, 99, 1, Buffer.alloc(0)), /unsupported version 99 of API 3/);
    const produceV2 = new Writer().int16(1).int32(1000).int32(0).toBuffer(); // acks, timeout, no topics
    await expectClosed(requestFrame(ApiKey.Produce, 2, 1, produceV2), /unsupported version 2 of API 0/);
    await expectClosed(requestFrame(ApiKey.Fetch, 3, 1, Buffer.alloc(0)), /unsupported version 3 of API 1/);
  });
});

describe('ApiVersions at an unsupported version (KIP-511)', () => {
  test('v99 gets a v0 body with UNSUPPORTED_VERSION and the broker ranges, header v0, and the connection stays open', async () => {
    const r = await raw();
    // A newer client's ApiVersions: flexible header (v2) and a body the broker cannot know.
    await r.write(requestFrame(ApiKey.ApiVersions, 99, 42, Buffer.from([0x06, 0x61, 0x62, 0x63, 0x64, 0x65, 0x02, 0x31, 0x00])));
    const frame = await r.nextFrame();
    // Response header v0: the correlation id and nothing else, then the v0 body.
    expect(frame.readInt32BE(0)).toBe(42);
    const reader = new Reader(frame, 4);
    const body = APIS.ApiVersions.readResponse(reader, 0);
    expect(reader.remaining).toBe(0);
    expect(body.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    const ranges = new Map(body.apiKeys.map((k) => [k.apiKey, { minVersion: k.minVersion, maxVersion: k.maxVersion }]));
    expect(ranges).toEqual(new Map(bystander.apiVersions));
    expect(ranges.get(ApiKey.ApiVersions)).toEqual({ minVersion: 0, maxVersion: APIS.ApiVersions.maxVersion });

    // The client retries at a version the broker has, on the same connection.
    await r.write(requestFrame(ApiKey.ApiVersions, 3, 43, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' }));
    const retry = await r.nextFrame();
    expect(retry.readInt32BE(0)).toBe(43);
    const res = APIS.ApiVersions.readResponse(new Reader(retry, 4), 3); // header v0 even for flexible v3
    expect(res.errorCode).toBe(ErrorCode.NONE);
    expect(r.closed).toBe(false);
    await expectStillServing();
  });

  test('an ApiVersions v50 on an established client connection is answered the same way and keeps it open', async () => {
    const v0 = await bystander.sendRaw(ApiKey.ApiVersions, 50, Buffer.from([0x00]));
    const body = APIS.ApiVersions.readResponse(new Reader(v0!), 0);
    expect(body.errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(bystander.isClosed).toBe(false);
  });
});

describe('ordering on one connection', () => {
  test('pipelined requests written in one go are answered in order, a long-poll fetch included', async () => {
    const r = await raw();
    const fetchV11 = {
      replicaId: -1,
      maxWaitMs: 300,
      minBytes: 1_000_000, // waits its full max_wait_ms: later requests must still queue behind it
      maxBytes: 1 << 20,
      isolationLevel: 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic: 'order', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: 1 << 20, currentLeaderEpoch: -1, logStartOffset: -1n }] }],
      forgottenTopicsData: [],
      rackId: '',
    };
    const frames = [
      requestFrame(ApiKey.Metadata, 1, 100, { topics: [{ name: 'order' }] }),
      requestFrame(ApiKey.Fetch, 11, 101, fetchV11),
      requestFrame(ApiKey.ApiVersions, 0, 102, {}),
      requestFrame(ApiKey.ListOffsets, 1, 103, { replicaId: -1, topics: [{ name: 'order', partitions: [{ partitionIndex: 0, timestamp: -1n }] }] }),
      requestFrame(ApiKey.Metadata, 12, 104, { topics: null }),
      requestFrame(ApiKey.ApiVersions, 3, 105, { clientSoftwareName: 'raw', clientSoftwareVersion: '1' }),
      requestFrame(ApiKey.Produce, 9, 106, { acks: 1, timeoutMs: 1000, topicData: [{ name: 'order', partitionData: [{ index: 0, records: buildRecordBatch([{ value: 'p' }]) }] }] }),
      requestFrame(ApiKey.DescribeCluster, 0, 107, {}),
    ];
    // One write; and the same stream again split at awkward places (mid-size, mid-header).
    const all = Buffer.concat(frames);
    await r.write(all);
    const ids: number[] = [];
    for (let i = 0; i < frames.length; i++) ids.push((await r.nextFrame()).readInt32BE(0));
    expect(ids).toEqual([100, 101, 102, 103, 104, 105, 106, 107]);

    const again = Buffer.concat(frames.map((f, i) => {
      const c = Buffer.from(f);
      c.writeInt32BE(200 + i, 8); // correlation id (after size, api key, version)
      return c;
    }));
    // Pieces of 1, 2, 3... bytes: cut inside size prefixes, headers and bodies.
    let pos = 0;
    for (const n of [1, 2, 3, 7, 13, 40, 120]) {
      await r.write(again.subarray(pos, Math.min(pos + n, again.length)));
      pos = Math.min(pos + n, again.length);
    }
    await r.write(again.subarray(pos));
    const ids2: number[] = [];
    for (let i = 0; i < frames.length; i++) ids2.push((await r.nextFrame()).readInt32BE(0));
    expect(ids2).toEqual([200, 201, 202, 203, 204, 205, 206, 207]);
    expect(r.closed).toBe(false);
  });

  test('an acks=0 produce gets no response; the next request on the connection is answered in order', async () => {
    const r = await raw();
    const before = (await fetchAll(bystander, 'order', 0)).highWatermark;
    const fireAndForget = requestFrame(ApiKey.Produce, 7, 1, {
      acks: 0,
      timeoutMs: 1000,
      topicData: [{ name: 'order', partitionData: [{ index: 0, records: buildRecordBatch([{ key: 'a0', value: 'no answer' }]) }] }],
    });
    await r.write(Buffer.concat([fireAndForget, requestFrame(ApiKey.Metadata, 1, 2, { topics: [{ name: 'order' }] }), requestFrame(ApiKey.ApiVersions, 0, 3, {})]));
    expect((await r.nextFrame()).readInt32BE(0)).toBe(2);
    expect((await r.nextFrame()).readInt32BE(0)).toBe(3);
    // Nothing else arrives: a last request's answer is the next frame.
    await r.write(requestFrame(ApiKey.ApiVersions, 0, 4, {}));
    expect((await r.nextFrame()).readInt32BE(0)).toBe(4);
    expect(r.bufferedFrames).toBe(0);
    expect(r.partialBytes).toBe(0);
    // And the record was appended before the requests that followed it were answered.
    const after = await fetchAll(bystander, 'order', 0, before);
    expect(after.records.map((x) => x.value!.toString())).toEqual(['no answer']);
  });

  test('an acks=0 produce that fails (unknown topic) closes the connection, as Kafka does, so the producer notices', async () => {
    const failing = requestFrame(ApiKey.Produce, 7, 1, {
      acks: 0,
      timeoutMs: 1000,
      topicData: [{ name: 'no-such-topic-acks0', partitionData: [{ index: 0, records: buildRecordBatch([{ value: 'lost?' }]) }] }],
    });
    await expectClosed(Buffer.concat([failing, requestFrame(ApiKey.ApiVersions, 0, 2, {})]), /acks=0 produce failed for no-such-topic-acks0-0: UNKNOWN_TOPIC_OR_PARTITION/);
  });
});
