/**
 * The small metadata files and names of a log directory: partition.metadata, meta.properties,
 * Kafka's file and directory names (log-file-utils.ts), and LogConfig defaults and topic property
 * parsing (log-config.ts).
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { randomUuid } from '../protocol/primitives/uuid';
import { DEFAULT_LOG_CONFIG, InvalidLogConfigError, LONG_MAX, fromTopicProperties, logConfig } from './log-config';
import { deleteDirName, filenamePrefixFromOffset, isDeleteDirName, offsetFromFileName, parseTopicPartitionName } from './log-file-utils';
import { MetaPropertiesError, ensureMetaProperties, parseProperties, readMetaProperties } from './meta-properties';
import { CorruptPartitionMetadataError, readPartitionMetadata, writePartitionMetadata } from './partition-metadata';
import { FaultyFs } from './testing/faulty-fs';
import { removeTempDirs, tempDir } from './testing/temp-dir';

afterAll(removeTempDirs);
const fs = new FaultyFs();

test('partition.metadata round trip and corruption', () => {
  const d = tempDir();
  expect(readPartitionMetadata(fs, d)).toBeUndefined();
  const id = randomUuid();
  writePartitionMetadata(fs, d, id);
  expect(readPartitionMetadata(fs, d)).toBe(id);
  nodefs.writeFileSync(path.join(d, 'partition.metadata'), 'version: 1\ntopic_id: x\n');
  expect(() => readPartitionMetadata(fs, d)).toThrow(CorruptPartitionMetadataError);
});

test('meta.properties in the KRaft form; mismatches refused', () => {
  const d = tempDir();
  const m = ensureMetaProperties(fs, d, 3, 'MkU3OEVBNTcwNTJENDM2Qk');
  const text = nodefs.readFileSync(path.join(d, 'meta.properties'), 'utf8');
  expect(text).toMatch(/^#\n#.+\nnode\.id=3\ndirectory\.id=.{22}\nversion=1\ncluster\.id=MkU3OEVBNTcwNTJENDM2Qk\n$/);
  expect(readMetaProperties(fs, d)).toEqual(m);
  expect(ensureMetaProperties(fs, d, 3, 'MkU3OEVBNTcwNTJENDM2Qk')).toEqual(m);
  expect(() => ensureMetaProperties(fs, d, 4, 'MkU3OEVBNTcwNTJENDM2Qk')).toThrow(MetaPropertiesError);
  expect(parseProperties('# c\n! c\na = 1\nb:2\n')).toEqual(new Map([['a', '1'], ['b', '2']]));
});

test('file and directory names', () => {
  expect(filenamePrefixFromOffset(15000337n)).toBe('00000000000015000337');
  expect(offsetFromFileName('00000000000015000337.timeindex')).toBe(15000337n);
  expect(offsetFromFileName('leader-epoch-checkpoint')).toBeUndefined();
  expect(parseTopicPartitionName('my-topic-12')).toEqual({ topic: 'my-topic', partition: 12 });
  expect(parseTopicPartitionName('__consumer_offsets-0')).toEqual({ topic: '__consumer_offsets', partition: 0 });
  expect(parseTopicPartitionName('nope')).toBeUndefined();
  expect(parseTopicPartitionName('t-x')).toBeUndefined();
  const del = deleteDirName({ topic: 't', partition: 1 });
  expect(isDeleteDirName(del)).toBe(true);
  expect(parseTopicPartitionName(del)).toBeUndefined();
});

test("LogConfig: Kafka's defaults and topic property parsing", () => {
  expect(DEFAULT_LOG_CONFIG).toMatchObject({
    segmentBytes: 1073741824,
    segmentMs: 604800000,
    segmentIndexBytes: 10485760,
    indexIntervalBytes: 4096,
    retentionMs: 604800000,
    retentionBytes: -1,
    maxMessageBytes: 1048588,
    messageTimestampType: 'CreateTime',
    messageTimestampBeforeMaxMs: LONG_MAX,
    messageTimestampAfterMaxMs: 3600000,
    fileDeleteDelayMs: 60000,
    flushMessages: LONG_MAX,
    flushMs: LONG_MAX,
    cleanupPolicy: ['delete'],
  });
  const c = fromTopicProperties({ 'segment.bytes': '1048576', 'cleanup.policy': 'compact,delete', 'flush.ms': '9223372036854775807', unknown: 'x' });
  expect(c.segmentBytes).toBe(1048576);
  expect(c.cleanupPolicy).toEqual(['compact', 'delete']);
  expect(c.flushMs).toBe(LONG_MAX);
  expect(() => fromTopicProperties({ 'retention.ms': 'soon' })).toThrow(InvalidLogConfigError);
  expect(() => logConfig({ messageTimestampType: 'Later' as never })).toThrow(InvalidLogConfigError);
});
