/**
 * AlterClientQuotas (49) on the controller listener at every advertised version, through the
 * controller's real dispatcher: what forwarding brokers get back (per-entity results, Kafka's
 * messages), the ClientQuotaRecords in the metadata log, validate_only, and the quotas surviving
 * a controller restart (the log is replayed). DescribeClientQuotas is a broker API only (Kafka's
 * schema lists it for brokers), so the controller does not advertise it.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { ControllerServer } from '../controller-server';
import { ApiKey } from '../../../protocol/generated';
import { ErrorCode } from '../../../protocol/errors';
import { DispatchClient } from '../../testing/dispatch-client';
import { controllerVersions, startTestController } from '../../testing/controller-node';

let controller: ControllerServer;
let dir: string;

const client = new DispatchClient(() => controller, 'controller-quotas-test', 'CONTROLLER');
const call = (apiKey: number, version: number, body: object): Promise<any> => client.call(apiKey, version, body);

const start = (): Promise<ControllerServer> => startTestController(dir);

const ent = (...parts: [string, string | null][]) => parts.map(([entityType, entityName]) => ({ entityType, entityName }));

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-ctl-quotas-'));
  controller = await start();
});

afterAll(async () => {
  await controller?.shutdown();
  fs.rmSync(dir, { recursive: true, force: true });
});

const versions = (): number[] => controllerVersions(ApiKey.AlterClientQuotas);

test('the controller listener serves AlterClientQuotas v0-1 and not DescribeClientQuotas', async () => {
  expect(versions()).toEqual([0, 1]);
  const res = await call(ApiKey.ApiVersions, 3, { clientSoftwareName: 'krill-test', clientSoftwareVersion: '1' });
  const keys = res.apiKeys.map((k: any) => k.apiKey);
  expect(keys).toContain(ApiKey.AlterClientQuotas);
  expect(keys).not.toContain(ApiKey.DescribeClientQuotas);
});

test.each([0, 1])('AlterClientQuotas v%i writes ClientQuotaRecords; validate_only writes nothing', async (v) => {
  const user = `svc-${v}`;
  const endBefore = controller.metadataLog.logEndOffset;
  const dry = await call(ApiKey.AlterClientQuotas, v, {
    entries: [{ entity: ent(['user', user]), ops: [{ key: 'producer_byte_rate', value: 500, remove: false }] }],
    validateOnly: true,
  });
  expect(dry.entries).toEqual([expect.objectContaining({ errorCode: ErrorCode.NONE, entity: ent(['user', user]) })]);
  expect(controller.metadataLog.logEndOffset).toBe(endBefore);

  const res = await call(ApiKey.AlterClientQuotas, v, {
    entries: [
      { entity: ent(['user', user]), ops: [{ key: 'producer_byte_rate', value: 500, remove: false }] },
      { entity: ent(['client-id', null]), ops: [{ key: 'request_percentage', value: 0, remove: false }] },
    ],
    validateOnly: false,
  });
  expect(res.entries.map((e: any) => [e.entity, e.errorCode, e.errorMessage])).toEqual([
    [ent(['user', user]), ErrorCode.NONE, null],
    [ent(['client-id', null]), ErrorCode.INVALID_REQUEST, 'Quota request_percentage must be greater than 0'],
  ]);
  const last = controller.metadataLog.readAll().at(-1)!;
  expect(last.records).toEqual([
    { type: 'ClientQuotaRecord', data: expect.objectContaining({ entity: ent(['user', user]), key: 'producer_byte_rate', value: 500, remove: false }) },
  ]);
  expect(controller.controller.image.clientQuota({ user })).toEqual(new Map([['producer_byte_rate', 500]]));
});

test('the quotas survive a controller restart (the metadata log is replayed)', async () => {
  const before = controller.controller.image.clientQuotas();
  expect(before.length).toBe(2);
  await controller.shutdown();
  controller = await start();
  expect(controller.controller.image.clientQuotas()).toEqual(before);
});
