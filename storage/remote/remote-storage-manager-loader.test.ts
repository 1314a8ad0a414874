/**
 * The loader: each value of remote.log.storage.manager.class.name (LocalTieredStorage, Aiven's RSM
 * with S3Storage and with another backend, a JS module by path exporting a class, a factory, a
 * named export, by module name, a Java class, a module that is not an RSM, nothing), the
 * properties prefix and broker.id handed to configure(), and class.path ignored with a log line.
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { CapturingLogger } from '../../common/testing/mock-time';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { IndexType } from './remote-storage-manager';
import { InvalidConfigurationError } from './remote-storage-config';
import { LocalTieredStorage } from './local-tiered-storage';
import { S3RemoteStorageManager } from './s3-remote-storage-manager';
import { createRemoteStorageManager, loadRemoteStorageManager, remoteStorageManagerConfigs } from './remote-storage-manager-loader';
import { buildSegments, metadataFor, randomId } from './remote-storage-manager.conformance';

afterAll(removeTempDirs);

const KEY = 'remote.log.storage.manager.class.name';

/** A CommonJS RSM module in a temp dir that records what configure() got (in memory, one segment's log). */
function writeModule(dir: string, name: string, shape: 'class' | 'factory' | 'named' | 'not-an-rsm'): string {
  const body = `
class MemoryRsm {
  constructor() { this.configs = null; this.logs = new Map(); }
  configure(c) { this.configs = c; }
  async copyLogSegmentData(m, d) { this.logs.set(m.remoteLogSegmentId.id, require('node:fs').readFileSync(d.logSegment)); return Buffer.from('custom'); }
  async fetchLogSegment(m, s, e) { const b = this.logs.get(m.remoteLogSegmentId.id); return b.subarray(s, e === undefined ? b.length : e + 1); }
  async fetchIndex() { throw new Error('no indexes here'); }
  async deleteLogSegmentData(m) { this.logs.delete(m.remoteLogSegmentId.id); }
  async close() {}
}
${shape === 'class' ? 'module.exports = MemoryRsm;' : ''}
${shape === 'factory' ? 'module.exports = async () => { const r = new MemoryRsm(); r.madeBy = "factory"; return r; };' : ''}
${shape === 'named' ? 'exports.Other = 1; exports.TieredStore = MemoryRsm;' : ''}
${shape === 'not-an-rsm' ? 'module.exports = () => ({ configure() {} });' : ''}
`;
  const file = path.join(dir, name);
  nodefs.writeFileSync(file, body);
  return file;
}

async function refusal(p: Promise<unknown>): Promise<InvalidConfigurationError> {
  const e = await p.then(
    () => undefined,
    (x: unknown) => x,
  );
  expect(e).toBeInstanceOf(InvalidConfigurationError);
  return e as InvalidConfigurationError;
}

describe('remote.log.storage.manager.class.name', () => {
  test("Kafka's LocalTieredStorage class name gives the local one, configured with the rsm.config. keys and broker.id", async () => {
    const dir = tempDir('krill-loader-');
    const rsm = await loadRemoteStorageManager(
      new Map([
        [KEY, 'org.apache.kafka.server.log.remote.storage.LocalTieredStorage'],
        ['rsm.config.dir', dir],
        ['rsm.config.delete.on.close', 'true'],
        ['remote.log.storage.system.enable', 'true'],
      ]),
      { brokerId: 4 },
    );
    expect(rsm).toBeInstanceOf(LocalTieredStorage);
    const root = (rsm as LocalTieredStorage).storageRoot!;
    expect(root).toBe(path.join(dir, 'kafka-tiered-storage'));
    const [seg] = buildSegments('loaded', 0);
    const m = metadataFor({ topic: 'loaded', partition: 0, topicId: randomId() }, seg);
    await rsm.copyLogSegmentData(m, seg.data);
    expect((await rsm.fetchIndex(m, IndexType.OFFSET)).equals(seg.indexes[IndexType.OFFSET]!)).toBe(true);
    await rsm.close();
    expect(nodefs.existsSync(root)).toBe(false);
  });

  test("Aiven's RSM with the S3Storage backend gives the S3 one; another backend or none is refused naming the prefixed key", async () => {
    const aiven = {
      [KEY]: 'io.aiven.kafka.tieredstorage.RemoteStorageManager',
      'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage',
      'rsm.config.storage.s3.bucket.name': 'b',
      'rsm.config.storage.s3.region': 'eu-west-1',
      'rsm.config.chunk.size': '4194304',
    };
    const created = await createRemoteStorageManager(aiven, { brokerId: 2 });
    expect(created.manager).toBeInstanceOf(S3RemoteStorageManager);
    expect(created.configs).toEqual({ 'storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage', 'storage.s3.bucket.name': 'b', 'storage.s3.region': 'eu-west-1', 'chunk.size': '4194304', 'broker.id': '2' });
    const fsBackend = await refusal(createRemoteStorageManager({ ...aiven, 'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.filesystem.FileSystemStorage' }, { brokerId: 2 }));
    expect(fsBackend.configName).toBe('rsm.config.storage.backend.class');
    expect(fsBackend.message).toMatch(/FileSystemStorage.*S3Storage backend only/);
    const none = { ...aiven } as Record<string, string>;
    delete none['rsm.config.storage.backend.class'];
    expect((await refusal(createRemoteStorageManager(none, { brokerId: 2 }))).message).toBe('Missing required configuration "rsm.config.storage.backend.class" which has no default value.');
  });

  test('a JS module by path exporting a class: constructed, configured with the stripped keys of a custom prefix; class.path ignored with a log line', async () => {
    const dir = tempDir('krill-loader-mod-');
    writeModule(dir, 'memory-rsm.js', 'class');
    const logger = new CapturingLogger();
    const rsm = await loadRemoteStorageManager(
      {
        [KEY]: './memory-rsm.js',
        'remote.log.storage.manager.class.path': '/opt/kafka/plugins/rsm/*',
        'remote.log.storage.manager.impl.prefix': 'tiered.',
        'tiered.endpoint': 'mem://x',
        'tiered.': 'empty key dropped',
        'rsm.config.ignored': 'other prefix',
      },
      { brokerId: 9, baseDir: dir, logger },
    );
    expect((rsm as unknown as { configs: unknown }).configs).toEqual({ endpoint: 'mem://x', 'broker.id': '9' });
    expect(logger.matching(/remote\.log\.storage\.manager\.class\.path=\/opt\/kafka\/plugins\/rsm\/\* ignored/)).toHaveLength(1);
    const [seg] = buildSegments('custom', 0);
    const m = metadataFor({ topic: 'custom', partition: 0, topicId: randomId() }, seg);
    expect((await rsm.copyLogSegmentData(m, seg.data))?.toString()).toBe('custom');
    expect((await rsm.fetchLogSegment(m, 5, 9)).equals(seg.log.subarray(5, 10))).toBe(true);
  });

  test('a factory export is called; a named export is picked with #name; an absolute path works; a module name resolves from baseDir', async () => {
    const dir = tempDir('krill-loader-mod-');
    const factory = writeModule(dir, 'factory-rsm.js', 'factory');
    const named = writeModule(dir, 'named-rsm.js', 'named');
    const made = await createRemoteStorageManager({ [KEY]: factory }, { brokerId: 1 });
    expect((made.manager as unknown as { madeBy: string }).madeBy).toBe('factory');
    const picked = await createRemoteStorageManager({ [KEY]: `${named}#TieredStore` }, { brokerId: 1 });
    expect(typeof picked.manager.copyLogSegmentData).toBe('function');
    const pkg = path.join(dir, 'node_modules', 'krill-rsm-memory');
    nodefs.mkdirSync(pkg, { recursive: true });
    writeModule(pkg, 'index.js', 'class');
    nodefs.writeFileSync(path.join(pkg, 'package.json'), JSON.stringify({ name: 'krill-rsm-memory', main: 'index.js' }));
    const byName = await createRemoteStorageManager({ [KEY]: 'krill-rsm-memory' }, { brokerId: 1, baseDir: dir });
    expect(byName.className).toBe('krill-rsm-memory');
    expect(typeof byName.manager.fetchIndex).toBe('function');
  });

  test('anything else is a startup error naming the key: a Java class, a missing module, a module that is not an RSM, a missing export, nothing', async () => {
    const dir = tempDir('krill-loader-mod-');
    const notRsm = writeModule(dir, 'not-rsm.js', 'not-an-rsm');
    const named = writeModule(dir, 'named-rsm.js', 'named');
    const java = await refusal(createRemoteStorageManager({ [KEY]: 'com.example.tiered.HdfsRemoteStorageManager' }, { brokerId: 1, baseDir: dir }));
    expect(java.configName).toBe(KEY);
    expect(java.message).toMatch(/^Invalid value com\.example\.tiered\.HdfsRemoteStorageManager for configuration remote\.log\.storage\.manager\.class\.name: a Java class krill cannot load/);
    const missing = await refusal(createRemoteStorageManager({ [KEY]: './nowhere.js' }, { brokerId: 1, baseDir: dir }));
    expect(missing.message).toMatch(/no JavaScript module \.\/nowhere\.js found/);
    const bad = await refusal(createRemoteStorageManager({ [KEY]: notRsm }, { brokerId: 1 }));
    expect(bad.message).toMatch(/did not give a RemoteStorageManager \(missing copyLogSegmentData, fetchLogSegment, fetchIndex, deleteLogSegmentData, close\)/);
    const noExport = await refusal(createRemoteStorageManager({ [KEY]: `${named}#Nope` }, { brokerId: 1 }));
    expect(noExport.message).toMatch(/exports Nope as undefined/);
    const nothing = await refusal(createRemoteStorageManager({}, { brokerId: 1 }));
    expect(nothing.message).toBe(`Missing required configuration "${KEY}" which has no default value.`);
    expect((await refusal(createRemoteStorageManager({ [KEY]: './x.js', 'remote.log.storage.manager.impl.prefix': ' ' }, { brokerId: 1, baseDir: dir }))).configName).toBe('remote.log.storage.manager.impl.prefix');
  });

  test('remoteStorageManagerConfigs: the default prefix is rsm.config.; broker.id is the broker\'s, whatever the prefixed keys say', () => {
    expect(remoteStorageManagerConfigs({ 'rsm.config.dir': '/d', 'rsm.config.broker.id': '77', 'rlmm.config.x': 'y', 'log.dirs': '/l' }, 3)).toEqual({ dir: '/d', 'broker.id': '3' });
  });
});
