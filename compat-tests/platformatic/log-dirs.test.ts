/**
 * DescribeLogDirs (35) against a broker with two log directories: @platformatic/kafka's
 * Admin.describeLogDirs (v4, in a child process: log-dirs.mjs) and krill's own client at every
 * version (v0-4, the all-partitions form too): each directory with the partitions whose logs it
 * holds, their sizes and offset lags as the broker's logs have them, the volume's total / usable
 * bytes from v4; a directory that went offline is KAFKA_STORAGE_ERROR.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { startBroker, type RunningBroker } from '../../broker';
import { Logger } from '../../common/logger';
import { ErrorCode } from '../../protocol/errors';
import { connect, produce, type BrokerConnection } from '../../client/network-client';
import type { DescribeLogDirsResponse } from '../../protocol/generated/describe-log-dirs';
import { runNodeScript } from '../helpers/node-script';

jest.setTimeout(60_000);

const TOPIC = 'logdirs';

let tmp: string;
let dirs: string[];
let broker: RunningBroker;
let conn: BrokerConnection;

beforeAll(async () => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-logdirs-'));
  dirs = [path.join(tmp, 'd1'), path.join(tmp, 'd2')];
  broker = await startBroker({ dataDir: tmp, overrides: [`log.dirs=${dirs.join(',')}`], logger: new Logger('krill', 'error') });
  conn = await connect(broker.host, broker.port, { clientId: 'logdirs-test' });
  const res = await conn.send('CreateTopics', undefined, {
    topics: [{ name: TOPIC, numPartitions: 3, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 10_000,
    validateOnly: false,
  });
  expect(res.topics[0].errorCode).toBe(0);
  for (let p = 0; p < 3; p++) await produce(conn, TOPIC, p, Array.from({ length: p + 1 }, (_, i) => ({ value: Buffer.alloc(100 * (i + 1), p) })));
});

afterAll(async () => {
  await conn?.close();
  await broker?.close();
  if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

/** What the broker's own logs say: dir -> [[partition, size]] of TOPIC's logs in it. */
function expectedByDir(partitions: number[] = [0, 1, 2]): Map<string, [number, bigint][]> {
  const out = new Map<string, [number, bigint][]>(dirs.map((d) => [d, []]));
  for (const log of broker.server.logManager.allLogs()) {
    if (log.topicPartition.topic !== TOPIC || !partitions.includes(log.topicPartition.partition)) continue;
    out.get(log.parentDir)!.push([log.topicPartition.partition, BigInt(log.size)]);
  }
  for (const list of out.values()) list.sort((a, b) => a[0] - b[0]);
  return out;
}

function reported(res: DescribeLogDirsResponse): Map<string, [number, bigint][]> {
  return new Map(
    res.results.map((r) => [
      r.logDir,
      r.topics.filter((t) => t.name === TOPIC).flatMap((t) => t.partitions.map((p): [number, bigint] => [p.partitionIndex, p.partitionSize])),
    ]),
  );
}

test('the logs are spread over both directories (the premise of the other tests)', () => {
  const byDir = expectedByDir();
  expect([...byDir.values()].every((l) => l.length > 0)).toBe(true);
  expect([...byDir.values()].flat().every(([, size]) => size > 0n)).toBe(true);
});

test('krill client, v0-4, every partition (topics null) and a filtered list', async () => {
  for (let v = 0; v <= 4; v++) {
    const all = await conn.send('DescribeLogDirs', v, { topics: null });
    expect(all.errorCode).toBe(ErrorCode.NONE);
    expect(all.results.map((r) => [r.logDir, r.errorCode])).toEqual(dirs.map((d) => [d, ErrorCode.NONE]));
    expect(reported(all)).toEqual(expectedByDir());
    for (const r of all.results) {
      for (const t of r.topics) for (const p of t.partitions) expect(p).toMatchObject({ offsetLag: 0n, isFutureKey: false });
      if (v >= 4) {
        const s = fs.statfsSync(r.logDir, { bigint: true });
        expect(r.totalBytes).toBe(s.blocks * s.bsize);
        expect(r.usableBytes).toBeGreaterThan(0n);
        expect(r.usableBytes).toBeLessThanOrEqual(r.totalBytes);
      } else {
        expect(r.totalBytes).toBe(-1n);
      }
    }
    const some = await conn.send('DescribeLogDirs', v, { topics: [{ topic: TOPIC, partitions: [2, 2, 9] }, { topic: 'no-such-topic', partitions: [0] }] });
    expect(reported(some)).toEqual(expectedByDir([2]));
    // A directory without any of the asked partitions lists no topic at all.
    for (const r of some.results) expect(r.topics.every((t) => t.partitions.length > 0)).toBe(true);
  }
});

test('@platformatic/kafka Admin.describeLogDirs (v4)', async () => {
  const out = path.join(tmp, 'platformatic.json');
  expect(await runNodeScript(path.join(__dirname, 'log-dirs.mjs'), [`${broker.host}:${broker.port}`, TOPIC, out], 30_000)).toBe('ok\n');
  const { three, one } = JSON.parse(fs.readFileSync(out, 'utf8'));
  const asMap = (answer: any[]) => {
    expect(answer.map((b) => b.broker)).toEqual([broker.server.nodeId]);
    return new Map<string, [number, bigint][]>(
      answer[0].results.map((r: any) => [
        r.logDir,
        r.topics.filter((t: any) => t.name === TOPIC).flatMap((t: any) => t.partitions.map((p: any) => [p.partitionIndex, BigInt(p.partitionSize)])),
      ]),
    );
  };
  expect(asMap(three)).toEqual(expectedByDir());
  expect(asMap(one)).toEqual(expectedByDir([0]));
  for (const r of three[0].results) expect(BigInt(r.totalBytes)).toBeGreaterThan(0n);
});

test('an offline directory is KAFKA_STORAGE_ERROR with nothing else; the other is still described', async () => {
  broker.server.logManager.handleLogDirFailure(dirs[1], 'test: taken offline');
  const res = await conn.send('DescribeLogDirs', 4, { topics: null });
  expect(res.results.map((r) => [r.logDir, r.errorCode])).toEqual([
    [dirs[0], ErrorCode.NONE],
    [dirs[1], ErrorCode.KAFKA_STORAGE_ERROR],
  ]);
  expect(res.results[1]).toMatchObject({ topics: [], totalBytes: -1n, usableBytes: -1n });
  expect(reported(res).get(dirs[0])).toEqual(expectedByDir().get(dirs[0]));
});
