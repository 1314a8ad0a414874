/**
 * The two remote stores the tiered-storage scenarios run against, behind one shape: the broker
 * configs that select the store, and the store's own view of a partition's copies (the names of
 * its files or objects), read directly from the store (the directory, or the bucket through the
 * AWS SDK), never through krill.
 *   local  Kafka's LocalTieredStorage in a temp directory
 *   s3     a real S3 HTTP server (s3rver on 127.0.0.1, port 0, a temp directory) with the
 *          property names of Aiven's tiered-storage plugin
 */
import type * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { LOCAL_TIERED_STORAGE, remoteDir } from './helpers';

export type BackendName = 'local' | 's3';

export interface RemoteBackend {
  readonly name: BackendName;
  /** Broker configs selecting this store (rsm.config.*). */
  readonly configs: Record<string, string | number | boolean>;
  /** File names (without directories) of the topic-partition's copies, e.g. `00000000000000000000-<uuid>.log`. */
  files(topic: string, partition: number): Promise<string[]>;
  close(): Promise<void>;
}

interface S3rverInstance {
  run(): Promise<AddressInfo>;
  close(): Promise<void>;
  httpServer?: http.Server;
}

export async function openBackend(name: BackendName): Promise<RemoteBackend> {
  if (name === 'local') {
    const dir = remoteDir();
    return {
      name,
      configs: { 'remote.log.storage.manager.class.name': LOCAL_TIERED_STORAGE, 'rsm.config.dir': dir },
      async files(topic, partition) {
        const root = path.join(dir, 'kafka-tiered-storage');
        if (!fs.existsSync(root)) return [];
        const d = fs.readdirSync(root).find((x) => x.startsWith(`${topic}-${partition}-`));
        return d ? fs.readdirSync(path.join(root, d)) : [];
      },
      async close() {},
    };
  }
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const S3rver = require('s3rver') as new (o: Record<string, unknown>) => S3rverInstance;
  const bucket = 'krill-scenarios';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-s3rver-scenarios-'));
  const server = new S3rver({ address: '127.0.0.1', port: 0, silent: true, directory: dir, configureBuckets: [{ name: bucket }] });
  const { port } = await server.run();
  const endpoint = `http://127.0.0.1:${port}`;
  const { S3Client, ListObjectsV2Command } = await import('@aws-sdk/client-s3');
  const client = new S3Client({ endpoint, region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' }, requestChecksumCalculation: 'WHEN_REQUIRED', responseChecksumValidation: 'WHEN_REQUIRED' });
  return {
    name,
    configs: {
      'remote.log.storage.manager.class.name': 'io.aiven.kafka.tieredstorage.RemoteStorageManager',
      'rsm.config.storage.backend.class': 'io.aiven.kafka.tieredstorage.storage.s3.S3Storage',
      'rsm.config.storage.s3.bucket.name': bucket,
      'rsm.config.storage.s3.region': 'us-east-1',
      'rsm.config.storage.s3.endpoint.url': endpoint,
      'rsm.config.storage.s3.path.style.access.enabled': true,
      'rsm.config.storage.aws.access.key.id': 'S3RVER',
      'rsm.config.storage.aws.secret.access.key': 'S3RVER',
    },
    async files(topic, partition) {
      const out: string[] = [];
      let token: string | undefined;
      do {
        const res = await client.send(new ListObjectsV2Command({ Bucket: bucket, ContinuationToken: token }));
        for (const o of res.Contents ?? []) {
          // Aiven's layout: <prefix><topic>-<topicId>/<partition>/<file>
          const parts = o.Key!.split('/');
          if (parts.length >= 3 && parts[parts.length - 3].startsWith(`${topic}-`) && parts[parts.length - 2] === String(partition)) out.push(parts[parts.length - 1]);
        }
        token = res.NextContinuationToken;
      } while (token !== undefined);
      return out;
    },
    async close() {
      client.destroy();
      const closed = server.close();
      server.httpServer?.closeAllConnections();
      await closed;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
