/**
 * `--add-scram` on a controller node (`krill --process-roles controller`, and the controller of
 * `krill --brokers N` / startCluster): the credentials are written to a fresh metadata log on the
 * first start, kept across restarts, and not written again; a malformed argument fails the start
 * before anything is touched.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ControllerServer } from './controller-server';
import { startTestController } from '../testing/controller-node';
import { startCluster } from '../cluster';

let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-scram-bootstrap-'));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const SHA512 = 2; // Kafka's ScramMechanism SCRAM-SHA-512 type

function start(scram: string[]): Promise<ControllerServer> {
  return startTestController(dir, { scramCredentials: scram });
}

test('a fresh controller log gets the credentials; a restart keeps them and writes nothing again', async () => {
  const c = await start(['SCRAM-SHA-512=[name=alice,password=alice-secret]']);
  const written = c.controller.image.scramCredential('alice', SHA512);
  expect(written?.iterations).toBe(4096);
  const end = c.metadataLog.logEndOffset;
  await c.shutdown();
  const again = await start(['SCRAM-SHA-512=[name=alice,password=other]']);
  try {
    expect(again.controller.image.scramCredential('alice', SHA512)?.storedKey).toEqual(written!.storedKey);
    expect(again.metadataLog.logEndOffset).toBe(end);
  } finally {
    await again.shutdown();
  }
});

test('a malformed --add-scram argument fails the start', async () => {
  await expect(start(['SCRAM-SHA-512=[name=alice]'])).rejects.toThrow();
  expect(fs.readdirSync(dir)).toEqual([]);
});

test('startCluster passes the credentials to its controller', async () => {
  const cluster = await startCluster({ brokers: 1, dataDir: dir, logLevel: 'error', scramCredentials: ['SCRAM-SHA-512=[name=bob,password=bob-secret]'] });
  try {
    expect(cluster.controller.controller.image.scramCredential('bob', SHA512)).toBeDefined();
  } finally {
    await cluster.close();
  }
});
