/**
 * Channel muting over the wire, against a CLI broker so that its memory is its own: a client that
 * parks a long-poll Fetch and then keeps writing 1 MiB Produce frames on the same connection is held
 * back by TCP after a few MiB (the broker does not read a connection while its request is in
 * flight), the broker's RSS stays bounded, and a well-behaved client on another connection is
 * served meanwhile. Once the fetch is answered, the connection's next request is read.
 */
import * as fs from 'node:fs';
import { ApiKey } from '../../protocol/generated';
import { buildRecordBatch } from '../../protocol/records/memory-records-builder';
import { BrokerConnection, connect, metadata, produce } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { RawSocket, requestFrame } from '../helpers/raw-socket';

const MiB = 1024 * 1024;
let broker: TestBroker;
let bystander: BrokerConnection;

beforeAll(async () => {
  broker = await startTestBroker('cli');
  bystander = await connect(broker.host, broker.port, { clientId: 'bystander' });
  const res = await bystander.send('CreateTopics', undefined, {
    topics: ['parked', 'flood'].map((name) => ({ name, numPartitions: 1, replicationFactor: 1 })),
    timeoutMs: 10_000,
  });
  expect(res.topics.map((t) => t.errorCode)).toEqual([0, 0]);
}, 30_000);

afterAll(async () => {
  await bystander?.close();
  await broker?.close();
});

function rssMiB(pid: number): number {
  const m = /VmRSS:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) / 1024 : NaN;
}

/** Resolves true once the socket drains, false if it does not within `ms` (the peer stopped reading). */
function drained(s: RawSocket, ms: number): Promise<boolean> {
  if (!s.socket.writableNeedDrain) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      s.socket.off('drain', on);
      resolve(false);
    }, ms);
    const on = () => {
      clearTimeout(t);
      resolve(true);
    };
    s.socket.once('drain', on);
  });
}

test('Produce frames written behind a parked Fetch are held back by TCP, not buffered by the broker', async () => {
  const pid = broker.pid!;
  const rssBefore = rssMiB(pid);
  const attacker = await RawSocket.connect(broker.host, broker.port);
  try {
    await attacker.write(
      requestFrame(ApiKey.Fetch, 4, 1, {
        replicaId: -1,
        maxWaitMs: 30_000,
        minBytes: 1,
        maxBytes: MiB,
        isolationLevel: 0,
        topics: [{ topic: 'parked', partitions: [{ partition: 0, fetchOffset: 0n, partitionMaxBytes: MiB }] }],
      }),
    );
    const records = buildRecordBatch([{ key: 'k', value: Buffer.alloc(MiB - 200, 7) }]);
    const produceFrame = requestFrame(ApiKey.Produce, 7, 2, {
      transactionalId: null,
      acks: 1,
      timeoutMs: 10_000,
      topicData: [{ name: 'flood', partitionData: [{ index: 0, records }] }],
    });
    let written = 0;
    while (written < 384 * MiB) {
      attacker.socket.write(produceFrame);
      written += produceFrame.length;
      if (!(await drained(attacker, 1000))) break;
    }
    const accepted = attacker.socket.bytesWritten - attacker.socket.writableLength;
    // TCP buffers on loopback take a few MiB; the broker itself holds at most one frame beyond its request.
    expect(written).toBeLessThan(384 * MiB);
    expect(accepted).toBeLessThan(48 * MiB);
    expect(rssMiB(pid) - rssBefore).toBeLessThan(64);

    // A well-behaved client is served meanwhile.
    const md = await metadata(bystander, ['flood']);
    expect(md.topics[0].errorCode).toBe(0);
    const r = await produce(bystander, 'parked', 0, [{ value: 'wake up' }], { acks: 1 });
    expect(r!.baseOffset).toBe(0n);
    // That produce answers the parked fetch, and the connection's next request (a Produce) is read.
    const fetchResponse = await attacker.nextFrame(10_000);
    expect(fetchResponse.readInt32BE(0)).toBe(1);
    const produceResponse = await attacker.nextFrame(10_000);
    expect(produceResponse.readInt32BE(0)).toBe(2);
  } finally {
    attacker.destroy();
  }
}, 60_000);
