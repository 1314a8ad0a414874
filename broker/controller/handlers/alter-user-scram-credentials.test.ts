/**
 * AlterUserScramCredentials (51) on the controller listener at every advertised version, through
 * the controller's real dispatcher: what forwarding brokers get back (per-user results, Kafka's
 * messages), the UserScramCredentialRecord / RemoveUserScramCredentialRecord in the metadata log
 * (keys derived from the salted password, no password), and the credentials surviving a controller
 * restart (the log is replayed), and the ALTER-on-cluster check. DescribeUserScramCredentials is answered by brokers from their
 * image, so the controller does not advertise it.
 */
import { pbkdf2Sync } from 'node:crypto';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ControllerServer } from '../controller-server';
import { ApiKey } from '../../../protocol/generated';
import { ErrorCode } from '../../../protocol/errors';
import { DispatchClient } from '../../testing/dispatch-client';
import { SCRAM_SHA_512, clientKey, serverKey, storedKey } from '../../../metadata/controller/scram-control-manager';
import { controllerVersions, startTestController } from '../../testing/controller-node';
import { AclOperation, ResourceType } from '../../../metadata/authorizer/authorizer';
import { ScriptedAuthorizer } from '../../security/testing/scripted-authorizer';

let controller: ControllerServer;
let dir: string;

const client = new DispatchClient(() => controller, 'controller-scram-test', 'CONTROLLER');
const call = (apiKey: number, version: number, body: object): Promise<any> => client.call(apiKey, version, body);

const start = (): Promise<ControllerServer> => startTestController(dir);

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-ctl-scram-'));
  controller = await start();
});

afterAll(async () => {
  await controller?.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

const versions = (): number[] => controllerVersions(ApiKey.AlterUserScramCredentials);

test('the controller listener serves AlterUserScramCredentials v0 and not DescribeUserScramCredentials', async () => {
  expect(versions()).toEqual([0]);
  const res = await call(ApiKey.ApiVersions, 3, { clientSoftwareName: 'krill-test', clientSoftwareVersion: '1' });
  const keys = res.apiKeys.map((k: any) => k.apiKey);
  expect(keys).toContain(ApiKey.AlterUserScramCredentials);
  expect(keys).not.toContain(ApiKey.DescribeUserScramCredentials);
});

test.each(versions())('AlterUserScramCredentials v%i writes the credential records; a restart replays them', async (v) => {
  const salt = Buffer.from(`salt-${v}`);
  const salted = pbkdf2Sync('secret', salt, 8192, 64, 'sha512');
  const user = `user-${v}`;
  const before = controller.metadataLog.logEndOffset;
  const res = await call(ApiKey.AlterUserScramCredentials, v, {
    deletions: [{ name: 'ghost', mechanism: 2 }],
    upsertions: [{ name: user, mechanism: 2, iterations: 8192, salt, saltedPassword: salted }],
  });
  expect(res.results.map((r: any) => [r.user, r.errorCode, r.errorMessage])).toEqual([
    [user, ErrorCode.NONE, null],
    ['ghost', ErrorCode.RESOURCE_NOT_FOUND, 'Attempt to delete a user credential that does not exist'],
  ]);
  const written = controller.metadataLog.readAll().flatMap((b) => b.records).slice(-1);
  expect(controller.metadataLog.logEndOffset).toBe(before + 1n);
  expect(written).toEqual([
    {
      type: 'UserScramCredentialRecord',
      data: expect.objectContaining({ name: user, mechanism: 2, salt, iterations: 8192, storedKey: storedKey(SCRAM_SHA_512, clientKey(SCRAM_SHA_512, salted)), serverKey: serverKey(SCRAM_SHA_512, salted) }),
    },
  ]);

  await controller.shutdown();
  controller = await start();
  expect(controller.controller.image.scramCredential(user, 2)?.iterations).toBe(8192);
  const removed = await call(ApiKey.AlterUserScramCredentials, v, { deletions: [{ name: user, mechanism: 2 }], upsertions: [] });
  expect(removed.results).toEqual([{ user, errorCode: 0, errorMessage: null }]);
  expect(controller.metadataLog.readAll().flatMap((b) => b.records).slice(-1)).toEqual([{ type: 'RemoveUserScramCredentialRecord', data: expect.objectContaining({ name: user, mechanism: 2 }) }]);
  expect(controller.controller.image.scramCredential(user, 2)).toBeUndefined();
});

test('without ALTER on the cluster the controller answers every distinct user CLUSTER_AUTHORIZATION_FAILED and writes nothing', async () => {
  const authorizer = new ScriptedAuthorizer();
  const securedDir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-ctl-scram-auth-'));
  const secured = await startTestController(securedDir, { authorizer });
  try {
    const c = new DispatchClient(() => secured, 'controller-scram-auth', 'CONTROLLER');
    const end = secured.metadataLog.logEndOffset;
    const upsert = { name: 'b', mechanism: 1, iterations: 4096, salt: Buffer.from('s'), saltedPassword: Buffer.alloc(32, 1) };
    const res = await c.call(ApiKey.AlterUserScramCredentials, 0, { deletions: [{ name: 'c', mechanism: 1 }], upsertions: [upsert, { ...upsert, name: 'a' }] });
    expect(res.results.map((r: any) => [r.user, r.errorCode])).toEqual(['a', 'b', 'c'].map((u) => [u, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]));
    expect(res.results[0].errorMessage).toMatch(/is not authorized\.$/);
    expect(secured.metadataLog.logEndOffset).toBe(end);
    authorizer.allow(AclOperation.ALTER, ResourceType.CLUSTER);
    expect((await c.call(ApiKey.AlterUserScramCredentials, 0, { deletions: [], upsertions: [upsert] })).results).toEqual([{ user: 'b', errorCode: 0, errorMessage: null }]);
  } finally {
    await secured.shutdown();
    fs.rmSync(securedDir, { recursive: true, force: true });
  }
});
