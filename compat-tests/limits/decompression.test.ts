/**
 * Decompression bombs and lying size headers over the wire (issue 11, "hostile and careless
 * clients"). Owns the end-to-end check of the bound in protocol/records/compression.ts: a raw
 * Produce of a hand-built compressed batch, in every codec, that either claims more content than
 * its bytes can hold (lz4 and zstd frame content sizes, snappy length preambles) or really
 * inflates far past 32 x max.message.bytes (gzip, lz4, zstd; snappy cannot: 21:1 at most), sent to
 * an embedded broker. Invariants checked:
 * - the attacker gets INVALID_RECORD (Kafka's code for a batch whose decompressed bytes do not
 *   match its records) for its partition, and its connection stays open;
 * - the broker's RSS (this process: the broker is embedded), sampled after every response, never
 *   grows by more than PEAK_RSS_GROWTH_LIMIT (64 MiB) while every hostile batch is sent ROUNDS
 *   times (claiming or inflating to terabytes in all); after the attack and a full GC the JS heap
 *   is back within 16 MiB of where it started and holds no more ArrayBuffer memory than before
 *   (nothing of the attack is retained: no scratch, no decoder window). RSS after the GC is not
 *   checked: the allocator keeps freed pages resident for a while, by 15 to 30 MiB on CI machines;
 * - a well-behaved client on another connection is served while the attack runs, and reads
 *   back exactly what it produced.
 * No sleeps: every wait is a request with a bounded timeout.
 */
import * as v8 from 'node:v8';
import * as vm from 'node:vm';
import * as zlib from 'node:zlib';
import { BrokerConnection, connect, fetchAll, produce } from '../../client/network-client';
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { snappyRawCompress, XERIAL_MAGIC } from '../../protocol/records/compression';
import { CompressionType } from '../../protocol/records/record-batch';
import { rawBatch } from '../../protocol/testing/records-test-util';
import { startTestBroker, type TestBroker } from '../helpers/brokers';

const MiB = 1024 * 1024;
/** decompressedSizeLimit() at default settings: 32 x 1048588. */
const BOUND = 32 * (MiB + 12);
/**
 * Peak RSS growth allowed while the attack runs. Each hostile batch touches at most BOUND, in one
 * buffer; allow one more for a dead buffer V8 has not freed yet. Measured: 30-35 MiB. (Under the
 * previous fixed 256 MiB cap, one gzip or zstd bomb here could make the broker touch 256 MiB.)
 */
const PEAK_RSS_GROWTH_LIMIT = 2 * BOUND;
/** JS heap growth after the attack and a full GC: nothing of the attack may stay reachable. */
const RETAINED_HEAP_GROWTH_LIMIT = 16 * MiB;
const REQUEST_TIMEOUT_MS = 15_000;
const ROUNDS = 10;

/** A compressed batch around `payload`, claiming 1000 records (the count bounds nothing). */
function batch(codec: CompressionType, payload: Buffer): Buffer {
  return rawBatch(payload, { count: 1000, attributes: codec });
}

function lz4Frame(blocks: Buffer[], contentSize?: bigint): Buffer {
  const parts: Buffer[] = [Buffer.from([0x04, 0x22, 0x4d, 0x18, contentSize === undefined ? 0x60 : 0x68, 0x70])];
  if (contentSize !== undefined) {
    const cs = Buffer.alloc(8);
    cs.writeBigUInt64LE(contentSize);
    parts.push(cs);
  }
  parts.push(Buffer.from([0]));
  for (const b of blocks) {
    const w = Buffer.alloc(4);
    w.writeUInt32LE(b.length);
    parts.push(w, b);
  }
  parts.push(Buffer.alloc(4));
  return Buffer.concat(parts);
}

/** A raw LZ4 block of 4 MiB of zeros in ~16 KB. */
function lz4ZeroBlock(): Buffer {
  const bytes = [0x1f, 0x00, 0x01, 0x00];
  for (let k = 4 * MiB - 6 - 19; ; k -= 255) {
    bytes.push(Math.min(k, 255));
    if (k < 255) break;
  }
  bytes.push(0x50, 0, 0, 0, 0, 0);
  return Buffer.from(bytes);
}

/** A zstd frame: `rle` blocks of 128 KiB zeros (4 bytes each), then `raw` as a raw block. */
function zstdFrame(opts: { rle?: number; raw?: Buffer; contentSize?: bigint }): Buffer {
  const fcs = opts.contentSize !== undefined;
  const parts: Buffer[] = [Buffer.from([0x28, 0xb5, 0x2f, 0xfd, fcs ? 0xc0 : 0x00, 0x38])];
  if (fcs) {
    const cs = Buffer.alloc(8);
    cs.writeBigUInt64LE(opts.contentSize!);
    parts.push(cs);
  }
  const blocks: Array<[type: number, size: number, data: Buffer]> = [];
  for (let i = 0; i < (opts.rle ?? 0); i++) blocks.push([1, 128 * 1024, Buffer.from([0])]);
  if (opts.raw) blocks.push([0, opts.raw.length, opts.raw]);
  blocks.forEach(([type, size, data], i) => {
    const h = (size << 3) | (type << 1) | (i === blocks.length - 1 ? 1 : 0);
    parts.push(Buffer.from([h & 0xff, (h >> 8) & 0xff, (h >> 16) & 0xff]), data);
  });
  return Buffer.concat(parts);
}

function xerial(blocks: Buffer[]): Buffer {
  const header = Buffer.alloc(16);
  XERIAL_MAGIC.copy(header);
  header.writeInt32BE(1, 8);
  header.writeInt32BE(1, 12);
  const parts: Buffer[] = [header];
  for (const b of blocks) {
    const len = Buffer.alloc(4);
    len.writeInt32BE(b.length);
    parts.push(len, b);
  }
  return Buffer.concat(parts);
}

/** Each hostile batch, all under max.message.bytes (1048588), with what it claims or inflates to. */
function hostileBatches(): Array<{ name: string; batch: Buffer }> {
  const snappyLie = Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x61]); // preamble: 4 GiB - 1
  return [
    // One member of 64 MiB zeros (~64 KB): its trailer gives it away before inflating.
    { name: 'gzip bomb (64 MiB, one member)', batch: batch(CompressionType.GZIP, zlib.gzipSync(Buffer.alloc(64 * MiB))) },
    // 512 gzip members of 1 MiB zeros each: 512 MiB from ~540 KB, trailers saying 1 MiB.
    { name: 'gzip bomb (512 MiB)', batch: batch(CompressionType.GZIP, Buffer.concat(Array(512).fill(zlib.gzipSync(Buffer.alloc(MiB))))) },
    { name: 'snappy raw preamble claiming 4 GiB', batch: batch(CompressionType.SNAPPY, snappyLie) },
    {
      name: 'snappy xerial block claiming 4 GiB',
      batch: batch(CompressionType.SNAPPY, xerial([snappyRawCompress(Buffer.alloc(1000)), snappyLie])),
    },
    { name: 'lz4 content size 1 TiB', batch: batch(CompressionType.LZ4, lz4Frame([lz4ZeroBlock()], 2n ** 40n)) },
    { name: 'lz4 bomb (64 MiB, no content size)', batch: batch(CompressionType.LZ4, lz4Frame(Array(16).fill(lz4ZeroBlock()))) },
    {
      name: 'zstd content size 1 TiB',
      batch: batch(CompressionType.ZSTD, zstdFrame({ raw: Buffer.from('ten bytes!'), contentSize: 2n ** 40n })),
    },
    { name: 'zstd bomb (64 MiB declared)', batch: batch(CompressionType.ZSTD, zstdFrame({ rle: 512, contentSize: BigInt(64 * MiB) })) },
    { name: 'zstd bomb (512 MiB, no content size)', batch: batch(CompressionType.ZSTD, zstdFrame({ rle: 4096 })) },
  ];
}

/**
 * A full GC, so that "after" measures what the broker retains rather than garbage V8 has not
 * collected yet (it collects external buffers on its own schedule).
 */
function collectGarbage(): void {
  v8.setFlagsFromString('--expose-gc');
  (vm.runInNewContext('gc') as () => void)();
}

const GOOD_CODECS = [CompressionType.NONE, CompressionType.GZIP, CompressionType.SNAPPY, CompressionType.LZ4, CompressionType.ZSTD];

describe('compressed batches that lie or explode', () => {
  let broker: TestBroker;
  let attacker: BrokerConnection;
  let client: BrokerConnection;

  beforeAll(async () => {
    broker = await startTestBroker('embedded');
    const opts = { requestTimeoutMs: REQUEST_TIMEOUT_MS, timeoutMs: REQUEST_TIMEOUT_MS };
    attacker = await connect(broker.host, broker.port, { ...opts, clientId: 'attacker' });
    client = await connect(broker.host, broker.port, { ...opts, clientId: 'well-behaved' });
    const res = await client.send('CreateTopics', undefined, {
      topics: ['bombs', 'good'].map((name) => ({ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] })),
      timeoutMs: REQUEST_TIMEOUT_MS,
      validateOnly: false,
    });
    expect(res.topics.map((t) => t.errorCode)).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
  });

  afterAll(async () => {
    await attacker?.close();
    await client?.close();
    await broker?.close();
  });

  test('INVALID_RECORD for each, RSS bounded, and another client served meanwhile', async () => {
    const hostile = hostileBatches();
    for (const h of hostile) expect(h.batch.length).toBeLessThan(1_048_588);
    // Warm up every codec (the native ones load on first use, ~15 MB) before the baseline.
    const expected: string[] = [];
    for (const compression of GOOD_CODECS) {
      const value = `warm-up ${CompressionType[compression]}`;
      await produce(client, 'good', 0, [{ value, timestamp: Date.now() }], { batch: { compression } });
      expected.push(value);
    }

    collectGarbage();
    const baseline = process.memoryUsage().rss;
    const baselineBuffers = process.memoryUsage().arrayBuffers;
    const baselineHeap = process.memoryUsage().heapUsed;
    let peak = baseline;
    const sample = (): void => {
      peak = Math.max(peak, process.memoryUsage().rss);
    };

    let attackDone = false;
    const codes = new Map<string, number[]>();
    const attack = (async () => {
      try {
        for (let round = 0; round < ROUNDS; round++) {
          for (const h of hostile) {
            let code: number = ErrorCode.NONE;
            try {
              await produce(attacker, 'bombs', 0, h.batch, { timeoutMs: REQUEST_TIMEOUT_MS });
            } catch (err) {
              if (!(err instanceof KafkaError)) throw err;
              code = err.code;
            }
            sample();
            codes.set(h.name, [...(codes.get(h.name) ?? []), code]);
          }
        }
      } finally {
        attackDone = true;
      }
    })();

    let servedDuringAttack = 0;
    const serve = (async () => {
      for (let i = 0; !attackDone || i < GOOD_CODECS.length; i++) {
        const compression = GOOD_CODECS[i % GOOD_CODECS.length];
        const value = `record ${i} ${CompressionType[compression]} ${'x'.repeat(i % 50)}`;
        await produce(client, 'good', 0, [{ key: `k${i}`, value, timestamp: Date.now() }], { batch: { compression } });
        expected.push(value);
        if (!attackDone) servedDuringAttack++;
        sample();
      }
    })();

    await Promise.all([attack, serve]);
    collectGarbage();
    const after = process.memoryUsage().rss;
    const afterHeap = process.memoryUsage().heapUsed;
    const afterBuffers = process.memoryUsage().arrayBuffers;

    for (const h of hostile) expect([h.name, codes.get(h.name)]).toEqual([h.name, Array(ROUNDS).fill(ErrorCode.INVALID_RECORD)]);
    expect(attacker.isClosed).toBe(false);
    expect(peak - baseline).toBeLessThan(PEAK_RSS_GROWTH_LIMIT);
    expect(afterHeap - baselineHeap).toBeLessThan(RETAINED_HEAP_GROWTH_LIMIT);
    expect(afterBuffers - baselineBuffers).toBeLessThan(MiB);
    expect(servedDuringAttack).toBeGreaterThan(0);
    const read = await fetchAll(client, 'good', 0);
    expect(read.records.map((r) => r.value?.toString())).toEqual(expected);
    // Nothing of the attacker's reached the log.
    expect((await fetchAll(attacker, 'bombs', 0)).records).toEqual([]);
    // eslint-disable-next-line no-console
    console.log(
      `decompression attack: ${ROUNDS * hostile.length} hostile batches; rss growth: peak ${((peak - baseline) / MiB).toFixed(1)} MiB ` +
        `(limit ${(PEAK_RSS_GROWTH_LIMIT / MiB).toFixed(0)}), after a GC ${((after - baseline) / MiB).toFixed(1)} MiB ` +
        `(not checked), heap ${((afterHeap - baselineHeap) / MiB).toFixed(1)} MiB (limit ${RETAINED_HEAP_GROWTH_LIMIT / MiB}); ${servedDuringAttack} good produces served meanwhile`,
    );
  }, 60_000);
});
