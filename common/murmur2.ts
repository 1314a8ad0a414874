/**
 * Kafka's Utils.murmur2 and Utils.toPositive: the 32-bit MurmurHash2 (seed 0x9747b28c) that Kafka's
 * default partitioner and the tiered-storage metadata partitioner hash bytes with.
 *
 * Invariant: the result is the Java int Kafka computes for the same bytes (signed, two's complement),
 * so partition choices made with it agree with a Java broker or client.
 */

const SEED = 0x9747b28c;
const M = 0x5bd1e995;
const R = 24;

/** Kafka's Utils.murmur2: a signed 32-bit hash of `data`. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (SEED ^ length) | 0;
  const length4 = length >>> 2;
  for (let i = 0; i < length4; i++) {
    const i4 = i * 4;
    let k = data[i4] | (data[i4 + 1] << 8) | (data[i4 + 2] << 16) | (data[i4 + 3] << 24);
    k = Math.imul(k, M);
    k ^= k >>> R;
    k = Math.imul(k, M);
    h = Math.imul(h, M);
    h ^= k;
  }
  const tail = length & ~3;
  const rest = length & 3;
  if (rest > 0) {
    if (rest === 3) h ^= data[tail + 2] << 16;
    if (rest >= 2) h ^= data[tail + 1] << 8;
    h ^= data[tail];
    h = Math.imul(h, M);
  }
  h ^= h >>> 13;
  h = Math.imul(h, M);
  h ^= h >>> 15;
  return h | 0;
}

/** Kafka's Utils.toPositive: clears the sign bit (not Math.abs, which fails for the minimum int). */
export function toPositive(n: number): number {
  return n & 0x7fffffff;
}
