/**
 * S3RemoteStorageManager against a real S3 HTTP server (s3rver on 127.0.0.1, port 0, temp dir):
 * the conformance suite, then what is its own: Aiven's key layout under key.prefix, Aiven's
 * property names and their validation, retries of transient 5xx answers (bounded), and the SDK
 * loaded only on first use.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { IndexType, RemoteResourceNotFoundError, RemoteStorageError } from './remote-storage-manager';
import { InvalidConfigurationError } from './remote-storage-config';
import { S3RemoteStorageManager, S3RemoteStorageManagerOptions } from './s3-remote-storage-manager';
import { buildSegments, metadataFor, randomId, remoteStorageManagerConformance } from './remote-storage-manager.conformance';

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: http.Server;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const S3rver = require('s3rver') as new (o: Record<string, unknown>) => S3rverInstance;

const BUCKET = 'krill-tiered';
const running = new Set<S3rverInstance>();

async function startS3(): Promise<{ server: S3rverInstance; endpoint: string }> {
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: tempDir('krill-s3rver-'), configureBuckets: [{ name: BUCKET }] });
  const addr = await server.run();
  running.add(server);
  return { server, endpoint: `http://127.0.0.1:${addr.port}` };
}

async function stopS3(server: S3rverInstance): Promise<void> {
  if (!running.delete(server)) return;
  // The SDK keeps connections alive; close() alone would wait for them.
  const closed = server.close();
  server.httpServer?.closeAllConnections();
  await closed;
}

afterAll(async () => {
  for (const s of [...running]) await stopS3(s);
  removeTempDirs();
});

function configsFor(endpoint: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage',
    'storage.s3.bucket.name': BUCKET,
    'storage.s3.region': 'us-east-1',
    'storage.s3.endpoint.url': endpoint,
    'storage.s3.path.style.access.enabled': 'true',
    'storage.aws.access.key.id': 'S3RVER',
    'storage.aws.secret.access.key': 'S3RVER',
    'chunk.size': '4194304',
    'broker.id': '1',
    ...extra,
  };
}

async function listKeys(rsm: S3RemoteStorageManager): Promise<string[]> {
  // The manager's own client, so the listing goes through the same configuration.
  const { ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const client = (rsm as unknown as { client: import('@aws-sdk/client-s3').S3Client }).client;
  const out: string[] = [];
  let token: string | undefined;
  do {
    const res = await client.send(new ListObjectsV2Command({ Bucket: BUCKET, ContinuationToken: token }));
    for (const o of res.Contents ?? []) out.push(o.Key!);
    token = res.NextContinuationToken;
  } while (token !== undefined);
  return out.sort();
}

const fastRetries: S3RemoteStorageManagerOptions = { maxAttempts: 3, retryBackoffMs: 20, retryBackoffMaxMs: 100, attemptTimeoutMs: 5_000, connectionTimeoutMs: 2_000 };

describe('S3RemoteStorageManager conformance (s3rver)', () => {
  remoteStorageManagerConformance(async () => {
    const { server, endpoint } = await startS3();
    const rsm = new S3RemoteStorageManager(fastRetries);
    rsm.configure(configsFor(endpoint, { 'key.prefix': `run-${randomId()}/` }));
    return { rsm, listStored: () => listKeys(rsm), takeDown: () => stopS3(server) };
  });
});

describe('S3RemoteStorageManager keys, configuration, retries', () => {
  const [first, second] = buildSegments('clicks', 7);
  const tp = { topic: 'clicks', partition: 7, topicId: randomId() };
  let endpoint: string;
  beforeAll(async () => {
    ({ endpoint } = await startS3());
  });

  test("objects follow Aiven's layout: <key.prefix><topic>-<topic id>/<partition>/<start offset>-<segment id>.<suffix>", async () => {
    const rsm = new S3RemoteStorageManager(fastRetries);
    rsm.configure(configsFor(endpoint, { 'key.prefix': 'tiered/cluster-a/' }));
    const m = metadataFor(tp, second);
    const a = metadataFor(tp, first);
    await rsm.copyLogSegmentData(m, second.data);
    await rsm.copyLogSegmentData(a, first.data);
    const base = `tiered/cluster-a/clicks-${tp.topicId}/7/`;
    const stem = (mm: typeof m) => `${base}${mm.startOffset.toString().padStart(20, '0')}-${mm.remoteLogSegmentId.id}`;
    expect((await listKeys(rsm)).filter((k) => k.startsWith('tiered/cluster-a/'))).toEqual(
      [
        ...['index', 'leader-epoch-checkpoint', 'log', 'snapshot', 'timeindex'].map((s) => `${stem(m)}.${s}`),
        ...['index', 'leader-epoch-checkpoint', 'log', 'snapshot', 'timeindex', 'txnindex'].map((s) => `${stem(a)}.${s}`),
      ].sort(),
    );
    expect(rsm.objectKey(a, 'LOG')).toBe(`${stem(a)}.log`);
    await rsm.deleteLogSegmentData(m);
    await rsm.deleteLogSegmentData(a);
    expect((await listKeys(rsm)).filter((k) => k.startsWith('tiered/cluster-a/'))).toEqual([]);
    await rsm.close();
  });

  test("Aiven's property rules: bucket and region required, keys together, a known backend and credentials provider, chunk.size in range", () => {
    const configure = (c: Record<string, string>) => {
      try {
        new S3RemoteStorageManager().configure(c);
      } catch (e) {
        expect(e).toBeInstanceOf(InvalidConfigurationError);
        return [(e as InvalidConfigurationError).configName, (e as Error).message];
      }
      return 'accepted';
    };
    const without = (k: string) => Object.fromEntries(Object.entries(configsFor(endpoint)).filter(([key]) => key !== k));
    expect(configure(without('storage.s3.bucket.name'))).toEqual(['storage.s3.bucket.name', 'Missing required configuration "storage.s3.bucket.name" which has no default value.']);
    expect(configure(without('storage.s3.region'))[0]).toBe('storage.s3.region');
    expect(configure(without('storage.aws.secret.access.key'))).toEqual(['storage.aws.access.key.id', 'storage.aws.access.key.id and storage.aws.secret.access.key must be defined together']);
    expect(configure(configsFor(endpoint, { 'storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.gcs.GcsStorage' }))[0]).toBe('storage.backend.class');
    expect(configure({ ...without('storage.aws.access.key.id'), 'storage.aws.secret.access.key': '' })[0]).toBe('storage.aws.secret.access.key');
    expect(configure(configsFor(endpoint, { 'storage.aws.credentials.provider.class': 'software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider' }))[0]).toBe('storage.aws.credentials.provider.class');
    const noKeys = { ...without('storage.aws.access.key.id') };
    delete noKeys['storage.aws.secret.access.key'];
    expect(configure({ ...noKeys, 'storage.aws.credentials.provider.class': 'com.example.VaultProvider' })[0]).toBe('storage.aws.credentials.provider.class');
    expect(configure({ ...noKeys, 'storage.aws.credentials.provider.class': 'software.amazon.awssdk.auth.credentials.DefaultCredentialsProvider' })).toBe('accepted');
    expect(configure(configsFor(endpoint, { 'storage.s3.path.style.access.enabled': 'yes' }))[0]).toBe('storage.s3.path.style.access.enabled');
    expect(configure(configsFor(endpoint, { 'storage.s3.endpoint.url': 'not a url' }))[0]).toBe('storage.s3.endpoint.url');
    expect(configure(configsFor(endpoint, { 'chunk.size': '0' }))[0]).toBe('chunk.size');
    expect(configure(configsFor(endpoint))).toBe('accepted');
  });

  test('a missing bucket is a RemoteStorageError, not a missing segment', async () => {
    const rsm = new S3RemoteStorageManager(fastRetries);
    rsm.configure(configsFor(endpoint, { 'storage.s3.bucket.name': 'no-such-bucket' }));
    const e = await rsm.fetchIndex(metadataFor(tp, first), IndexType.OFFSET).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(RemoteStorageError);
    expect(e).not.toBeInstanceOf(RemoteResourceNotFoundError);
    expect((e as Error).message).toMatch(/NoSuchBucket/);
    await rsm.close();
  });

  describe('transient 5xx answers are retried, a bounded number of times', () => {
    let failuresLeft = 0;
    let seen = 0;
    let proxy: http.Server;
    let proxyEndpoint: string;
    beforeAll(async () => {
      const target = new URL(endpoint);
      proxy = http.createServer((req, res) => {
        seen++;
        if (failuresLeft > 0) {
          failuresLeft--;
          req.resume();
          res.writeHead(503, { 'content-type': 'application/xml' });
          res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>SlowDown</Code><Message>Please reduce your request rate.</Message></Error>');
          return;
        }
        const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
          res.writeHead(r.statusCode ?? 502, r.headers);
          r.pipe(res);
        });
        up.on('error', () => res.destroy());
        req.pipe(up);
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      proxyEndpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
    });
    afterAll(async () => {
      const closed = new Promise((resolve) => proxy.close(resolve));
      proxy.closeAllConnections();
      await closed;
    });

    test('two SlowDown answers, then success; three, then RemoteStorageError after 3 attempts', async () => {
      const rsm = new S3RemoteStorageManager(fastRetries);
      rsm.configure(configsFor(proxyEndpoint, { 'key.prefix': 'retries/' }));
      const m = metadataFor(tp, first);
      await rsm.copyLogSegmentData(m, first.data);
      failuresLeft = 2;
      seen = 0;
      expect((await rsm.fetchLogSegment(m, 10, 99)).equals(first.log.subarray(10, 100))).toBe(true);
      expect(seen).toBe(3);
      failuresLeft = 3;
      seen = 0;
      const e = await rsm.fetchIndex(m, IndexType.TIMESTAMP).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(RemoteStorageError);
      expect((e as Error).message).toMatch(/after 3 attempts.*SlowDown.*503/);
      expect(seen).toBe(3);
      // A file body is re-sent whole on a retried upload.
      failuresLeft = 1;
      const again = metadataFor(tp, second);
      await rsm.copyLogSegmentData(again, second.data);
      expect((await rsm.fetchLogSegment(again, 0)).equals(second.log)).toBe(true);
      await rsm.deleteLogSegmentData(m);
      await rsm.deleteLogSegmentData(again);
      await rsm.close();
    });
  });

  test('a store that accepts connections and never answers fails each attempt at its deadline: RemoteStorageError in bounded time', async () => {
    const sockets = new Set<import('node:net').Socket>();
    const silent = (await import('node:net')).createServer((sock) => {
      sockets.add(sock);
      sock.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const rsm = new S3RemoteStorageManager({ ...fastRetries, attemptTimeoutMs: 300 });
      rsm.configure(configsFor(`http://127.0.0.1:${(silent.address() as AddressInfo).port}`));
      const started = Date.now();
      const e = await rsm.fetchIndex(metadataFor(tp, first), IndexType.OFFSET).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(RemoteStorageError);
      expect((e as Error).message).toMatch(/after 3 attempts: no answer within 300 ms/);
      expect(Date.now() - started).toBeLessThan(5_000);
      await rsm.close();
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });

  test('the SDK is loaded on the first configure(), not when the module is imported', () => {
    let loaded = 0;
    jest.isolateModules(() => {
      jest.doMock('@aws-sdk/client-s3', () => {
        loaded++;
        return jest.requireActual('@aws-sdk/client-s3');
      });
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const mod = require('./s3-remote-storage-manager') as typeof import('./s3-remote-storage-manager');
      const rsm = new mod.S3RemoteStorageManager();
      expect(loaded).toBe(0);
      rsm.configure(configsFor(endpoint));
      expect(loaded).toBe(1);
      void rsm.close();
    });
    jest.dontMock('@aws-sdk/client-s3');
  });
});

describe('S3RemoteStorageManager: a local file that cannot be read during a copy', () => {
  // A file that passes the size check and then fails to stream (here a directory: EISDIR; in a
  // broker, a segment retention deleted after the copy began): the stream's error must become the
  // copy's failure, not an unhandled 'error' event.
  test('the copy fails with RemoteStorageError, nothing is left unhandled', async () => {
    const { endpoint } = await startS3();
    const rsm = new S3RemoteStorageManager(fastRetries);
    await rsm.configure(configsFor(endpoint));
    const dir = tempDir('krill-s3-vanish-');
    const present = path.join(dir, 'present.index');
    fs.writeFileSync(present, Buffer.alloc(16));
    const gone = path.join(dir, 'unreadable.log');
    fs.mkdirSync(gone);
    const md = {
      remoteLogSegmentId: { topicIdPartition: { topicId: 'AAAAAAAAAAAAAAAAAAAAAw', topic: 'vanish', partition: 0 }, id: 'AAAAAAAAAAAAAAAAAAAABA' },
      startOffset: 0n,
      endOffset: 9n,
      brokerId: 1,
      maxTimestampMs: 0n,
      eventTimestampMs: 0n,
      segmentLeaderEpochs: [{ epoch: 0, startOffset: 0n }],
      segmentSizeInBytes: 16,
      customMetadata: null,
      state: 0,
    };
    const unhandled: unknown[] = [];
    const onUncaught = (e: unknown) => unhandled.push(e);
    process.on('uncaughtException', onUncaught);
    try {
      await expect(
        rsm.copyLogSegmentData(md, { logSegment: gone, offsetIndex: present, timeIndex: present, transactionIndex: null, producerSnapshotIndex: present, leaderEpochIndex: Buffer.from('0\n0\n') }),
      ).rejects.toBeInstanceOf(RemoteStorageError);
      await new Promise((r) => setTimeout(r, 50));
    } finally {
      process.off('uncaughtException', onUncaught);
      await rsm.close();
    }
    expect(unhandled).toEqual([]);
  });
});
