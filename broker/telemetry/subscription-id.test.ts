import { uuidFromBuffer } from '../../protocol/primitives/uuid';
import { computeSubscriptionId, javaHashSetToString, javaStringHash, kafkaUuidHash } from './subscription-id';
import { crc32c } from '../../protocol/records/crc32c';

const uuid = (msb: bigint, lsb: bigint): string => {
  const b = Buffer.alloc(16);
  b.writeBigUInt64BE(msb, 0);
  b.writeBigUInt64BE(lsb, 8);
  return uuidFromBuffer(b);
};

describe("the subscription id, as Kafka's ClientMetricsManager computes it", () => {
  test("java.lang.String.hashCode, with int overflow", () => {
    expect(javaStringHash('')).toBe(0);
    expect(javaStringHash('a')).toBe(97);
    expect(javaStringHash('hello')).toBe(99162322);
    expect(javaStringHash('org.apache.kafka.producer.')).toBe(
      // Computed the same way with 64-bit arithmetic, then cast to int.
      Number(BigInt.asIntN(32, [...'org.apache.kafka.producer.'].reduce((h, c) => h * 31n + BigInt(c.charCodeAt(0)), 0n))),
    );
  });

  test('HashSet.toString orders by bucket, not by insertion; the table grows past 3/4 full', () => {
    expect(javaHashSetToString([])).toBe('[]');
    expect(javaHashSetToString(['b', 'a'])).toBe('[a, b]');
    // "q" (113) and "a" (97) share bucket 1 of 16: insertion order within the bucket.
    expect(javaHashSetToString(['q', 'b', 'a'])).toBe('[q, a, b]');
    // 13 strings: 32 buckets, where "q" (113 & 31 = 17) moves after "b".
    const letters = 'abcdefghijklq'.split('');
    expect(javaHashSetToString(letters)).toBe('[a, b, c, d, e, f, g, h, i, j, k, l, q]');
    expect(javaHashSetToString(['*'])).toBe('[*]');
  });

  test('Uuid.hashCode: the 32-bit halves of msb ^ lsb, xored', () => {
    expect(kafkaUuidHash(uuid(1n, 2n))).toBe(3);
    expect(kafkaUuidHash(uuid(0x1_0000_0000n, 0n))).toBe(1);
    expect(kafkaUuidHash(uuid(0xffffffff_00000000n, 0n))).toBe(-1);
  });

  test('crc32c(toString + interval) as int, xor the instance hash', () => {
    const id = uuid(5n, 9n);
    const crc = crc32c(Buffer.from('[a, b]1000'));
    expect(computeSubscriptionId(['b', 'a'], 1000, id)).toBe((crc | 0) ^ 12);
    expect(computeSubscriptionId(['a', 'b'], 1000, id)).toBe(computeSubscriptionId(['b', 'a'], 1000, id));
    expect(computeSubscriptionId(['a', 'b'], 2000, id)).not.toBe(computeSubscriptionId(['a', 'b'], 1000, id));
  });
});
