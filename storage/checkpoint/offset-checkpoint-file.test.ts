import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { FaultyFs } from '../testing/faulty-fs';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { CorruptCheckpointError, OffsetCheckpointFile } from './offset-checkpoint-file';
import { topicPartitionKey } from '../../common/topic-partition';

afterAll(removeTempDirs);

test("writes Kafka's text format and reads it back", () => {
  const file = path.join(tempDir(), 'recovery-point-offset-checkpoint');
  const cp = new OffsetCheckpointFile(new FaultyFs(), file);
  expect(cp.read().size).toBe(0);
  cp.write([
    { tp: { topic: 'a.b-c', partition: 0 }, offset: 42n },
    { tp: { topic: '__consumer_offsets', partition: 49 }, offset: 9_007_199_254_740_993n },
  ]);
  expect(nodefs.readFileSync(file, 'utf8')).toBe('0\n2\na.b-c 0 42\n__consumer_offsets 49 9007199254740993\n');
  const m = cp.read();
  expect(m.get(topicPartitionKey('a.b-c', 0))?.offset).toBe(42n);
  expect(m.get(topicPartitionKey('__consumer_offsets', 49))?.offset).toBe(9_007_199_254_740_993n);
  expect(nodefs.existsSync(file + '.tmp')).toBe(false);
});

test.each([
  ['', 'missing version'],
  ['1\n0\n', 'unrecognized version'],
  ['0\nx\n', 'bad entry count'],
  ['0\n2\nt 0 1\n', 'expected 2 entries'],
  ['0\n1\nt zero 1\n', 'bad entry'],
  ['0\n1\nt 0\n', 'bad entry'],
])('corrupt file %j is reported (%s)', (text, msg) => {
  const file = path.join(tempDir(), 'cp');
  nodefs.writeFileSync(file, text);
  const cp = new OffsetCheckpointFile(new FaultyFs(), file);
  expect(() => cp.read()).toThrow(CorruptCheckpointError);
  expect(() => cp.read()).toThrow(msg);
});

test('a failed write leaves the previous checkpoint in place', () => {
  const fs = new FaultyFs();
  const file = path.join(tempDir(), 'cp');
  const cp = new OffsetCheckpointFile(fs, file);
  cp.write([{ tp: { topic: 't', partition: 0 }, offset: 1n }]);
  fs.failNext({ op: 'rename', path: 'cp.tmp', errno: 'EIO' });
  expect(() => cp.write([{ tp: { topic: 't', partition: 0 }, offset: 2n }])).toThrow(/EIO/);
  expect(cp.read().get(topicPartitionKey('t', 0))?.offset).toBe(1n);
});
