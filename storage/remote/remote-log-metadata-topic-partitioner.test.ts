/**
 * The metadata partition of a user partition, checked against values worked out from Kafka's
 * algorithm by hand: Objects.hash(lsb, msb, partition) = 31 * (31 * (31 + hash(lsb)) + hash(msb)) + partition,
 * with Long.hashCode(v) = high int ^ low int, then murmur2 of its 4 big-endian bytes, sign bit cleared,
 * modulo the partition count.
 */
import { RemoteLogMetadataTopicPartitioner, topicIdPartitionHash } from './remote-log-metadata-topic-partitioner';

// Topic id 00..01: msb 0, lsb 1, so hash = 31 * (31 * (31 + 1) + 0) + p = 30752 + p.
const ONE = 'AAAAAAAAAAAAAAAAAAAAAQ';
// Topic id ff..ff: msb = lsb = -1 and Long.hashCode(-1) = -1 ^ -1 = 0, so hash = 31 * 31 * 31 + p = 29791 + p.
const ALL_ONES = '_____________________w';

test('the int that is hashed is Java Objects.hash(lsb, msb, partition), the topic name playing no part', () => {
  expect(topicIdPartitionHash({ topicId: ONE, partition: 0 })).toBe(30752);
  expect(topicIdPartitionHash({ topicId: ONE, partition: 1 })).toBe(30753);
  expect(topicIdPartitionHash({ topicId: ALL_ONES, partition: 0 })).toBe(29791);
  // 29791 + 2147483647 overflows to -2147453858 in Java int arithmetic.
  expect(topicIdPartitionHash({ topicId: ALL_ONES, partition: 2147483647 })).toBe(-2147453858);
  // 0xdeadbeef00000000 / 0: hash(msb) = 0xdeadbeef ^ 0 = -559038737, hash(lsb) = 0:
  // 31 * (31 * 31 + -559038737) + 5 = -17330171051, which wraps (+ 5 * 2^32) to -150301867.
  expect(topicIdPartitionHash({ topicId: '3q2-7wAAAAAAAAAAAAAAAA', partition: 5 })).toBe(-150301867);
});

test('metadataPartition = toPositive(murmur2(4 big-endian bytes of the hash)) % partitions', () => {
  const p50 = new RemoteLogMetadataTopicPartitioner();
  const cases: [string, number, number][] = [
    // murmur2(00 00 78 20) = 1180230835 -> 1180230835 % 50 = 35
    [ONE, 0, 35],
    // murmur2(00 00 78 21) = -1340843442 -> & 0x7fffffff = 806640206 -> % 50 = 6
    [ONE, 1, 6],
    // murmur2(00 00 74 5f) = -104191892 -> 2043291756 % 50 = 6
    [ALL_ONES, 0, 6],
    // murmur2(80 00 74 5e) = -2119851738 -> 27631910 % 50 = 10
    [ALL_ONES, 2147483647, 10],
    // murmur2(f7 0a 93 55) = -1298379162 -> 849104486 % 50 = 36
    ['3q2-7wAAAAAAAAAAAAAAAA', 5, 36],
  ];
  expect(cases.map(([topicId, partition]) => p50.metadataPartition({ topicId, partition }))).toEqual(cases.map(([, , m]) => m));
  expect(new RemoteLogMetadataTopicPartitioner(3).metadataPartition({ topicId: ONE, partition: 0 })).toBe(1180230835 % 3);
  expect(new RemoteLogMetadataTopicPartitioner(1).metadataPartition({ topicId: ONE, partition: 1 })).toBe(0);
});

test('a partition count must be a positive integer', () => {
  for (const n of [0, -1, 1.5, NaN]) expect(() => new RemoteLogMetadataTopicPartitioner(n)).toThrow(/positive partition count/);
});
