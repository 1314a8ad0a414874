/**
 * Byte-level cross-checks with KafkaJS 2.2.4's own record batch encoder and decoder: batches a
 * KafkaJS producer sends must read back exactly with ours, and batches we write (fetch responses)
 * must decode in KafkaJS.
 */
import { buildRecordBatch, SimpleRecord } from './memory-records-builder';
import { compress, decompress } from './compression';
import { readRecords } from './record';
import { checkBatch, CompressionType } from './record-batch';
import { validateProduceRecordSet } from './record-set-validator';

// eslint-disable-next-line @typescript-eslint/no-var-requires
const { RecordBatch: KafkaJSRecordBatch } = require('kafkajs/src/protocol/recordBatch/v0');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const KafkaJSRecord = require('kafkajs/src/protocol/recordBatch/record/v0');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const kafkajsDecodeBatch = require('kafkajs/src/protocol/recordBatch/v0/decoder');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const KafkaJSDecoder = require('kafkajs/src/protocol/decoder');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const { Codecs, Types } = require('kafkajs/src/protocol/message/compression');
// eslint-disable-next-line @typescript-eslint/no-var-requires
const Long = require('kafkajs/src/utils/long');

const T0 = 1_700_000_000_000;

interface Msg {
  key: string | null;
  value: string | null;
  headers: Record<string, string>;
  timestamp: number;
}

const MESSAGES: Msg[] = [
  { key: 'user-1', value: '{"a":1}', headers: {}, timestamp: T0 },
  { key: null, value: 'no key', headers: { trace: 'abc', 'content-type': 'json' }, timestamp: T0 + 7 },
  { key: 'tombstone', value: null, headers: {}, timestamp: T0 + 3 },
  { key: 'ü', value: 'x'.repeat(5000), headers: { h: 'v' }, timestamp: T0 + 100 },
];

/** What KafkaJS's producer puts on the wire for these messages (produce v3+). */
async function kafkajsBatch(compression: number, opts: { producerId?: number; sequence?: number } = {}): Promise<Buffer> {
  const records = MESSAGES.map((m, i) =>
    KafkaJSRecord({
      offsetDelta: i,
      timestampDelta: m.timestamp - T0,
      key: m.key === null ? null : Buffer.from(m.key),
      value: m.value === null ? null : Buffer.from(m.value),
      headers: m.headers,
    }),
  );
  const enc = await KafkaJSRecordBatch({
    compression,
    firstOffset: Long.fromInt(0),
    firstTimestamp: T0,
    maxTimestamp: T0 + 100,
    lastOffsetDelta: MESSAGES.length - 1,
    producerId: Long.fromValue(opts.producerId ?? -1),
    producerEpoch: 0,
    firstSequence: opts.sequence ?? 0,
    partitionLeaderEpoch: 0,
    records,
  });
  return enc.buffer;
}

async function kafkajsDecode(buf: Buffer): Promise<{ records: Array<Record<string, unknown>> } & Record<string, unknown>> {
  return kafkajsDecodeBatch(new KafkaJSDecoder(buf));
}

describe('KafkaJS-built batches read with ours', () => {
  for (const [name, type] of [
    ['uncompressed', Types.None],
    ['gzip', Types.GZIP],
  ] as const) {
    it(name, async () => {
      const buf = await kafkajsBatch(type, { producerId: 9, sequence: 4 });
      const batch = checkBatch(buf, 0); // CRC32C matches
      expect(batch.compressionType).toBe(type);
      expect(batch.producerId).toBe(9n);
      const recs = readRecords(batch);
      expect(recs).toHaveLength(MESSAGES.length);
      recs.forEach((r, i) => {
        const m = MESSAGES[i];
        expect(r.offset).toBe(BigInt(i));
        expect(r.timestamp).toBe(BigInt(m.timestamp));
        expect(r.key?.toString() ?? null).toBe(m.key);
        expect(r.value?.toString() ?? null).toBe(m.value);
        expect(r.sequence).toBe(4 + i);
        expect(Object.fromEntries(r.headers.map((h) => [h.key, h.value!.toString()]))).toEqual(m.headers);
      });
      // and the produce-path validator accepts exactly what KafkaJS sends
      const v = validateProduceRecordSet(buf, { apiVersion: 7 });
      expect(v.batches[0].recordCount).toBe(4);
      expect(v.maxTimestamp).toBe(BigInt(T0 + 100));
    });
  }
});

describe('our batches decoded by KafkaJS', () => {
  const saved = { ...Codecs };
  beforeAll(() => {
    // KafkaJS ships gzip only; a KafkaJS user plugs codecs in the same way.
    for (const t of [Types.Snappy, Types.LZ4, Types.ZSTD]) {
      Codecs[t] = () => ({
        compress: async (enc: { buffer: Buffer }) => compress(t, enc.buffer),
        decompress: async (b: Buffer) => decompress(t, b),
      });
    }
  });
  afterAll(() => Object.assign(Codecs, saved));

  for (const type of [
    CompressionType.NONE,
    CompressionType.GZIP,
    CompressionType.SNAPPY,
    CompressionType.LZ4,
    CompressionType.ZSTD,
  ]) {
    it(`codec ${CompressionType[type]}`, async () => {
      const input: SimpleRecord[] = MESSAGES.map((m) => ({
        key: m.key,
        value: m.value,
        timestamp: m.timestamp,
        headers: Object.entries(m.headers).map(([key, value]) => ({ key, value })),
      }));
      const buf = buildRecordBatch(input, { baseOffset: 500n, compression: type, partitionLeaderEpoch: 2 });
      const decoded = await kafkajsDecode(buf);
      expect(decoded.firstOffset).toBe('500');
      expect(decoded.lastOffsetDelta).toBe(3);
      expect(decoded.maxTimestamp).toBe(String(T0 + 100));
      expect(decoded.records).toHaveLength(4);
      decoded.records.forEach((r, i) => {
        const m = MESSAGES[i];
        expect(r.offset).toBe(String(500 + i));
        expect(r.timestamp).toBe(String(m.timestamp));
        expect((r.key as Buffer | null)?.toString() ?? null).toBe(m.key);
        expect((r.value as Buffer | null)?.toString() ?? null).toBe(m.value);
        const headers = Object.fromEntries(
          Object.entries(r.headers as Record<string, Buffer>).map(([k, v]) => [k, v.toString()]),
        );
        expect(headers).toEqual(m.headers);
      });
    });
  }

  it('byte-identical to KafkaJS for the same uncompressed input', async () => {
    const theirs = await kafkajsBatch(Types.None, { producerId: 9, sequence: 4 });
    const ours = buildRecordBatch(
      MESSAGES.map((m) => ({
        key: m.key,
        value: m.value,
        timestamp: m.timestamp,
        headers: Object.entries(m.headers).map(([key, value]) => ({ key, value })),
      })),
      { producerId: 9n, producerEpoch: 0, baseSequence: 4, partitionLeaderEpoch: 0 },
    );
    expect(ours.toString('hex')).toBe(theirs.toString('hex'));
  });
});
