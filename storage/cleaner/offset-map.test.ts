/**
 * SkimpyOffsetMap (Kafka's OffsetMapTest), its MD5, its growth from a small table to its full
 * capacity, and the capacity bound that limits how many keys one cleaning pass can take.
 */
import { createHash } from 'node:crypto';
import { BYTES_PER_ENTRY, SkimpyOffsetMap, md5Into } from './offset-map';

const MEMORY_SIZE = 4096;
const key = (k: number | string) => Buffer.from(String(k));
const put = (m: SkimpyOffsetMap, k: number | string, o: number) => {
  const b = key(k);
  m.put(b, 0, b.length, o);
};
const get = (m: SkimpyOffsetMap, k: number | string) => {
  const b = key(k);
  return m.get(b, 0, b.length);
};

test('md5Into is RFC 1321 MD5 for keys of every length around the block boundaries', () => {
  const out = new Int32Array(4);
  for (const len of [0, 1, 3, 54, 55, 56, 57, 63, 64, 65, 119, 120, 127, 128, 129, 1000]) {
    const buf = Buffer.alloc(len + 10);
    for (let i = 0; i < buf.length; i++) buf[i] = (i * 31 + len) & 0xff;
    md5Into(buf, 5, len, out);
    const mine = Buffer.from(out.buffer.slice(0));
    expect(mine.toString('hex')).toBe(createHash('md5').update(buf.subarray(5, 5 + len)).digest('hex'));
  }
});

test.each([10, 100, 1000, 5000])('basic validation with %i items (testBasicValidation)', (items) => {
  const map = new SkimpyOffsetMap(items * 48);
  for (let i = 0; i < items; i++) put(map, i, i);
  for (let i = 0; i < items; i++) expect(get(map, i)).toBe(i);
});

test('clear forgets every key (testClear)', () => {
  const map = new SkimpyOffsetMap(MEMORY_SIZE);
  for (let i = 0; i < 10; i++) put(map, i, i);
  for (let i = 0; i < 10; i++) expect(get(map, i)).toBe(i);
  map.clear();
  for (let i = 0; i < 10; i++) expect(get(map, i)).toBe(-1);
  expect(map.size).toBe(0);
  expect(map.latestOffset).toBe(-1);
});

test('a full map still answers, absent keys with -1, and refuses a new entry (testGetWhenFull)', () => {
  const map = new SkimpyOffsetMap(MEMORY_SIZE);
  expect(map.slots).toBe(Math.floor(MEMORY_SIZE / BYTES_PER_ENTRY));
  let i = 37;
  while (map.size < map.slots) put(map, i, i++);
  expect(get(map, i)).toBe(-1);
  expect(get(map, i - 1)).toBe(i - 1);
  // Kafka's put checks the size first: a full map takes nothing, even for a key it holds.
  expect(() => put(map, 'one more', 1)).toThrow(/full offset map/);
  expect(() => put(map, 37, 1000)).toThrow(/full offset map/);
});

test('latestOffset, updateLatestOffset and utilization (testLatestOffset, testUpdateLatestOffset, testUtilization)', () => {
  const map = new SkimpyOffsetMap(MEMORY_SIZE);
  expect(map.utilization).toBe(0);
  let i = 37;
  while (map.size < map.slots) {
    put(map, i, i);
    expect(map.utilization).toBe(map.size / map.slots);
    i++;
  }
  expect(map.latestOffset).toBe(i - 1);
  map.updateLatestOffset(40);
  expect(map.latestOffset).toBe(40);
  expect(get(map, 40)).toBe(40);
});

test('the table grows from 64 Ki slots to its capacity without losing a key, and shrinks back on clear', () => {
  const memory = 4 * 1024 * 1024; // 174,762 slots
  const map = new SkimpyOffsetMap(memory);
  expect(map.allocatedBytes).toBe((1 << 16) * BYTES_PER_ENTRY);
  const n = Math.floor(map.slots * 0.9);
  for (let i = 0; i < n; i++) put(map, `key-${i}`, i);
  expect(map.allocatedBytes).toBe(map.slots * BYTES_PER_ENTRY);
  expect(map.size).toBe(n);
  for (let i = 0; i < n; i += 997) expect(get(map, `key-${i}`)).toBe(i);
  expect(get(map, 'absent')).toBe(-1);
  expect(map.collisionRate()).toBeLessThan(5);
  map.clear();
  expect(map.allocatedBytes).toBe((1 << 16) * BYTES_PER_ENTRY);
  expect(get(map, 'key-0')).toBe(-1);
});

test('offsets beyond 2^32 are kept exactly', () => {
  const map = new SkimpyOffsetMap(MEMORY_SIZE);
  put(map, 'a', 2 ** 40 + 3);
  expect(get(map, 'a')).toBe(2 ** 40 + 3);
});
