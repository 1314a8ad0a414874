/**
 * The cleaner's key -> latest offset map (Kafka's OffsetMap / SkimpyOffsetMap): an open-addressing
 * hash table that stores, per key, the key's MD5 (16 bytes) and an offset (8 bytes), never the key
 * itself, in a fixed memory budget, with Kafka's probing: the first probes read successive 4-byte
 * windows of the hash as big-endian ints, then degrade to linear probing.
 *
 * Invariants (Kafka's): `slots` = floor(memory / 24) is the capacity; `put` on a full map throws;
 * a key that is already present keeps its slot and takes the new offset; `latestOffset` is the last
 * offset put (or set by `updateLatestOffset`); `clear` forgets every key. The cleaner stops taking
 * keys at slots * log.cleaner.io.buffer.load.factor, so the memory bounds how many distinct keys
 * one pass can take: a dirty section with more keys is cleaned over several passes.
 *
 * One departure, memory only: Kafka allocates (and zero-fills at every clear) the whole buffer when
 * a cleaner thread starts, 128 MiB by default. Here the table starts at 64 Ki slots and doubles
 * (rehashing the stored hashes; no key is hashed twice) whenever it is half full, up to `slots`;
 * at full size it is exactly Kafka's table. Capacity, and so what a pass can take, is unchanged;
 * a broker whose compacted topics have few keys never touches more than a few MiB.
 *
 * A key's hash is MD5 computed here in JavaScript into preallocated words (~0.35 us for a 40-byte
 * key, against ~1.4 us for node:crypto's one-shot hash with its allocations); collisions are as
 * improbable as in Kafka (2^-128 per pair).
 */

/** Kafka's OffsetMap. Offsets are numbers (exact below 2^53, see cleaner.ts). */
export interface OffsetMap {
  /** Capacity: the most keys the map can hold. */
  readonly slots: number;
  /** Associates `buf[start, start + length)` (a key) with `offset`. */
  put(buf: Buffer, start: number, length: number, offset: number): void;
  /** The offset of the key, or -1 when absent. */
  get(buf: Buffer, start: number, length: number): number;
  updateLatestOffset(offset: number): void;
  clear(): void;
  /** Keys put since the last clear. */
  readonly size: number;
  /** The latest offset put, -1 after a clear. */
  readonly latestOffset: number;
  /** size / slots. */
  readonly utilization: number;
}

export const HASH_SIZE = 16;
/** Bytes per entry: the MD5 plus an 8-byte offset, as in Kafka. */
export const BYTES_PER_ENTRY = HASH_SIZE + 8;
const INITIAL_SLOTS = 1 << 16;

// ---- MD5 (RFC 1321) ------------------------------------------------------------------------

const TAIL = new Uint8Array(128);

/** MD5 of buf[start, start + length) into `out` as four little-endian words (the digest's byte order). */
export function md5Into(buf: Uint8Array, start: number, length: number, out: Int32Array): void {
  let a0 = 0x67452301 | 0;
  let b0 = 0xefcdab89 | 0;
  let c0 = 0x98badcfe | 0;
  let d0 = 0x10325476 | 0;
  const full = length >>> 6;
  const rest = length - full * 64;
  const tailBlocks = rest + 9 > 64 ? 2 : 1;
  for (let blk = 0; blk < full + tailBlocks; blk++) {
    let src: Uint8Array;
    let at: number;
    if (blk < full) {
      src = buf;
      at = start + blk * 64;
    } else {
      if (blk === full) {
        TAIL.fill(0);
        for (let i = 0; i < rest; i++) TAIL[i] = buf[start + full * 64 + i];
        TAIL[rest] = 0x80;
        const bits = length * 8;
        const end = tailBlocks * 64;
        TAIL[end - 8] = bits & 0xff;
        TAIL[end - 7] = (bits >>> 8) & 0xff;
        TAIL[end - 6] = (bits >>> 16) & 0xff;
        TAIL[end - 5] = (bits >>> 24) & 0xff;
        const hi = Math.floor(bits / 4294967296);
        TAIL[end - 4] = hi & 0xff;
        TAIL[end - 3] = (hi >>> 8) & 0xff;
      }
      src = TAIL;
      at = (blk - full) * 64;
    }
    const m0 = src[at + 0] | (src[at + 1] << 8) | (src[at + 2] << 16) | (src[at + 3] << 24);
    const m1 = src[at + 4] | (src[at + 5] << 8) | (src[at + 6] << 16) | (src[at + 7] << 24);
    const m2 = src[at + 8] | (src[at + 9] << 8) | (src[at + 10] << 16) | (src[at + 11] << 24);
    const m3 = src[at + 12] | (src[at + 13] << 8) | (src[at + 14] << 16) | (src[at + 15] << 24);
    const m4 = src[at + 16] | (src[at + 17] << 8) | (src[at + 18] << 16) | (src[at + 19] << 24);
    const m5 = src[at + 20] | (src[at + 21] << 8) | (src[at + 22] << 16) | (src[at + 23] << 24);
    const m6 = src[at + 24] | (src[at + 25] << 8) | (src[at + 26] << 16) | (src[at + 27] << 24);
    const m7 = src[at + 28] | (src[at + 29] << 8) | (src[at + 30] << 16) | (src[at + 31] << 24);
    const m8 = src[at + 32] | (src[at + 33] << 8) | (src[at + 34] << 16) | (src[at + 35] << 24);
    const m9 = src[at + 36] | (src[at + 37] << 8) | (src[at + 38] << 16) | (src[at + 39] << 24);
    const m10 = src[at + 40] | (src[at + 41] << 8) | (src[at + 42] << 16) | (src[at + 43] << 24);
    const m11 = src[at + 44] | (src[at + 45] << 8) | (src[at + 46] << 16) | (src[at + 47] << 24);
    const m12 = src[at + 48] | (src[at + 49] << 8) | (src[at + 50] << 16) | (src[at + 51] << 24);
    const m13 = src[at + 52] | (src[at + 53] << 8) | (src[at + 54] << 16) | (src[at + 55] << 24);
    const m14 = src[at + 56] | (src[at + 57] << 8) | (src[at + 58] << 16) | (src[at + 59] << 24);
    const m15 = src[at + 60] | (src[at + 61] << 8) | (src[at + 62] << 16) | (src[at + 63] << 24);
    // The 64 steps written out in RFC 1321's order (constants inline, no table or branch: ~30%
    // faster than a loop over tables here).
    let A = a0;
    let B = b0;
    let C = c0;
    let D = d0;
    let n = 0;
    n = (A + ((B & C) | (~B & D)) + m0 + -680876936) | 0;
    A = (((n << 7) | (n >>> 25)) + B) | 0;
    n = (D + ((A & B) | (~A & C)) + m1 + -389564586) | 0;
    D = (((n << 12) | (n >>> 20)) + A) | 0;
    n = (C + ((D & A) | (~D & B)) + m2 + 606105819) | 0;
    C = (((n << 17) | (n >>> 15)) + D) | 0;
    n = (B + ((C & D) | (~C & A)) + m3 + -1044525330) | 0;
    B = (((n << 22) | (n >>> 10)) + C) | 0;
    n = (A + ((B & C) | (~B & D)) + m4 + -176418897) | 0;
    A = (((n << 7) | (n >>> 25)) + B) | 0;
    n = (D + ((A & B) | (~A & C)) + m5 + 1200080426) | 0;
    D = (((n << 12) | (n >>> 20)) + A) | 0;
    n = (C + ((D & A) | (~D & B)) + m6 + -1473231341) | 0;
    C = (((n << 17) | (n >>> 15)) + D) | 0;
    n = (B + ((C & D) | (~C & A)) + m7 + -45705983) | 0;
    B = (((n << 22) | (n >>> 10)) + C) | 0;
    n = (A + ((B & C) | (~B & D)) + m8 + 1770035416) | 0;
    A = (((n << 7) | (n >>> 25)) + B) | 0;
    n = (D + ((A & B) | (~A & C)) + m9 + -1958414417) | 0;
    D = (((n << 12) | (n >>> 20)) + A) | 0;
    n = (C + ((D & A) | (~D & B)) + m10 + -42063) | 0;
    C = (((n << 17) | (n >>> 15)) + D) | 0;
    n = (B + ((C & D) | (~C & A)) + m11 + -1990404162) | 0;
    B = (((n << 22) | (n >>> 10)) + C) | 0;
    n = (A + ((B & C) | (~B & D)) + m12 + 1804603682) | 0;
    A = (((n << 7) | (n >>> 25)) + B) | 0;
    n = (D + ((A & B) | (~A & C)) + m13 + -40341101) | 0;
    D = (((n << 12) | (n >>> 20)) + A) | 0;
    n = (C + ((D & A) | (~D & B)) + m14 + -1502002290) | 0;
    C = (((n << 17) | (n >>> 15)) + D) | 0;
    n = (B + ((C & D) | (~C & A)) + m15 + 1236535329) | 0;
    B = (((n << 22) | (n >>> 10)) + C) | 0;
    n = (A + ((B & D) | (C & ~D)) + m1 + -165796510) | 0;
    A = (((n << 5) | (n >>> 27)) + B) | 0;
    n = (D + ((A & C) | (B & ~C)) + m6 + -1069501632) | 0;
    D = (((n << 9) | (n >>> 23)) + A) | 0;
    n = (C + ((D & B) | (A & ~B)) + m11 + 643717713) | 0;
    C = (((n << 14) | (n >>> 18)) + D) | 0;
    n = (B + ((C & A) | (D & ~A)) + m0 + -373897302) | 0;
    B = (((n << 20) | (n >>> 12)) + C) | 0;
    n = (A + ((B & D) | (C & ~D)) + m5 + -701558691) | 0;
    A = (((n << 5) | (n >>> 27)) + B) | 0;
    n = (D + ((A & C) | (B & ~C)) + m10 + 38016083) | 0;
    D = (((n << 9) | (n >>> 23)) + A) | 0;
    n = (C + ((D & B) | (A & ~B)) + m15 + -660478335) | 0;
    C = (((n << 14) | (n >>> 18)) + D) | 0;
    n = (B + ((C & A) | (D & ~A)) + m4 + -405537848) | 0;
    B = (((n << 20) | (n >>> 12)) + C) | 0;
    n = (A + ((B & D) | (C & ~D)) + m9 + 568446438) | 0;
    A = (((n << 5) | (n >>> 27)) + B) | 0;
    n = (D + ((A & C) | (B & ~C)) + m14 + -1019803690) | 0;
    D = (((n << 9) | (n >>> 23)) + A) | 0;
    n = (C + ((D & B) | (A & ~B)) + m3 + -187363961) | 0;
    C = (((n << 14) | (n >>> 18)) + D) | 0;
    n = (B + ((C & A) | (D & ~A)) + m8 + 1163531501) | 0;
    B = (((n << 20) | (n >>> 12)) + C) | 0;
    n = (A + ((B & D) | (C & ~D)) + m13 + -1444681467) | 0;
    A = (((n << 5) | (n >>> 27)) + B) | 0;
    n = (D + ((A & C) | (B & ~C)) + m2 + -51403784) | 0;
    D = (((n << 9) | (n >>> 23)) + A) | 0;
    n = (C + ((D & B) | (A & ~B)) + m7 + 1735328473) | 0;
    C = (((n << 14) | (n >>> 18)) + D) | 0;
    n = (B + ((C & A) | (D & ~A)) + m12 + -1926607734) | 0;
    B = (((n << 20) | (n >>> 12)) + C) | 0;
    n = (A + (B ^ C ^ D) + m5 + -378558) | 0;
    A = (((n << 4) | (n >>> 28)) + B) | 0;
    n = (D + (A ^ B ^ C) + m8 + -2022574463) | 0;
    D = (((n << 11) | (n >>> 21)) + A) | 0;
    n = (C + (D ^ A ^ B) + m11 + 1839030562) | 0;
    C = (((n << 16) | (n >>> 16)) + D) | 0;
    n = (B + (C ^ D ^ A) + m14 + -35309556) | 0;
    B = (((n << 23) | (n >>> 9)) + C) | 0;
    n = (A + (B ^ C ^ D) + m1 + -1530992060) | 0;
    A = (((n << 4) | (n >>> 28)) + B) | 0;
    n = (D + (A ^ B ^ C) + m4 + 1272893353) | 0;
    D = (((n << 11) | (n >>> 21)) + A) | 0;
    n = (C + (D ^ A ^ B) + m7 + -155497632) | 0;
    C = (((n << 16) | (n >>> 16)) + D) | 0;
    n = (B + (C ^ D ^ A) + m10 + -1094730640) | 0;
    B = (((n << 23) | (n >>> 9)) + C) | 0;
    n = (A + (B ^ C ^ D) + m13 + 681279174) | 0;
    A = (((n << 4) | (n >>> 28)) + B) | 0;
    n = (D + (A ^ B ^ C) + m0 + -358537222) | 0;
    D = (((n << 11) | (n >>> 21)) + A) | 0;
    n = (C + (D ^ A ^ B) + m3 + -722521979) | 0;
    C = (((n << 16) | (n >>> 16)) + D) | 0;
    n = (B + (C ^ D ^ A) + m6 + 76029189) | 0;
    B = (((n << 23) | (n >>> 9)) + C) | 0;
    n = (A + (B ^ C ^ D) + m9 + -640364487) | 0;
    A = (((n << 4) | (n >>> 28)) + B) | 0;
    n = (D + (A ^ B ^ C) + m12 + -421815835) | 0;
    D = (((n << 11) | (n >>> 21)) + A) | 0;
    n = (C + (D ^ A ^ B) + m15 + 530742520) | 0;
    C = (((n << 16) | (n >>> 16)) + D) | 0;
    n = (B + (C ^ D ^ A) + m2 + -995338651) | 0;
    B = (((n << 23) | (n >>> 9)) + C) | 0;
    n = (A + (C ^ (B | ~D)) + m0 + -198630844) | 0;
    A = (((n << 6) | (n >>> 26)) + B) | 0;
    n = (D + (B ^ (A | ~C)) + m7 + 1126891415) | 0;
    D = (((n << 10) | (n >>> 22)) + A) | 0;
    n = (C + (A ^ (D | ~B)) + m14 + -1416354905) | 0;
    C = (((n << 15) | (n >>> 17)) + D) | 0;
    n = (B + (D ^ (C | ~A)) + m5 + -57434055) | 0;
    B = (((n << 21) | (n >>> 11)) + C) | 0;
    n = (A + (C ^ (B | ~D)) + m12 + 1700485571) | 0;
    A = (((n << 6) | (n >>> 26)) + B) | 0;
    n = (D + (B ^ (A | ~C)) + m3 + -1894986606) | 0;
    D = (((n << 10) | (n >>> 22)) + A) | 0;
    n = (C + (A ^ (D | ~B)) + m10 + -1051523) | 0;
    C = (((n << 15) | (n >>> 17)) + D) | 0;
    n = (B + (D ^ (C | ~A)) + m1 + -2054922799) | 0;
    B = (((n << 21) | (n >>> 11)) + C) | 0;
    n = (A + (C ^ (B | ~D)) + m8 + 1873313359) | 0;
    A = (((n << 6) | (n >>> 26)) + B) | 0;
    n = (D + (B ^ (A | ~C)) + m15 + -30611744) | 0;
    D = (((n << 10) | (n >>> 22)) + A) | 0;
    n = (C + (A ^ (D | ~B)) + m6 + -1560198380) | 0;
    C = (((n << 15) | (n >>> 17)) + D) | 0;
    n = (B + (D ^ (C | ~A)) + m13 + 1309151649) | 0;
    B = (((n << 21) | (n >>> 11)) + C) | 0;
    n = (A + (C ^ (B | ~D)) + m4 + -145523070) | 0;
    A = (((n << 6) | (n >>> 26)) + B) | 0;
    n = (D + (B ^ (A | ~C)) + m11 + -1120210379) | 0;
    D = (((n << 10) | (n >>> 22)) + A) | 0;
    n = (C + (A ^ (D | ~B)) + m2 + 718787259) | 0;
    C = (((n << 15) | (n >>> 17)) + D) | 0;
    n = (B + (D ^ (C | ~A)) + m9 + -343485551) | 0;
    B = (((n << 21) | (n >>> 11)) + C) | 0;
    a0 = (a0 + A) | 0;
    b0 = (b0 + B) | 0;
    c0 = (c0 + C) | 0;
    d0 = (d0 + D) | 0;
  }
  out[0] = a0;
  out[1] = b0;
  out[2] = c0;
  out[3] = d0;
}

function bswap(w: number): number {
  return ((w & 0xff) << 24) | ((w & 0xff00) << 8) | ((w >>> 8) & 0xff00) | (w >>> 24);
}

/** Kafka's Utils.abs: |n|, with Integer.MIN_VALUE mapped to 0. */
function abs32(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n);
}

export class SkimpyOffsetMap implements OffsetMap {
  readonly slots: number;
  readonly bytesPerEntry = BYTES_PER_ENTRY;
  /** Slots of the table in use now (<= slots). */
  private capacity: number;
  /** Per slot: 4 hash words (ints 0-3) and the offset (as a float64 over ints 4-5). */
  private words: Int32Array;
  private offsets: Float64Array;
  private entries = 0;
  private lastOffset = -1;
  private readonly hash = new Int32Array(4);
  /** The hash as big-endian bytes, for Kafka's probe windows. */
  private readonly hashBytes = new Uint8Array(HASH_SIZE);
  /** Lookups and probes since the last clear (Kafka's collisionRate). */
  lookups = 0;
  probes = 0;

  /** `memory`: the bytes this map may use (Kafka: log.cleaner.dedupe.buffer.size / log.cleaner.threads, at most 2^31 - 1). */
  constructor(memory: number) {
    this.slots = Math.floor(memory / BYTES_PER_ENTRY);
    if (this.slots < 1) throw new Error(`an offset map of ${memory} bytes cannot hold one entry`);
    this.capacity = Math.min(this.slots, INITIAL_SLOTS);
    const buf = new ArrayBuffer(this.capacity * BYTES_PER_ENTRY);
    this.words = new Int32Array(buf);
    this.offsets = new Float64Array(buf);
  }

  get size(): number {
    return this.entries;
  }

  get latestOffset(): number {
    return this.lastOffset;
  }

  get utilization(): number {
    return this.entries / this.slots;
  }

  /** Bytes the table occupies now (it grows to slots * 24). */
  get allocatedBytes(): number {
    return this.capacity * BYTES_PER_ENTRY;
  }

  collisionRate(): number {
    return this.lookups === 0 ? 0 : (this.probes - this.lookups) / this.lookups;
  }

  private hashKey(buf: Buffer, start: number, length: number): void {
    md5Into(buf, start, length, this.hash);
    const hb = this.hashBytes;
    for (let w = 0; w < 4; w++) {
      const v = this.hash[w];
      hb[w * 4] = v & 0xff;
      hb[w * 4 + 1] = (v >>> 8) & 0xff;
      hb[w * 4 + 2] = (v >>> 16) & 0xff;
      hb[w * 4 + 3] = (v >>> 24) & 0xff;
    }
  }

  /** Kafka's positionOf: the slot of the attempt-th probe (hash windows, then linear). */
  private slotOf(attempt: number, tableSlots: number): number {
    const hb = this.hashBytes;
    const j = Math.min(attempt, HASH_SIZE - 4);
    const window = (hb[j] << 24) | (hb[j + 1] << 16) | (hb[j + 2] << 8) | hb[j + 3];
    const probe = (window + Math.max(0, attempt - HASH_SIZE + 4)) | 0;
    this.probes++;
    return abs32(probe) % tableSlots;
  }

  private isEmpty(slot: number): boolean {
    const w = this.words;
    const i = slot * 6;
    return w[i] === 0 && w[i + 1] === 0 && w[i + 2] === 0 && w[i + 3] === 0 && w[i + 4] === 0 && w[i + 5] === 0;
  }

  private matches(slot: number): boolean {
    const w = this.words;
    const h = this.hash;
    const i = slot * 6;
    return w[i] === h[0] && w[i + 1] === h[1] && w[i + 2] === h[2] && w[i + 3] === h[3];
  }

  put(buf: Buffer, start: number, length: number, offset: number): void {
    if (this.entries >= this.slots) {
      throw new Error(`attempted to add a new entry to a full offset map, entries: ${this.entries}, slots: ${this.slots}`);
    }
    this.lookups++;
    this.hashKey(buf, start, length);
    let attempt = 0;
    let slot = this.slotOf(attempt, this.capacity);
    while (!this.isEmpty(slot)) {
      if (this.matches(slot)) {
        this.offsets[slot * 3 + 2] = offset;
        this.lastOffset = offset;
        return;
      }
      attempt++;
      slot = this.slotOf(attempt, this.capacity);
    }
    const w = this.words;
    const i = slot * 6;
    w[i] = this.hash[0];
    w[i + 1] = this.hash[1];
    w[i + 2] = this.hash[2];
    w[i + 3] = this.hash[3];
    this.offsets[slot * 3 + 2] = offset;
    this.lastOffset = offset;
    this.entries++;
    if (this.capacity < this.slots && this.entries * 2 > this.capacity) this.grow();
  }

  get(buf: Buffer, start: number, length: number): number {
    this.lookups++;
    this.hashKey(buf, start, length);
    // Guard against looping on a full table: linear probing visits every slot within this many.
    const maxAttempts = this.capacity + HASH_SIZE - 4;
    for (let attempt = 0; attempt < maxAttempts; attempt++) {
      const slot = this.slotOf(attempt, this.capacity);
      if (this.isEmpty(slot)) return -1;
      if (this.matches(slot)) return this.offsets[slot * 3 + 2];
    }
    return -1;
  }

  /** Doubles the table (capped at `slots`) and reinserts every entry by its stored hash. */
  private grow(): void {
    const oldWords = this.words;
    const oldOffsets = this.offsets;
    const oldCapacity = this.capacity;
    this.capacity = Math.min(this.slots, oldCapacity * 2);
    const buf = new ArrayBuffer(this.capacity * BYTES_PER_ENTRY);
    this.words = new Int32Array(buf);
    this.offsets = new Float64Array(buf);
    const h = this.hash;
    const hb = this.hashBytes;
    for (let s = 0; s < oldCapacity; s++) {
      const i = s * 6;
      if (oldWords[i] === 0 && oldWords[i + 1] === 0 && oldWords[i + 2] === 0 && oldWords[i + 3] === 0 && oldWords[i + 4] === 0 && oldWords[i + 5] === 0) continue;
      for (let k = 0; k < 4; k++) {
        h[k] = oldWords[i + k];
        const be = bswap(h[k]);
        hb[k * 4] = be >>> 24;
        hb[k * 4 + 1] = (be >>> 16) & 0xff;
        hb[k * 4 + 2] = (be >>> 8) & 0xff;
        hb[k * 4 + 3] = be & 0xff;
      }
      let attempt = 0;
      let slot = this.slotOf(attempt, this.capacity);
      while (!this.isEmpty(slot)) slot = this.slotOf(++attempt, this.capacity);
      const j = slot * 6;
      for (let k = 0; k < 4; k++) this.words[j + k] = h[k];
      this.offsets[slot * 3 + 2] = oldOffsets[s * 3 + 2];
    }
  }

  updateLatestOffset(offset: number): void {
    this.lastOffset = offset;
  }

  /** Forgets every key; the table goes back to its initial size (memory is given back between passes). */
  clear(): void {
    this.entries = 0;
    this.lookups = 0;
    this.probes = 0;
    this.lastOffset = -1;
    const initial = Math.min(this.slots, INITIAL_SLOTS);
    if (this.capacity !== initial) {
      this.capacity = initial;
      const buf = new ArrayBuffer(this.capacity * BYTES_PER_ENTRY);
      this.words = new Int32Array(buf);
      this.offsets = new Float64Array(buf);
    } else {
      this.words.fill(0);
    }
  }
}
