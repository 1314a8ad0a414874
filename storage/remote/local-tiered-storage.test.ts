/**
 * LocalTieredStorage: the conformance suite, then what is its own: Kafka's layout and file names,
 * its configuration (dir, delete.on.close, delete.enable, broker.id, transferer.class) and atomic
 * file writes when a transfer dies part-way.
 */
import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { IndexType, RemoteResourceNotFoundError, RemoteStorageError } from './remote-storage-manager';
import { InvalidConfigurationError } from './remote-storage-config';
import { LocalTieredStorage, ROOT_STORAGE_DIR_NAME, Transferer } from './local-tiered-storage';
import { buildSegments, metadataFor, randomId, remoteStorageManagerConformance } from './remote-storage-manager.conformance';

afterAll(removeTempDirs);

function listFiles(root: string): string[] {
  if (!nodefs.existsSync(root)) return [];
  const out: string[] = [];
  for (const e of nodefs.readdirSync(root, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out.push(path.relative(root, path.join(e.parentPath, e.name)));
  }
  return out.sort();
}

async function configured(extra: Record<string, string> = {}, transferer?: Transferer): Promise<{ rsm: LocalTieredStorage; root: string; dir: string }> {
  const dir = tempDir('krill-lts-');
  const rsm = new LocalTieredStorage({ transferer });
  await rsm.configure({ dir, 'broker.id': '1', ...extra });
  return { rsm, root: rsm.storageRoot!, dir };
}

describe('LocalTieredStorage conformance', () => {
  remoteStorageManagerConformance(async () => {
    const { rsm, root } = await configured();
    return {
      rsm,
      listStored: async () => listFiles(root),
      takeDown: async () => {
        // The directory replaced by a file: every access fails, and not with "no such file".
        nodefs.rmSync(root, { recursive: true, force: true });
        nodefs.writeFileSync(root, 'not a directory');
      },
    };
  });
});

describe('LocalTieredStorage layout and configuration', () => {
  const [first, second] = buildSegments('orders', 3);
  const tp = { topic: 'orders', partition: 3, topicId: randomId() };

  test("files are Kafka's: <dir>/kafka-tiered-storage/<topic>-<partition>-<topic id>/<start offset>-<segment id>.<suffix>", async () => {
    const { rsm, dir, root } = await configured();
    expect(root).toBe(path.join(dir, ROOT_STORAGE_DIR_NAME));
    const m = metadataFor(tp, second);
    await rsm.copyLogSegmentData(m, second.data);
    const a = metadataFor(tp, first);
    await rsm.copyLogSegmentData(a, first.data);
    const stem = (mm: typeof m) => `${mm.startOffset.toString().padStart(20, '0')}-${mm.remoteLogSegmentId.id}`;
    const tpDir = `orders-3-${tp.topicId}`;
    expect(listFiles(root)).toEqual(
      [
        ...['.index', '.leader_epoch_checkpoint', '.log', '.snapshot', '.timeindex'].map((s) => path.join(tpDir, stem(m) + s)),
        ...['.index', '.leader_epoch_checkpoint', '.log', '.snapshot', '.timeindex', '.txnindex'].map((s) => path.join(tpDir, stem(a) + s)),
      ].sort(),
    );
    // Kafka's RemoteLogSegmentFileset pattern matches every name.
    for (const f of listFiles(root)) expect(path.basename(f)).toMatch(/^(\d+-)([a-zA-Z0-9_-]{22})(\.[a-z_]+)$/);
    expect(nodefs.readFileSync(path.join(root, tpDir, stem(m) + '.log')).equals(second.log)).toBe(true);
    await rsm.close();
  });

  test('delete.enable=false makes deletes a no-op; delete.on.close removes the whole storage', async () => {
    const { rsm, root } = await configured({ 'delete.enable': 'false', 'delete.on.close': 'true' });
    const m = metadataFor(tp, first);
    await rsm.copyLogSegmentData(m, first.data);
    await rsm.deleteLogSegmentData(m);
    expect((await rsm.fetchIndex(m, IndexType.TRANSACTION)).equals(first.indexes[IndexType.TRANSACTION]!)).toBe(true);
    await rsm.close();
    expect(nodefs.existsSync(root)).toBe(false);
  });

  test('a storage that exists is reused (its data stays); without dir a temporary one is made', async () => {
    const { rsm, dir } = await configured();
    const m = metadataFor(tp, first);
    await rsm.copyLogSegmentData(m, first.data);
    await rsm.close();
    const again = new LocalTieredStorage();
    await again.configure({ dir, 'broker.id': '2' });
    expect((await again.fetchLogSegment(m, 0)).equals(first.log)).toBe(true);
    await again.close();

    const temp = new LocalTieredStorage();
    await temp.configure({ 'broker.id': '1', 'delete.on.close': 'true' });
    const root = temp.storageRoot!;
    expect(path.basename(root)).toMatch(new RegExp(`^${ROOT_STORAGE_DIR_NAME}-`));
    await temp.copyLogSegmentData(m, first.data);
    await temp.close();
    expect(nodefs.existsSync(root)).toBe(false);
  });

  test("configuration errors are Kafka's: broker.id required, configure once, transferer.class refused; unconfigured use is RemoteStorageError", async () => {
    const dir = tempDir('krill-lts-');
    await expect(new LocalTieredStorage().configure({ dir })).rejects.toThrow(new InvalidConfigurationError('Broker ID is required to configure the LocalTieredStorage manager.'));
    const twice = new LocalTieredStorage();
    await twice.configure({ dir, 'broker.id': '1' });
    await expect(twice.configure({ dir, 'broker.id': '1' })).rejects.toThrow(/already configured/);
    const e = await new LocalTieredStorage().configure({ dir, 'broker.id': '1', 'transferer.class': 'com.example.FailingTransferer' }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(InvalidConfigurationError);
    expect((e as InvalidConfigurationError).configName).toBe('transferer.class');
    await expect(new LocalTieredStorage().fetchIndex(metadataFor(tp, first), IndexType.OFFSET)).rejects.toThrow(RemoteStorageError);
  });

  test('a transfer that dies part-way never leaves a file under its final name, nor a temporary', async () => {
    let calls = 0;
    const dying: Transferer = {
      async transferFile(from, to) {
        calls++;
        // Half the bytes reach the disk, then the "crash".
        const bytes = nodefs.readFileSync(from);
        nodefs.writeFileSync(to, bytes.subarray(0, bytes.length >> 1));
        if (from.endsWith('.snapshot')) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
      },
      async transferBuffer(from, to) {
        nodefs.writeFileSync(to, from);
      },
    };
    const { rsm, root } = await configured({}, dying);
    const m = metadataFor(tp, first);
    const e = await rsm.copyLogSegmentData(m, first.data).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RemoteStorageError);
    expect(e).not.toBeInstanceOf(RemoteResourceNotFoundError);
    expect((e as Error).message).toMatch(/EIO/);
    expect(calls).toBe(4);
    expect(listFiles(root)).toEqual([]);
    await expect(rsm.fetchIndex(m, IndexType.OFFSET)).rejects.toThrow(RemoteResourceNotFoundError);
    await rsm.close();
  });

  test('temporaries an interrupted copy left are removed by deleteLogSegmentData of the segment, and only those', async () => {
    const { rsm, root } = await configured();
    const m = metadataFor(tp, first);
    const other = metadataFor(tp, second);
    await rsm.copyLogSegmentData(other, second.data);
    const tpDir = path.join(root, `orders-3-${tp.topicId}`);
    const leftover = path.join(tpDir, `${'0'.padStart(20, '0')}-${m.remoteLogSegmentId.id}.log.0123456789ab.tmp`);
    nodefs.writeFileSync(leftover, 'partial');
    await expect(rsm.fetchLogSegment(m, 0)).rejects.toThrow(RemoteResourceNotFoundError);
    await rsm.deleteLogSegmentData(m);
    expect(nodefs.existsSync(leftover)).toBe(false);
    expect(listFiles(root)).toHaveLength(5);
    await rsm.close();
  });
});
