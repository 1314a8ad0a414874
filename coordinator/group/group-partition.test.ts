import { javaStringHashCode, kafkaAbs, partitionForGroup } from './group-partition';

describe('group -> __consumer_offsets partition', () => {
  test('String.hashCode as Java computes it (UTF-16 units, int32 overflow)', () => {
    expect(javaStringHashCode('')).toBe(0);
    expect(javaStringHashCode('a')).toBe(97);
    expect(javaStringHashCode('hello')).toBe(99162322);
    expect(javaStringHashCode('hello world')).toBe(1794106052);
    expect(javaStringHashCode('polygenelubricants')).toBe(-2147483648);
    // Characters outside the BMP hash as their two surrogates, as in Java.
    expect(javaStringHashCode('\u{1F600}')).toBe(0xd83d * 31 + 0xde00);
  });

  test("Kafka's Utils.abs: Math.abs, except Integer.MIN_VALUE -> 0", () => {
    expect(kafkaAbs(-5)).toBe(5);
    expect(kafkaAbs(7)).toBe(7);
    expect(kafkaAbs(-2147483648)).toBe(0);
  });

  test('abs(hash) % partitions, which differs from the producer-style mask for negative hashes', () => {
    expect(partitionForGroup('test-group', 50)).toBe(12);
    expect(partitionForGroup('polygenelubricants', 50)).toBe(0);
    // hash -1906497762: Utils.abs gives 12; (h & 0x7fffffff) % 50 would give 36.
    expect(javaStringHashCode('my-group')).toBe(-1906497762);
    expect(partitionForGroup('my-group', 50)).toBe(12);
    expect(partitionForGroup('my-group', 1)).toBe(0);
  });
});
