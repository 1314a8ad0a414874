/** murmur2 against the vectors Kafka's own UtilsTest checks, and toPositive at the edges. */
import { murmur2, toPositive } from './murmur2';

test("murmur2 gives Kafka's Utils.murmur2 results for every tail length", () => {
  const cases: [string, number][] = [
    ['21', -973932308], // 2-byte tail only
    ['foobar', -790332482], // one block + 2
    ['a-little-bit-long-string', -985981536], // whole blocks
    ['a-little-bit-longer-string', -1486304829], // + 2
    ['lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8', -58897971], // + 1
    ['abc', 479470107], // 3-byte tail
  ];
  expect(cases.map(([s]) => murmur2(Buffer.from(s)))).toEqual(cases.map(([, h]) => h));
});

test('toPositive clears the sign bit', () => {
  expect([toPositive(-1), toPositive(-2147483648), toPositive(5), toPositive(-973932308)]).toEqual([2147483647, 0, 5, -973932308 & 0x7fffffff]);
});
