/**
 * The authorization matrix with real clients: one embedded broker whose only listener is
 * SASL_PLAINTEXT (PLAIN), `authorizer.class.name=...StandardAuthorizer`, `super.users=User:admin`
 * (the broker's own inter-broker identity and the test's ACL administrator), and real ACLs created
 * with KafkaJS 2.2.4's admin client. Alice may write and read `orders`, use the group `orders-app`,
 * the transactional id `alice-tx` and create topics prefixed `alice-`; bob may only read `orders`.
 * Each row drives a KafkaJS producer, idempotent producer, consumer group, admin client or
 * transactional producer and checks that what the ACLs allow works end to end and that the rest
 * fails with Kafka's error (TOPIC_ / GROUP_ / CLUSTER_ / TRANSACTIONAL_ID_AUTHORIZATION_FAILED), or
 * is left out of the answer where Kafka filters (Metadata, ListGroups).
 */
import { Kafka, logLevel, type Admin } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import { ADMIN, ALICE, RawSocket, plainJaas, rawCall, rawPlainLogin, saslBrokerConfig } from './sasl-helpers';
import { ApiKey } from '../../protocol/generated';
import { ErrorCode } from '../../protocol/errors';
import { Op, Pat, Perm, Res, aclsReach } from './acl-helpers';
import { disconnectAll } from '../helpers/kafkajs';

jest.setTimeout(90_000);
process.env.KAFKAJS_NO_PARTITIONER_WARNING = '1';

const BOB = { username: 'bob', password: 'bob-secret' };
const STANDARD = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';

let broker: RunningBroker;
let superAdmin: Admin;

function kafkaAs(user: { username: string; password: string }, clientId: string): Kafka {
  return new Kafka({
    clientId,
    brokers: broker.bootstrapServers,
    sasl: { mechanism: 'plain', ...user },
    logLevel: logLevel.NOTHING,
    connectionTimeout: 3_000,
    authenticationTimeout: 5_000,
    requestTimeout: 10_000,
    retry: { retries: 1, initialRetryTime: 100, maxRetryTime: 300 },
  });
}

/** Every Kafka error type named by a KafkaJS error and the errors it wraps. */
function errorTypes(e: unknown, seen = new Set<unknown>()): string[] {
  if (e === null || typeof e !== 'object' || seen.has(e)) return [];
  seen.add(e);
  const err = e as { type?: string; cause?: unknown; originalError?: unknown; errors?: unknown[]; groups?: { error?: unknown }[]; message?: string };
  const out: string[] = [];
  if (typeof err.type === 'string') out.push(err.type);
  for (const m of (err.message ?? '').matchAll(/[A-Z_]+_AUTHORIZATION_FAILED/g)) out.push(m[0]);
  const inner = [err.cause, err.originalError, ...(Array.isArray(err.errors) ? err.errors : []), ...(Array.isArray(err.groups) ? err.groups.map((g) => g.error) : [])];
  for (const i of inner) out.push(...errorTypes(i, seen));
  return [...new Set(out)];
}

async function failure(p: Promise<unknown>): Promise<string[]> {
  try {
    await p;
  } catch (e) {
    return errorTypes(e);
  }
  throw new Error('expected the call to be refused');
}

/** Runs `fn` on a raw connection authenticated (SASL/PLAIN) as `user`. */
async function asUser<T>(user: { username: string; password: string }, fn: (sock: RawSocket) => Promise<T>): Promise<T> {
  const sock = await RawSocket.connect(broker.host, broker.port);
  try {
    const auth = await rawPlainLogin(sock, user);
    expect(auth.errorCode).toBe(0);
    return await fn(sock);
  } finally {
    sock.socket.destroy();
  }
}

const acl = (principal: string, resourceType: number, resourceName: string, operation: number, resourcePatternType: number = Pat.LITERAL) => ({
  resourceType,
  resourceName,
  resourcePatternType,
  principal,
  host: '*',
  operation,
  permissionType: Perm.ALLOW,
});

beforeAll(async () => {
  broker = await startBroker({
    logLevel: (process.env.KRILL_LOG_LEVEL as 'info' | undefined) ?? 'error',
    config: saslBrokerConfig(['PLAIN'], {
      'listener.name.sasl_plaintext.plain.sasl.jaas.config': plainJaas({ [ADMIN.username]: ADMIN.password, [ALICE.username]: ALICE.password, [BOB.username]: BOB.password }),
      'authorizer.class.name': STANDARD,
      'super.users': 'User:admin',
      'num.partitions': '1',
      'offsets.topic.num.partitions': '1',
      'transaction.state.log.num.partitions': '1',
      'group.initial.rebalance.delay.ms': '0',
    }),
    overrides: ['listeners=SASL_PLAINTEXT://127.0.0.1:0'],
  });
  superAdmin = kafkaAs(ADMIN, 'matrix-admin').admin();
  await superAdmin.connect();
  await superAdmin.createTopics({ topics: ['orders', 'secret'].map((topic) => ({ topic, numPartitions: 1, replicationFactor: 1 })), waitForLeaders: true });
  const acls = [
    acl('User:alice', Res.TOPIC, 'orders', Op.WRITE),
    acl('User:alice', Res.TOPIC, 'orders', Op.READ),
    acl('User:alice', Res.TOPIC, 'alice-', Op.CREATE, Pat.PREFIXED),
    acl('User:alice', Res.TOPIC, 'alice-', Op.WRITE, Pat.PREFIXED),
    acl('User:alice', Res.GROUP, 'orders-app', Op.READ),
    acl('User:alice', Res.TRANSACTIONAL_ID, 'alice-tx', Op.WRITE),
    acl('User:bob', Res.TOPIC, 'orders', Op.READ),
  ];
  expect(await superAdmin.createAcls({ acl: acls })).toBe(true);
  await aclsReach(broker.server.metadata, 'the matrix ACLs', (a) => a.length === acls.length);
});

afterAll(async () => {
  await disconnectAll(superAdmin);
  await broker?.close();
});

describe('KafkaJS clients against real ACLs', () => {
  test('producer: WRITE on the topic; a topic it may not describe is TOPIC_AUTHORIZATION_FAILED', async () => {
    const alice = kafkaAs(ALICE, 'alice-producer').producer({ allowAutoTopicCreation: false });
    const bob = kafkaAs(BOB, 'bob-producer').producer({ allowAutoTopicCreation: false });
    try {
      await alice.connect();
      const sent = await alice.send({ topic: 'orders', messages: [{ key: 'k', value: 'from-alice' }] });
      expect(sent[0]).toMatchObject({ topicName: 'orders', errorCode: 0 });
      expect(await failure(alice.send({ topic: 'secret', messages: [{ value: 'no' }] }))).toContain('TOPIC_AUTHORIZATION_FAILED');
      // Bob may describe orders (READ implies DESCRIBE) but not write it.
      await bob.connect();
      expect(await failure(bob.send({ topic: 'orders', messages: [{ value: 'from-bob' }] }))).toContain('TOPIC_AUTHORIZATION_FAILED');
    } finally {
      await disconnectAll(alice, bob);
    }
  });

  test('idempotent producer: InitProducerId needs IDEMPOTENT_WRITE on the cluster or WRITE on some topic', async () => {
    const alice = kafkaAs(ALICE, 'alice-idempotent').producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    const bob = kafkaAs(BOB, 'bob-idempotent').producer({ idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    try {
      await alice.connect();
      const sent = await alice.send({ topic: 'orders', acks: -1, messages: [{ key: 'k', value: 'idempotent-alice' }] });
      expect(sent[0].errorCode).toBe(0);
      expect(await failure(bob.connect().then(() => bob.send({ topic: 'orders', acks: -1, messages: [{ value: 'idempotent-bob' }] })))).toContain('CLUSTER_AUTHORIZATION_FAILED');
    } finally {
      await disconnectAll(alice, bob);
    }
  });

  test('consumer group: READ on the group and the topic; a group it may not read is GROUP_AUTHORIZATION_FAILED', async () => {
    const consumer = kafkaAs(ALICE, 'alice-consumer').consumer({ groupId: 'orders-app', sessionTimeout: 10_000, heartbeatInterval: 500, retry: { retries: 1 } });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: 'orders', fromBeginning: true });
      const values = await new Promise<string[]>((resolve, reject) => {
        const seen: string[] = [];
        const timer = setTimeout(() => reject(new Error(`consumed ${JSON.stringify(seen)}`)), 30_000);
        consumer
          .run({
            autoCommit: true,
            eachMessage: async ({ message }) => {
              seen.push(message.value!.toString());
              if (seen.includes('from-alice') && seen.includes('idempotent-alice')) {
                clearTimeout(timer);
                resolve(seen);
              }
            },
          })
          .catch(reject);
      });
      expect(values).toEqual(expect.arrayContaining(['from-alice', 'idempotent-alice']));
      expect(values).not.toContain('from-bob');
    } finally {
      await consumer.disconnect();
    }
    // Bob may read the topic but not use a group.
    const bob = kafkaAs(BOB, 'bob-consumer').consumer({ groupId: 'bob-app', sessionTimeout: 10_000, retry: { retries: 0, restartOnFailure: async () => false } });
    try {
      await bob.connect();
      await bob.subscribe({ topic: 'orders', fromBeginning: true });
      const crashed = new Promise<unknown>((resolve) => bob.on(bob.events.CRASH, (e) => resolve(e.payload.error)));
      await bob.run({ eachMessage: async () => undefined }).catch(() => undefined);
      // KafkaJS turns the FindCoordinator error into "Failed to find group coordinator"; the
      // broker's answer itself is GROUP_AUTHORIZATION_FAILED.
      expect(((await crashed) as Error).name).toBe('KafkaJSGroupCoordinatorNotFound');
      expect(await asUser(BOB, (sock) => rawCall(sock, ApiKey.FindCoordinator, 4, 3, { keyType: 0, coordinatorKeys: ['bob-app'] }))).toMatchObject({
        coordinators: [{ key: 'bob-app', errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, nodeId: -1 }],
      });
    } finally {
      await bob.disconnect().catch(() => undefined);
    }
  });

  test('admin: topics and groups are filtered by DESCRIBE; CREATE, DELETE, DESCRIBE_CONFIGS are checked', async () => {
    const admin = kafkaAs(ALICE, 'alice-admin').admin({ retry: { retries: 0 } });
    try {
      await admin.connect();
      expect((await admin.listTopics()).sort()).toEqual(['orders']);
      // CREATE on the prefix: allowed; elsewhere TOPIC_AUTHORIZATION_FAILED.
      expect(await admin.createTopics({ topics: [{ topic: 'alice-new', numPartitions: 1, replicationFactor: 1 }], waitForLeaders: false })).toBe(true);
      expect(await failure(admin.createTopics({ topics: [{ topic: 'bob-new', numPartitions: 1, replicationFactor: 1 }] }))).toContain('TOPIC_AUTHORIZATION_FAILED');
      expect(await failure(admin.deleteTopics({ topics: ['orders'] }))).toContain('TOPIC_AUTHORIZATION_FAILED');
      expect(await failure(admin.fetchTopicMetadata({ topics: ['secret'] }))).toContain('TOPIC_AUTHORIZATION_FAILED');
      expect(await failure(admin.describeConfigs({ resources: [{ type: 2, name: 'orders' }], includeSynonyms: false }))).toContain('TOPIC_AUTHORIZATION_FAILED');
      // READ on orders-app implies DESCRIBE: it is the only group alice sees, and its offsets are hers to read.
      expect((await admin.listGroups()).groups.map((g) => g.groupId)).toEqual(['orders-app']);
      const offsets = await admin.fetchOffsets({ groupId: 'orders-app', topics: ['orders'] });
      expect(Number(offsets[0].partitions[0].offset)).toBeGreaterThan(0);
      expect(await failure(admin.deleteGroups(['orders-app']))).toContain('GROUP_AUTHORIZATION_FAILED');
      // Offsets of a group alice may not describe: KafkaJS stops at FindCoordinator (which it
      // reports as "Failed to find group coordinator"); asked directly, OffsetFetch says why.
      await expect(admin.fetchOffsets({ groupId: 'bob-app', topics: ['orders'] })).rejects.toThrow('Failed to find group coordinator');
      const fetched = await asUser(ALICE, (sock) => rawCall(sock, ApiKey.OffsetFetch, 8, 3, { groups: [{ groupId: 'bob-app', topics: null }], requireStable: false }));
      expect(fetched.groups).toEqual([expect.objectContaining({ groupId: 'bob-app', errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, topics: [] })]);
      // The super user sees everything.
      expect((await superAdmin.listTopics()).sort()).toEqual(expect.arrayContaining(['alice-new', 'orders', 'secret']));
    } finally {
      await admin.disconnect();
    }
  });

  test('transactional producer: WRITE on its transactional id (and READ on the group for offsets); another id is TRANSACTIONAL_ID_AUTHORIZATION_FAILED', async () => {
    const kafka = kafkaAs(ALICE, 'alice-txn');
    const producer = kafka.producer({ transactionalId: 'alice-tx', idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    const stranger = kafka.producer({ transactionalId: 'someone-elses-tx', idempotent: true, maxInFlightRequests: 1, allowAutoTopicCreation: false });
    try {
      await producer.connect();
      const txn = await producer.transaction();
      await txn.send({ topic: 'orders', messages: [{ key: 't', value: 'in-a-transaction' }] });
      await txn.sendOffsets({ consumerGroupId: 'orders-app', topics: [{ topic: 'orders', partitions: [{ partition: 0, offset: '1' }] }] });
      await txn.commit();
      // A topic the transaction may not write: refused inside the transaction, which then aborts.
      const second = await producer.transaction();
      expect(await failure(second.send({ topic: 'secret', messages: [{ value: 'nope' }] }))).toContain('TOPIC_AUTHORIZATION_FAILED');
      await second.abort();
      // KafkaJS finds the coordinator before InitProducerId and reports the refusal as
      // "Failed to find group coordinator"; the broker answers both requests with
      // TRANSACTIONAL_ID_AUTHORIZATION_FAILED.
      await stranger.connect();
      await expect(stranger.transaction()).rejects.toThrow('Failed to find group coordinator');
      const raw = await asUser(ALICE, async (sock) => [
        await rawCall(sock, ApiKey.FindCoordinator, 4, 3, { keyType: 1, coordinatorKeys: ['someone-elses-tx'] }),
        await rawCall(sock, ApiKey.InitProducerId, 4, 4, { transactionalId: 'someone-elses-tx', transactionTimeoutMs: 60_000, producerId: -1n, producerEpoch: -1 }),
      ]);
      expect(raw[0].coordinators[0]).toMatchObject({ errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, nodeId: -1 });
      expect(raw[1]).toMatchObject({ errorCode: ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, producerId: -1n });
    } finally {
      await disconnectAll(producer, stranger);
    }
    // The committed transaction is visible to a read_committed consumer of alice's group.
    const consumer = kafka.consumer({ groupId: 'orders-app', readUncommitted: false, sessionTimeout: 10_000, heartbeatInterval: 500 });
    try {
      await consumer.connect();
      await consumer.subscribe({ topic: 'orders', fromBeginning: true });
      const seen = await new Promise<string[]>((resolve, reject) => {
        const values: string[] = [];
        const timer = setTimeout(() => reject(new Error(`consumed ${JSON.stringify(values)}`)), 30_000);
        consumer
          .run({
            eachMessage: async ({ message }) => {
              values.push(message.value!.toString());
              if (values.includes('in-a-transaction')) {
                clearTimeout(timer);
                resolve(values);
              }
            },
          })
          .catch(reject);
      });
      expect(seen).toContain('in-a-transaction');
    } finally {
      await consumer.disconnect();
    }
  });
});
