/**
 * Finalized features over the wire (KIP-584): ApiVersions v3 / v4 report the supported ranges
 * (v3 leaves out those with a minimum of 0) and the finalized levels with their epoch, which is how
 * Kafka's admin client describes features; UpdateFeatures v0-2 changes them, on one broker and,
 * forwarded to the controller, in a 3-broker cluster where every broker then reports the new level.
 * A transaction.version downgrade is real: KafkaJS's transactions are then stored as
 * TransactionLogValue v0 records, and v1 again after the upgrades to 1 and to 2 (a fresh cluster's
 * level, Kafka 4.0's default; KafkaJS's EndTxn v1 never gets the epoch bump of 2). (No installable client sends
 * UpdateFeatures, so krill's own client does.)
 */
import { Kafka, logLevel } from 'kafkajs';
import { startBroker, type RunningBroker } from '../../broker';
import type { RunningCluster } from '../../broker/cluster';
import { Logger } from '../../common/logger';
import { ErrorCode } from '../../protocol/errors';
import { splitBatches } from '../../protocol/records/record-batch';
import { readRecords } from '../../protocol/records/record';
import { connect, type BrokerConnection } from '../../client/network-client';
import type { ApiVersionsResponse } from '../../protocol/generated/api-versions';
import { connectTo, fastCluster, waitFor } from '../replication/helpers';

jest.setTimeout(60_000);

const SAFE_DOWNGRADE = 2;
const UPGRADE = 1;

const apiVersions = (conn: BrokerConnection, v: number): Promise<ApiVersionsResponse> =>
  conn.send('ApiVersions', v, { clientSoftwareName: 'krill-features-test', clientSoftwareVersion: '1.0' });
const finalized = (res: ApiVersionsResponse) => Object.fromEntries(res.finalizedFeatures.map((f) => [f.name, [f.minVersionLevel, f.maxVersionLevel]]));
const supported = (res: ApiVersionsResponse) => Object.fromEntries(res.supportedFeatures.map((f) => [f.name, [f.minVersion, f.maxVersion]]));

/** The value versions of every __transaction_state record the broker holds, in offset order per partition. */
function transactionLogValueVersions(broker: RunningBroker): number[] {
  const out: number[] = [];
  for (const log of broker.server.logManager.allLogs()) {
    if (log.topicPartition.topic !== '__transaction_state') continue;
    const read = log.read(log.logStartOffset, 1 << 24, { isolation: 'LOG_END', minOneMessage: true });
    for (const chunk of read.records) for (const b of splitBatches(chunk)) for (const r of readRecords(b)) if (r.value) out.push(r.value.readInt16BE(0));
  }
  return out;
}

describe('one broker', () => {
  let broker: RunningBroker;
  let conn: BrokerConnection;
  beforeAll(async () => {
    broker = await startBroker({ logger: new Logger('krill', 'error'), config: { 'transaction.state.log.num.partitions': 1, 'transaction.state.log.replication.factor': 1 } });
    conn = await connect(broker.host, broker.port, { clientId: 'features-test' });
  });
  afterAll(async () => {
    await conn?.close();
    await broker?.close();
  });

  test('group.version gates the KIP-848 protocol: at 0 ConsumerGroupHeartbeat and ConsumerGroupDescribe are UNSUPPORTED_VERSION, at 1 they serve', async () => {
    const join = () =>
      conn.send('ConsumerGroupHeartbeat', 1, {
        groupId: 'gv-gate',
        memberId: 'AAAAAAAAAAAAAAAAAAAAAQ',
        memberEpoch: 0,
        instanceId: null,
        rackId: null,
        rebalanceTimeoutMs: 30_000,
        subscribedTopicNames: ['gv-topic'],
        subscribedTopicRegex: null,
        serverAssignor: null,
        topicPartitions: [],
      });
    const describe = async () => (await conn.send('ConsumerGroupDescribe', 1, { groupIds: ['gv-gate'], includeAuthorizedOperations: false })).groups[0].errorCode;
    const level = async (maxVersionLevel: number, upgradeType: number) =>
      (await conn.send('UpdateFeatures', 1, { timeoutMs: 10_000, featureUpdates: [{ feature: 'group.version', maxVersionLevel, upgradeType }], validateOnly: false })).errorCode;
    expect(await level(0, SAFE_DOWNGRADE)).toBe(ErrorCode.NONE);
    expect((await join()).errorCode).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(await describe()).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(await level(1, UPGRADE)).toBe(ErrorCode.NONE);
    // as a client does: find the coordinator (which creates __consumer_offsets), then join once it is loaded
    await conn.send('FindCoordinator', 4, { key: '', keyType: 0, coordinatorKeys: ['gv-gate'] });
    const joined = await waitFor('the coordinator serves the group', async () => {
      const r = await join();
      return r.errorCode === ErrorCode.NOT_COORDINATOR || r.errorCode === ErrorCode.COORDINATOR_LOAD_IN_PROGRESS || r.errorCode === ErrorCode.COORDINATOR_NOT_AVAILABLE ? null : r;
    });
    expect(joined.errorCode).toBe(ErrorCode.NONE);
    expect(joined.memberEpoch).toBeGreaterThan(0);
    expect(await describe()).toBe(ErrorCode.NONE);
  });

  test('ApiVersions: supported ranges (v3 without the minimum-0 ones), finalized levels and epoch; none before v3', async () => {
    const v4 = await apiVersions(conn, 4);
    expect(supported(v4)).toEqual({ 'metadata.version': [25, 25], 'kraft.version': [0, 0], 'transaction.version': [0, 2], 'group.version': [0, 1] });
    expect(finalized(v4)).toEqual({ 'metadata.version': [25, 25], 'transaction.version': [2, 2], 'group.version': [1, 1] });
    expect(v4.finalizedFeaturesEpoch).toBe(broker.server.metadata.lastAppliedOffset);
    expect(v4.finalizedFeaturesEpoch).toBeGreaterThanOrEqual(1n);
    const v3 = await apiVersions(conn, 3);
    expect(supported(v3)).toEqual({ 'metadata.version': [25, 25] });
    expect(finalized(v3)).toEqual(finalized(v4));
    const v2 = await apiVersions(conn, 2);
    expect(v2.supportedFeatures).toEqual([]);
    expect(v2.finalizedFeaturesEpoch).toBe(-1n);
    expect(conn.apiVersions.get(57)).toEqual({ minVersion: 0, maxVersion: 2 });
  });

  test('UpdateFeatures answers at v0, v1 and v2, and validate_only', async () => {
    const upd = (v: number, level: number, upgradeType: number, validateOnly = false, allowDowngrade = false) =>
      conn.send('UpdateFeatures', v, { timeoutMs: 10_000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: level, upgradeType, allowDowngrade }], validateOnly });
    // v0 has no upgrade type: even with allow_downgrade the controller takes it as an upgrade (as Kafka's QuorumController).
    const v0 = await upd(0, 0, UPGRADE, false, true);
    expect(v0).toMatchObject({ errorCode: ErrorCode.INVALID_UPDATE_VERSION, results: [] });
    expect(v0.errorMessage).toBe(
      "The update failed for all features since the following feature had an error: Invalid update version 0 for feature transaction.version. Can't downgrade the version of this feature without setting the upgrade type to either safe or unsafe downgrade.",
    );
    const epoch = (await apiVersions(conn, 4)).finalizedFeaturesEpoch;
    const dry = await upd(1, 0, SAFE_DOWNGRADE, true);
    expect(dry).toEqual(expect.objectContaining({ errorCode: ErrorCode.NONE, errorMessage: null, results: [expect.objectContaining({ feature: 'transaction.version', errorCode: 0, errorMessage: 'NONE' })] }));
    expect((await apiVersions(conn, 4)).finalizedFeaturesEpoch).toBe(epoch);
    const none = await upd(2, 2, UPGRADE);
    expect(none).toMatchObject({ errorCode: ErrorCode.NONE, errorMessage: null, results: [] });
    expect((await apiVersions(conn, 4)).finalizedFeaturesEpoch).toBeGreaterThan(epoch);
    const tooHigh = await upd(2, 3, UPGRADE);
    expect(tooHigh.errorCode).toBe(ErrorCode.INVALID_UPDATE_VERSION);
    expect(tooHigh.errorMessage).toMatch(/Invalid update version 3 for feature transaction.version. Local controller \d+ only supports versions 0-2$/);
  });

  test('transaction.version 0 stores KafkaJS transactions as TransactionLogValue v0, 1 and 2 as v1', async () => {
    const kafka = new Kafka({ clientId: 'features-txn', brokers: [`${broker.host}:${broker.port}`], logLevel: logLevel.NOTHING });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'tv', numPartitions: 1 }] });
    await admin.disconnect();
    const commitOne = async (id: string) => {
      const producer = kafka.producer({ transactionalId: id, idempotent: true, maxInFlightRequests: 1 });
      await producer.connect();
      const txn = await producer.transaction();
      await txn.send({ topic: 'tv', messages: [{ value: id }] });
      await txn.commit();
      await producer.disconnect();
    };
    const down = await conn.send('UpdateFeatures', 1, { timeoutMs: 10_000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 0, upgradeType: SAFE_DOWNGRADE }], validateOnly: false });
    expect(down.errorCode).toBe(ErrorCode.NONE);
    expect(finalized(await apiVersions(conn, 4))).toEqual({ 'metadata.version': [25, 25], 'group.version': [1, 1] });
    await commitOne('tv0');
    const atV0 = transactionLogValueVersions(broker);
    expect(atV0.length).toBeGreaterThanOrEqual(3);
    expect(new Set(atV0)).toEqual(new Set([0]));
    const up = await conn.send('UpdateFeatures', 1, { timeoutMs: 10_000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 1, upgradeType: UPGRADE }], validateOnly: false });
    expect(up.errorCode).toBe(ErrorCode.NONE);
    await commitOne('tv1');
    const after = transactionLogValueVersions(broker).slice(atV0.length);
    expect(after.length).toBeGreaterThanOrEqual(3);
    expect(new Set(after)).toEqual(new Set([1]));
    const up2 = await conn.send('UpdateFeatures', 1, { timeoutMs: 10_000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 2, upgradeType: UPGRADE }], validateOnly: false });
    expect(up2.errorCode).toBe(ErrorCode.NONE);
    await commitOne('tv2');
    const atV2 = transactionLogValueVersions(broker).slice(atV0.length + after.length);
    expect(atV2.length).toBeGreaterThanOrEqual(3);
    expect(new Set(atV2)).toEqual(new Set([1]));
  });
});

describe('a 3-broker cluster', () => {
  let cluster: RunningCluster;
  const conns: BrokerConnection[] = [];
  beforeAll(async () => {
    cluster = await fastCluster();
    for (const b of cluster.bootstrapServers) conns.push(await connectTo(b));
  });
  afterAll(async () => {
    for (const c of conns) await c.close();
    await cluster?.close();
  });

  test('brokers register krill\'s ranges; an update sent to one broker is forwarded and every broker reports it', async () => {
    for (const id of [0, 1, 2]) expect(cluster.controller.controller.image.broker(id)?.supportedFeatures.get('transaction.version')).toEqual({ min: 0, max: 2 });
    for (const c of conns) expect(finalized(await apiVersions(c, 4))).toEqual({ 'metadata.version': [25, 25], 'transaction.version': [2, 2], 'group.version': [1, 1] });
    const res = await conns[1].send('UpdateFeatures', 1, { timeoutMs: 10_000, featureUpdates: [{ feature: 'transaction.version', maxVersionLevel: 0, upgradeType: SAFE_DOWNGRADE }], validateOnly: false });
    expect(res).toMatchObject({ errorCode: ErrorCode.NONE, results: [{ feature: 'transaction.version', errorCode: 0 }] });
    // The broker that forwarded it has the change when it answers; the others get it from the log.
    expect(finalized(await apiVersions(conns[1], 4))).toEqual({ 'metadata.version': [25, 25], 'group.version': [1, 1] });
    await waitFor('every broker at transaction.version 0', async () => {
      for (const c of conns) if ('transaction.version' in finalized(await apiVersions(c, 4))) return false;
      return true;
    });
    // The controller listener answers ApiVersions with the same features.
    const [host, port] = cluster.controllerAddress.split(':');
    const ctl = await connect(host, Number(port), { clientId: 'features-test' });
    try {
      expect(finalized(await apiVersions(ctl, 4))).toEqual({ 'metadata.version': [25, 25], 'group.version': [1, 1] });
      const refused = await ctl.send('UpdateFeatures', 2, { timeoutMs: 10_000, featureUpdates: [{ feature: 'group.version', maxVersionLevel: 2, upgradeType: UPGRADE }], validateOnly: false });
      expect(refused.errorCode).toBe(ErrorCode.INVALID_UPDATE_VERSION);
      expect(refused.errorMessage).toMatch(/group.version. Local controller 3000 only supports versions 0-1$/);
    } finally {
      await ctl.close();
    }
  });
});
