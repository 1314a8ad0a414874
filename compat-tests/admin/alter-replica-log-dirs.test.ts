/**
 * AlterReplicaLogDirs (34) over the wire with krill's own client (KafkaJS 2.2.4 has no such call)
 * and @platformatic/kafka's low-level v2 API (in a child process) against real brokers with two
 * log.dirs:
 * - a move while a producer keeps writing: DescribeLogDirs shows the future replica (is_future,
 *   offset lag) in the destination while it copies; then the partition is in the destination
 *   only, the source's directory is gone, and every acknowledged record reads back at its offset;
 * - the errors: LOG_DIR_NOT_FOUND (unknown or relative path), UNKNOWN_TOPIC_OR_PARTITION (whose
 *   directory is remembered: the topic's log is then created there), v0 refused (KIP-896);
 * - on a 2-broker cluster, a broker that hosts no replica of a partition answers
 *   REPLICA_NOT_AVAILABLE and remembers the directory, which its replica takes once a reassignment
 *   puts one there; a follower replica moved while it replicates a continuous produce ends up
 *   byte for byte the leader's log, in the ISR;
 * - a CLI broker killed with SIGKILL in the middle of a move: the `-future` directory is on disk,
 *   the restarted broker resumes the copy, finishes the move and serves every record.
 * Moves are slowed with replica.fetch.max.bytes (the most one copy step takes) so they can be seen.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { Logger } from '../../common/logger';
import { ErrorCode } from '../../protocol/errors';
import { connect, fetchAll, produce, type BrokerConnection } from '../../client/network-client';
import { ApiKey } from '../../protocol/generated';
import { RawSocket, requestFrame } from '../helpers/raw-socket';
import { lastJsonLine, runNodeScript } from '../helpers/node-script';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { createTopic as createClusterTopic, fastCluster, partitionsOf, waitFor } from '../replication/helpers';

jest.setTimeout(120_000);

const E = ErrorCode;

function twoDirs(prefix: string): { tmp: string; dirs: [string, string] } {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  return { tmp, dirs: [path.join(tmp, 'd1'), path.join(tmp, 'd2')] };
}

async function createTopic(conn: BrokerConnection, name: string, configs: Record<string, string> = {}): Promise<void> {
  const res = await conn.send('CreateTopics', undefined, {
    topics: [{ name, numPartitions: 1, replicationFactor: 1, assignments: [], configs: Object.entries(configs).map(([n, value]) => ({ name: n, value })) }],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  expect(res.topics[0].errorCode).toBe(E.NONE);
}

async function alter(conn: BrokerConnection, dir: string, topic: string, partitions: number[], version = 2): Promise<number[]> {
  const res = await conn.send('AlterReplicaLogDirs', version, { dirs: [{ path: dir, topics: [{ name: topic, partitions }] }] });
  return res.results.find((r) => r.topicName === topic)!.partitions.map((p) => p.errorCode);
}

interface Replica {
  dir: string;
  size: bigint;
  offsetLag: bigint;
  isFuture: boolean;
}

async function replicasOf(conn: BrokerConnection, topic: string, partition: number): Promise<Replica[]> {
  const res = await conn.send('DescribeLogDirs', 4, { topics: [{ topic, partitions: [partition] }] });
  expect(res.errorCode).toBe(E.NONE);
  const out: Replica[] = [];
  for (const r of res.results) {
    for (const t of r.topics) {
      if (t.name !== topic) continue;
      for (const p of t.partitions) if (p.partitionIndex === partition) out.push({ dir: r.logDir, size: p.partitionSize, offsetLag: p.offsetLag, isFuture: p.isFutureKey });
    }
  }
  return out;
}

/** Partition directories of `topic`-0 in `dir` (current, -future, -delete). */
function partitionDirs(dir: string, topic: string): string[] {
  return fs.existsSync(dir) ? fs.readdirSync(dir).filter((n) => n === `${topic}-0` || n.startsWith(`${topic}-0.`)) : [];
}

/** Produces `batches` batches of `perBatch` records of ~`bytes` bytes; values are `${tag}-${i}`. */
async function fill(conn: BrokerConnection, topic: string, tag: string, batches: number, perBatch: number, bytes: number, acked: Map<bigint, string>): Promise<void> {
  let i = 0;
  for (let b = 0; b < batches; b++) {
    const values = Array.from({ length: perBatch }, () => `${tag}-${i++}`);
    const r = await produce(conn, topic, 0, values.map((v) => ({ value: Buffer.from(v.padEnd(bytes, '.')) })));
    values.forEach((v, k) => acked.set(r!.baseOffset + BigInt(k), v));
  }
}

async function expectEveryRecord(conn: BrokerConnection, topic: string, acked: Map<bigint, string>): Promise<void> {
  const { records } = await fetchAll(conn, topic, 0, 0n, { maxBytes: 4 << 20, partitionMaxBytes: 4 << 20 });
  const got = new Map(records.map((r) => [r.offset, r.value!.toString().replace(/\.+$/, '')]));
  expect(got.size).toBe(acked.size);
  for (const [offset, v] of acked) expect([offset, got.get(offset)]).toEqual([offset, v]);
  // Offsets are contiguous from 0: nothing lost or duplicated by the move.
  expect([...got.keys()].sort((a, b) => (a < b ? -1 : 1))).toEqual(Array.from({ length: acked.size }, (_, k) => BigInt(k)));
}

describe('an embedded broker with two log directories', () => {
  let tmp: string;
  let dirs: [string, string];
  let broker: RunningBroker;
  let conn: BrokerConnection;

  beforeAll(async () => {
    ({ tmp, dirs } = twoDirs('krill-alterdirs-'));
    broker = await startBroker({
      dataDir: tmp,
      overrides: [`log.dirs=${dirs.join(',')}`, 'replica.fetch.max.bytes=1024', 'log.segment.delete.delay.ms=50', 'num.partitions=1'],
      logger: new Logger('krill', 'error'),
    });
    conn = await connect(broker.host, broker.port, { clientId: 'alterdirs-test' });
  });
  afterAll(async () => {
    await conn?.close();
    await broker?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('a move while a producer keeps writing: the future replica copies, then replaces the log; every record is read back', async () => {
    // num.replica.alter.log.dirs.threads defaults to the number of log directories, as in Kafka.
    expect(broker.server.replicaManager.alterLogDirsManager.threadCount).toBe(2);
    const topic = 'moving';
    await createTopic(conn, topic, { 'segment.bytes': String(256 * 1024) });
    const acked = new Map<bigint, string>();
    // ~0.9 MB in several segments, in ~1000 batches: as many copy steps (one batch of ~900 bytes each).
    await fill(conn, topic, 'pre', 1000, 4, 200, acked);
    const [before] = await replicasOf(conn, topic, 0);
    const source = before.dir;
    const dest = dirs.find((d) => d !== source)!;

    // A second connection produces continuously during the move.
    const producer = await connect(broker.host, broker.port, { clientId: 'alterdirs-producer' });
    let producing = true;
    const background = (async () => {
      let n = 0;
      while (producing) await fill(producer, topic, `live${n++}`, 1, 5, 200, acked);
    })();

    try {
      expect(await alter(conn, dest, topic, [0])).toEqual([E.NONE]);
      // Asking again for the same directory is accepted and changes nothing.
      expect(await alter(conn, dest, topic, [0])).toEqual([E.NONE]);
      const seen = await waitFor('the future replica in DescribeLogDirs', async () => {
        const rs = await replicasOf(conn, topic, 0);
        const future = rs.find((r) => r.isFuture);
        if (future) return { rs, future };
        // The move may already be over (then the test below fails: it must be observable).
        if (rs.length === 1 && rs[0].dir === dest) return { rs, future: undefined };
        return undefined;
      });
      expect(seen.future).toMatchObject({ dir: dest, isFuture: true });
      expect(seen.future!.offsetLag).toBeGreaterThanOrEqual(0n);
      expect(seen.rs.find((r) => !r.isFuture)).toMatchObject({ dir: source, isFuture: false });
      expect(partitionDirs(dest, topic).some((n) => /^moving-0\.[0-9a-f]{32}-future$/.test(n))).toBe(true);

      await waitFor('the move to finish', async () => {
        const rs = await replicasOf(conn, topic, 0);
        return rs.length === 1 && rs[0].dir === dest && !rs[0].isFuture ? rs : undefined;
      }, 60_000);
      // The producer went on through the swap.
      const atSwap = acked.size;
      await waitFor('more records after the swap', () => acked.size > atSwap + 20 || undefined);
    } finally {
      producing = false;
      await background;
      await producer.close();
    }

    await waitFor('the old directory to be deleted', () => partitionDirs(source, topic).length === 0 || undefined, 10_000);
    expect(partitionDirs(dest, topic)).toEqual(['moving-0']);
    const logFiles = fs.readdirSync(path.join(dest, 'moving-0')).filter((f) => f.endsWith('.log'));
    expect(logFiles.length).toBeGreaterThan(1);
    expect(broker.server.logManager.getLog(topic, 0)!.parentDir).toBe(dest);
    await expectEveryRecord(conn, topic, acked);
    // The moved log keeps taking writes and serving them.
    await fill(conn, topic, 'post', 3, 10, 50, acked);
    await expectEveryRecord(conn, topic, acked);
  });

  test('@platformatic/kafka 1.35 (low-level AlterReplicaLogDirs v2): the move it asks for happens; LOG_DIR_NOT_FOUND in its error', async () => {
    const topic = 'plt-move';
    await createTopic(conn, topic);
    const acked = new Map<bigint, string>();
    await fill(conn, topic, 'p', 20, 10, 100, acked);
    const [cur] = await replicasOf(conn, topic, 0);
    const dest = dirs.find((d) => d !== cur.dir)!;
    const out = lastJsonLine(await runNodeScript('compat-tests/platformatic/alter-replica-log-dirs.mjs', [broker.host, String(broker.port), dest, topic, path.join(tmp, 'nope')], 30_000));
    expect(out.ok.results).toEqual([{ topicName: topic, partitions: [{ partitionIndex: 0, errorCode: E.NONE }] }]);
    expect(out.bad.results).toEqual([{ topicName: topic, partitions: [{ partitionIndex: 0, errorCode: E.LOG_DIR_NOT_FOUND }] }]);
    await waitFor('the move to finish', async () => {
      const rs = await replicasOf(conn, topic, 0);
      return rs.length === 1 && rs[0].dir === dest ? rs : undefined;
    });
    await expectEveryRecord(conn, topic, acked);
  });

  test('errors: LOG_DIR_NOT_FOUND, UNKNOWN_TOPIC_OR_PARTITION (the directory is remembered for the log created later), v0 refused', async () => {
    const topic = 'errs';
    await createTopic(conn, topic);
    const [cur] = await replicasOf(conn, topic, 0);
    expect(await alter(conn, path.join(tmp, 'not-a-log-dir'), topic, [0])).toEqual([E.LOG_DIR_NOT_FOUND]);
    expect(await alter(conn, 'd1', topic, [0], 1)).toEqual([E.LOG_DIR_NOT_FOUND]);
    // The current directory: nothing to move.
    expect(await alter(conn, cur.dir, topic, [0, 7])).toEqual([E.NONE, E.UNKNOWN_TOPIC_OR_PARTITION]);
    expect(await replicasOf(conn, topic, 0)).toEqual([cur]);

    // Not hosted (not even created yet): remembered; the topic's log is then created there.
    const later = 'created-later';
    for (const d of dirs) {
      const name = `${later}-${path.basename(d)}`;
      expect(await alter(conn, d, name, [0])).toEqual([E.UNKNOWN_TOPIC_OR_PARTITION]);
      await createTopic(conn, name);
      const [r] = await replicasOf(conn, name, 0);
      expect(r).toMatchObject({ dir: d, isFuture: false });
    }

    // Kafka 4.0 removed v0 (KIP-896): the connection is closed.
    const raw = await RawSocket.connect(broker.host, broker.port);
    try {
      await raw.write(requestFrame(ApiKey.AlterReplicaLogDirs, 0, 3, { dirs: [] }));
      await raw.waitForClose();
    } finally {
      raw.destroy();
    }
  });
});

test('a broker without a replica of the partition: REPLICA_NOT_AVAILABLE, and the directory is used once a reassignment brings a replica', async () => {
  const cluster = await fastCluster({ brokers: 2, config: { 'num.replica.alter.log.dirs.threads': 3 } });
  try {
    expect(cluster.broker(0).server.replicaManager.alterLogDirsManager.threadCount).toBe(3);
    await createClusterTopic(cluster, 'elsewhere', 1, 1);
    const [p0] = await partitionsOf(cluster.bootstrapServers[0], 'elsewhere');
    const other = [0, 1].find((id) => id !== p0.leader)!;
    const b = cluster.broker(other);
    const dir = b.server.logManager.logDirs[0].path;
    const conn = await connect(b.host, b.port, { clientId: 'rna' });
    try {
      expect(await alter(conn, dir, 'elsewhere', [0])).toEqual([E.REPLICA_NOT_AVAILABLE]);
      expect(b.server.logManager.preferredLogDir('elsewhere', 0)).toBe(dir);
      const res = await conn.send('AlterPartitionReassignments', 0, { timeoutMs: 10_000, topics: [{ name: 'elsewhere', partitions: [{ partitionIndex: 0, replicas: [p0.leader, other] }] }] });
      expect(res.responses[0].partitions[0].errorCode).toBe(E.NONE);
      const log = await waitFor('the new replica', () => b.server.logManager.getLog('elsewhere', 0));
      expect(log.parentDir).toBe(dir);
      expect(b.server.logManager.preferredLogDir('elsewhere', 0)).toBeUndefined();
    } finally {
      await conn.close();
    }
  } finally {
    await cluster.close();
  }
});

/** Every byte of a log, read batch by batch up to its end. */
function logBytes(log: import('../../storage/unified-log').UnifiedLog): Buffer {
  const parts: Buffer[] = [];
  let next = log.logStartOffset;
  while (next < log.logEndOffset) {
    const r = log.read(next, 1 << 20, { isolation: 'LOG_END', minOneMessage: true });
    if (r.records.length === 0) break;
    const buf = Buffer.concat(r.records);
    parts.push(buf);
    // The last batch's last offset + 1 (base offset at 0, last offset delta at 23).
    let pos = 0;
    let last = next;
    while (pos + 61 <= buf.length) {
      last = buf.readBigInt64BE(pos) + BigInt(buf.readInt32BE(pos + 23));
      pos += 12 + buf.readInt32BE(pos + 8);
    }
    next = last + 1n;
  }
  return Buffer.concat(parts);
}

test('a follower replica moved while it replicates a continuous produce: byte for byte the leader\'s log, in the ISR', async () => {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-alterdirs-follower-'));
  const cluster = await fastCluster({
    brokers: 2,
    dataDir: tmp,
    brokerConfig: (id) => ({ 'log.dirs': `${path.join(tmp, `b${id}-d1`)},${path.join(tmp, `b${id}-d2`)}`, 'replica.fetch.max.bytes': 4096, 'log.segment.delete.delay.ms': 50 }),
  });
  try {
    await createClusterTopic(cluster, 'fmove', 1, 2, { 'segment.bytes': String(128 * 1024) });
    const [p0] = await partitionsOf(cluster.bootstrapServers[0], 'fmove');
    const leader = cluster.broker(p0.leader);
    const follower = cluster.broker([0, 1].find((id) => id !== p0.leader)!);
    const conn = await connect(leader.host, leader.port, { clientId: 'fmove' });
    const fconn = await connect(follower.host, follower.port, { clientId: 'fmove-admin' });
    const acked = new Map<bigint, string>();
    try {
      await fill(conn, 'fmove', 'pre', 100, 10, 300, acked);
      const fl = () => follower.server.logManager.getLog('fmove', 0)!;
      const ll = () => leader.server.logManager.getLog('fmove', 0)!;
      await waitFor('the follower to catch up', () => fl().logEndOffset === ll().logEndOffset || undefined);
      const source = fl().parentDir;
      const dest = follower.server.logManager.logDirs.map((d) => d.path).find((d) => d !== source)!;
      let producing = true;
      const background = (async () => {
        let n = 0;
        while (producing) await fill(conn, 'fmove', `live${n++}`, 1, 5, 300, acked);
      })();
      try {
        expect(await alter(fconn, dest, 'fmove', [0])).toEqual([E.NONE]);
        await waitFor('the follower\'s move to finish', () => (fl().parentDir === dest && !follower.server.logManager.getFutureLog('fmove', 0)) || undefined, 60_000);
        const atSwap = acked.size;
        await waitFor('more records after the swap', () => acked.size > atSwap + 20 || undefined);
      } finally {
        producing = false;
        await background;
      }
      await waitFor('the follower to catch up again', () => fl().logEndOffset === ll().logEndOffset || undefined);
      expect(fl().logEndOffset).toBe(BigInt(acked.size));
      expect(logBytes(fl()).equals(logBytes(ll()))).toBe(true);
      expect((await partitionsOf(cluster.bootstrapServers[0], 'fmove'))[0].isr.sort()).toEqual([0, 1]);
      await waitFor('the old directory to be deleted', () => partitionDirs(source, 'fmove').length === 0 || undefined, 10_000);
      await expectEveryRecord(conn, 'fmove', acked);
    } finally {
      await fconn.close();
      await conn.close();
    }
  } finally {
    await cluster.close();
    fs.rmSync(tmp, { recursive: true, force: true });
  }
});

describe('a CLI broker killed in the middle of a move', () => {
  let tmp: string;
  let dirs: [string, string];
  let broker: TestBroker;

  beforeAll(async () => {
    ({ tmp, dirs } = twoDirs('krill-alterdirs-crash-'));
    broker = await startTestBroker('cli', {
      config: { 'log.dirs': dirs.join(','), 'replica.fetch.max.bytes': 512, 'log.segment.delete.delay.ms': 50, 'num.partitions': 1 },
    });
  });
  afterAll(async () => {
    await broker?.close();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  test('SIGKILL while copying: the future directory survives, the restarted broker resumes and completes the move, no record is lost', async () => {
    const topic = 'crashmove';
    let conn = await connect(broker.host, broker.port, { clientId: 'crash-test' });
    const acked = new Map<bigint, string>();
    let source: string;
    let dest: string;
    try {
      await createTopic(conn, topic, { 'segment.bytes': String(512 * 1024) });
      // ~1 MB in 2000 batches of ~500 bytes: 2000 copy steps of one batch each.
      await fill(conn, topic, 'pre', 2000, 2, 200, acked);
      source = (await replicasOf(conn, topic, 0))[0].dir;
      dest = dirs.find((d) => d !== source)!;
      expect(await alter(conn, dest, topic, [0])).toEqual([E.NONE]);
      const future = await waitFor('the copy to be under way', async () => (await replicasOf(conn, topic, 0)).find((r) => r.isFuture && r.size > 0n && r.offsetLag > 0n));
      expect(future.dir).toBe(dest);
    } finally {
      await conn.close();
    }
    await broker.kill9();
    const left = partitionDirs(dest, topic);
    expect(left.some((n) => /^crashmove-0\.[0-9a-f]{32}-future$/.test(n))).toBe(true);
    expect(partitionDirs(source, topic)).toEqual(['crashmove-0']);

    await broker.start();
    conn = await connect(broker.host, broker.port, { clientId: 'crash-test' });
    try {
      await waitFor('the resumed move to finish', async () => {
        const rs = await replicasOf(conn, topic, 0);
        return rs.length === 1 && rs[0].dir === dest && !rs[0].isFuture ? rs : undefined;
      }, 60_000);
      await waitFor('the old directory to be deleted', () => {
        if (partitionDirs(source, topic).length === 0) return true;
        throw new Error(`left: ${partitionDirs(source, topic)} / ${partitionDirs(dest, topic)}`);
      }, 10_000);
      expect(partitionDirs(dest, topic)).toEqual(['crashmove-0']);
      await expectEveryRecord(conn, topic, acked);
    } finally {
      await conn.close();
    }
    // And after a clean restart the log is where it was moved.
    await broker.restart();
    conn = await connect(broker.host, broker.port, { clientId: 'crash-test' });
    try {
      expect(await replicasOf(conn, topic, 0)).toMatchObject([{ dir: dest, isFuture: false }]);
      await expectEveryRecord(conn, topic, acked);
    } finally {
      await conn.close();
    }
  });
});
