/**
 * The broker's DescribeQuorum / AddRaftVoter / RemoveRaftVoter (quorum-forwarding.ts): authorized on
 * the broker as ControllerApis would (DESCRIBE / ALTER on the CLUSTER, else
 * CLUSTER_AUTHORIZATION_FAILED and nothing sent), then sent at the client's version through the
 * controller-quorum channel and answered with the controller's response; a channel failure is its
 * error code; the handlers are not part of HANDLERS (only a quorum broker registers them). The
 * end-to-end path (a broker of startCluster({ controllers: 3 })) is in
 * broker/admin-cli/quorum-command.test.ts.
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import { ApiKey } from '../../protocol/generated';
import { AclOperation, type Action, type Authorizer } from '../../metadata/authorizer/authorizer';
import { HANDLERS, QUORUM_FORWARDING_HANDLERS } from './index';
import { describeQuorumHandler } from './describe-quorum';
import { addRaftVoterHandler } from './add-raft-voter';
import { removeRaftVoterHandler } from './remove-raft-voter';

function setup(allowed: number[], answer: (api: string, body: unknown, version: number | undefined) => Promise<unknown>) {
  const asked: Action[] = [];
  const sent: { api: string; body: unknown; version: number | undefined }[] = [];
  const authorizer: Authorizer = {
    authorize: (_ctx, actions) => actions.map((a) => (asked.push(a), allowed.includes(a.operation) ? 'ALLOWED' : 'DENIED')),
    authorizeByResourceType: () => 'DENIED',
  };
  const broker = {
    authorizer,
    logger: { error: () => undefined },
    controllerQuorumChannel: {
      send: (api: string, body: unknown, opts?: { version?: number }) => (sent.push({ api, body, version: opts?.version }), answer(api, body, opts?.version)),
      versionFor: async () => 0,
    },
  };
  const ctx = (apiKey: number, apiVersion: number) =>
    ({ apiKey, apiVersion, principal: { principalType: 'User', name: 'alice' }, clientId: 'c', correlationId: 1, connection: { remoteAddress: '127.0.0.1', listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT' } }) as never;
  return { broker: broker as never, ctx, asked, sent };
}

const DESCRIBE = { topics: [{ topicName: '__cluster_metadata', partitions: [{ partitionIndex: 0 }] }] };

test('the quorum handlers are registered only on top of HANDLERS, at Kafka 4.0 versions', () => {
  for (const k of [ApiKey.DescribeQuorum, ApiKey.AddRaftVoter, ApiKey.RemoveRaftVoter]) expect(HANDLERS.some((h) => h.apiKey === k)).toBe(false);
  expect(QUORUM_FORWARDING_HANDLERS.map((h) => [h.apiKey, h.minVersion, h.maxVersion])).toEqual([
    [ApiKey.DescribeQuorum, 0, 2],
    [ApiKey.AddRaftVoter, 0, 0],
    [ApiKey.RemoveRaftVoter, 0, 0],
  ]);
});

test('authorized: sent at the client version to the active controller, its answer returned as it is', async () => {
  const answer = { errorCode: ErrorCode.DUPLICATE_VOTER, errorMessage: 'already a voter', throttleTimeMs: 0 };
  const t = setup([AclOperation.ALTER, AclOperation.DESCRIBE], async () => answer);
  const add = { clusterId: null, timeoutMs: 1000, voterId: 4, voterDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAQ', listeners: [{ name: 'CONTROLLER', host: 'h', port: 1 }] };
  expect(await addRaftVoterHandler.handle(t.broker, t.ctx(ApiKey.AddRaftVoter, 0), add)).toBe(answer);
  await describeQuorumHandler.handle(t.broker, t.ctx(ApiKey.DescribeQuorum, 1), DESCRIBE);
  expect(t.sent).toEqual([
    { api: 'AddRaftVoter', body: add, version: 0 },
    { api: 'DescribeQuorum', body: DESCRIBE, version: 1 },
  ]);
  expect(t.asked.map((a) => [a.operation, a.resourceType, a.resourceName])).toEqual([
    [AclOperation.ALTER, 4, 'kafka-cluster'],
    [AclOperation.DESCRIBE, 4, 'kafka-cluster'],
  ]);
});

test('not authorized: CLUSTER_AUTHORIZATION_FAILED and nothing sent', async () => {
  const t = setup([AclOperation.DESCRIBE], async () => {
    throw new Error('must not be sent');
  });
  expect(await removeRaftVoterHandler.handle(t.broker, t.ctx(ApiKey.RemoveRaftVoter, 0), { clusterId: null, voterId: 1, voterDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAQ' })).toMatchObject({
    errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
  });
  const none = setup([], async () => ({}));
  expect(await describeQuorumHandler.handle(none.broker, none.ctx(ApiKey.DescribeQuorum, 2), DESCRIBE)).toMatchObject({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED });
  expect(t.sent).toEqual([]);
  expect(none.sent).toEqual([]);
});

test('no controller within the channel timeout: REQUEST_TIMED_OUT', async () => {
  const t = setup([AclOperation.ALTER], async () => {
    throw new KafkaError(ErrorCode.REQUEST_TIMED_OUT, 'no answer from the active controller');
  });
  expect(await removeRaftVoterHandler.handle(t.broker, t.ctx(ApiKey.RemoveRaftVoter, 0), { clusterId: null, voterId: 1, voterDirectoryId: 'AAAAAAAAAAAAAAAAAAAAAQ' })).toMatchObject({
    errorCode: ErrorCode.REQUEST_TIMED_OUT,
  });
});
