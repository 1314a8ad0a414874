/**
 * Startup topic arguments (`--create-topic`, `topics`): the name[:partitions[:rf]][:key=value...]
 * syntax, its errors, the CLI's repeatable option, and creation on a combined node (an existing
 * topic is kept on a restart; a refused one fails the start with the controller's error).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { parseStartupTopic } from './startup-topics';
import { parseArgs } from './cli';
import { startBroker } from './index';
import { CapturingLogger } from '../common/testing/mock-time';

test('the syntax: name, counts, empty counts and configs', () => {
  expect(parseStartupTopic('orders')).toEqual({ name: 'orders' });
  expect(parseStartupTopic('orders:6')).toEqual({ name: 'orders', partitions: 6 });
  expect(parseStartupTopic('orders:6:3')).toEqual({ name: 'orders', partitions: 6, replicationFactor: 3 });
  expect(parseStartupTopic('orders::3')).toEqual({ name: 'orders', replicationFactor: 3 });
  expect(parseStartupTopic('orders:2:cleanup.policy=compact:retention.ms=1000')).toEqual({
    name: 'orders',
    partitions: 2,
    config: { 'cleanup.policy': 'compact', 'retention.ms': '1000' },
  });
  expect(parseStartupTopic('t:1:1:x=a=b')).toEqual({ name: 't', partitions: 1, replicationFactor: 1, config: { x: 'a=b' } });
});

test('bad arguments say what is wrong', () => {
  expect(() => parseStartupTopic(':3')).toThrow('no name');
  expect(() => parseStartupTopic('t:zero')).toThrow('partitions "zero" is not a positive integer');
  expect(() => parseStartupTopic('t:0')).toThrow('partitions "0" is not a positive integer');
  expect(() => parseStartupTopic('t:1:-1')).toThrow('replication factor "-1" is not a positive integer');
  expect(() => parseStartupTopic('t:1:1:2')).toThrow('"2" is neither a count nor key=value');
  expect(() => parseStartupTopic('t:a=b:3')).toThrow('"3" after the configs');
  expect(() => parseStartupTopic('t:=b')).toThrow('config without a name');
});

test('--create-topic is repeatable and checked while parsing', () => {
  expect(parseArgs(['--create-topic', 'a:2', '--create-topic=b']).topics).toEqual(['a:2', 'b']);
  expect(parseArgs(['--port', '0']).topics).toBeUndefined();
  expect(() => parseArgs(['--create-topic', 'a:x'])).toThrow('--create-topic: invalid topic "a:x"');
  expect(() => parseArgs(['--process-roles', 'controller', '--create-topic', 'a'])).toThrow('a controller alone has no brokers');
});

test('a combined node creates them before it is ready, keeps them on a restart, and refuses a bad config', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-startup-topics-'));
  try {
    const log = new CapturingLogger();
    let b = await startBroker({ dataDir: dir, logger: log, topics: ['st-a:3', { name: 'st-b', config: { 'cleanup.policy': 'compact' } }] });
    expect(b.server.metadata.topic('st-a')?.partitions.size).toBe(3);
    expect(b.server.metadata.topicConfig('st-b').get('cleanup.policy')).toBe('compact');
    await b.close();
    b = await startBroker({ dataDir: dir, logger: log, topics: ['st-a:5'] });
    expect(b.server.metadata.topic('st-a')?.partitions.size).toBe(3);
    expect(log.matching(/startup topic st-a already exists; left as it is/)).toHaveLength(1);
    await b.close();
    await expect(startBroker({ dataDir: dir, logger: log, topics: ['st-c:1:1:cleanup.policy=sometimes'] })).rejects.toThrow(/cannot create startup topics: st-c: INVALID_CONFIG/);
    expect(log.matching(/startup topics failed; shutting down/)).toHaveLength(1);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}, 30_000);
