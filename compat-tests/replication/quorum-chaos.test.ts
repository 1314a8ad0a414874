/**
 * Chaos tests of the KRaft controller quorum as separate processes (quorum-processes.ts): three
 * `krill --config FILE` controllers whose voter traffic crosses TCP proxies the test controls,
 * under a load of CreateTopics / DeleteTopics / IncrementalAlterConfigs sent to the active
 * controller (quorum-workload.ts); after every run the quorum is healed, every voter catches up
 * (DescribeQuorum), the processes are SIGKILLed and the checker (quorum-checker.ts) reads their
 * metadata logs from disk: one leader per epoch, log matching, one committed prefix, every
 * acknowledged operation in it exactly once.
 *
 *  (a) SIGKILL of the active controller under load: a new leader within fetch timeout + election
 *      budget, the first write after the kill acknowledged soon after, the killed node restarted;
 *  (b) the leader cut off from both followers (black-holed links): its in-flight write fails
 *      (NOT_CONTROLLER, a timeout), it resigns, the majority elects a leader that commits; the
 *      write was in the isolated node's log (read from disk after a kill) and is gone everywhere
 *      after the heal;
 *  (d) a voter paused while the others commit, then resumed with the leader dead and the only
 *      other voter's requests to it black-holed, is not elected (its log lacks committed entries:
 *      the other refuses its votes), and after the heal the up-to-date voter is;
 *  (c) a seeded random schedule of kills, restarts, pauses (SIGSTOP/SIGCONT), dropped and held
 *      links, isolated leaders and a follower paused while the others commit before the leader is
 *      killed, KRILL_QUORUM_CHAOS_MS long (default 20 s; `npm run
 *      test:quorum-chaos` runs 10 minutes), KRILL_QUORUM_CHAOS_SEED to replay one; the seed is
 *      printed with every failure.
 * Needs the built CLI (dist/); skipped without it.
 */
import { ErrorCode } from '../../protocol/errors';
import { cliBuilt } from './processes';
import { QuorumProcesses, registerFakeBrokers } from './quorum-processes';
import { QuorumWorkload, seededRandom } from './quorum-workload';
import { checkQuorumRun, topicRecordsAnywhere, type CheckResult, type OpOutcome } from './quorum-checker';

const CHAOS_MS = Number(process.env.KRILL_QUORUM_CHAOS_MS ?? 20_000);
jest.setTimeout(60_000 + CHAOS_MS * 2);

const ELECTION_TIMEOUT_MS = 300;
const FETCH_TIMEOUT_MS = 800;
/**
 * A new leader after the leader dies: followers notice within the fetch timeout, then a pre-vote
 * and a vote round; a split vote costs an election timeout (at most 2x) plus backoff, allowed
 * twice, plus 1 s for a shared 2-core machine.
 */
const FAILOVER_BOUND_MS = FETCH_TIMEOUT_MS + 2 * (2 * ELECTION_TIMEOUT_MS + ELECTION_TIMEOUT_MS) + 1_000;
const QUORUM_PROPS = { 'broker.session.timeout.ms': 3_600_000, 'num.partitions': 1, 'default.replication.factor': 1 };

let q: QuorumProcesses | null = null;
afterEach(async () => {
  await q?.close();
  q = null;
});

async function start(): Promise<QuorumProcesses> {
  q = await QuorumProcesses.start({ electionTimeoutMs: ELECTION_TIMEOUT_MS, fetchTimeoutMs: FETCH_TIMEOUT_MS, requestTimeoutMs: 1_000, props: QUORUM_PROPS });
  await q.waitForLeader(10_000);
  await registerFakeBrokers(q, [0, 1, 2]);
  return q;
}

/** Heals, restarts what is down, waits for every voter to catch up, kills all and runs the checker. */
async function healAndCheck(q: QuorumProcesses, load: { stop(): Promise<void>; outcomes: readonly OpOutcome[] }, prefix: string, context: string, extra: OpOutcome[] = []): Promise<CheckResult> {
  q.healAll();
  for (const id of q.ids) if (!q.running(id)) await q.start(id);
  await load.stop();
  // If the voters never catch up, the logs are checked anyway against the last leader's high watermark.
  let stuck: string | null = null;
  const final = await q.waitForCaughtUp(30_000).catch(async (err: Error) => {
    stuck = err.message;
    return q.leader();
  });
  await q.killAll();
  const r = checkQuorumRun({ logs: q.readLogs(), highWatermark: final?.highWatermark ?? 0n, ops: [...load.outcomes, ...extra], topicPrefix: prefix });
  if (r.violations.length || stuck) throw new Error(`${context}: ${stuck ?? 'caught up'}; ${r.violations.length} violation(s):\n${r.violations.slice(0, 30).join('\n')}`);
  return r;
}

/** CreateTopics on controller `id` under fresh names until one is acknowledged; every attempt's outcome. */
async function createUntilAcked(q: QuorumProcesses, id: number, prefix: string, timeoutMs: number): Promise<OpOutcome[]> {
  const out: OpOutcome[] = [];
  const deadline = Date.now() + timeoutMs;
  for (let n = 1; ; n++) {
    const topic = `${prefix}${n}`;
    const sentAt = performance.now();
    const code = await q
      .send(id, 'CreateTopics', { topics: [{ name: topic, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 5_000, validateOnly: false })
      .then((r) => r.topics[0].errorCode, () => -1);
    out.push({ op: { kind: 'create', topic }, sentAt, doneAt: performance.now(), acked: code === ErrorCode.NONE });
    if (code === ErrorCode.NONE) return out;
    if (Date.now() > deadline) throw new Error(`CreateTopics on ${id} not acknowledged within ${timeoutMs} ms (last: ${code})`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

(cliBuilt() ? describe : describe.skip)('a KRaft controller quorum of processes under faults', () => {
  test('(a) SIGKILL of the active controller under load: a new one within the election budget, every acknowledged write kept', async () => {
    const q = await start();
    const w = new QuorumWorkload(q, { prefix: 'a-', random: seededRandom(1), pauseMs: 2 });
    w.start();
    await w.waitForAcks(30, 15_000);
    const first = (await q.leader())!;
    const t0 = performance.now();
    await q.kill9(first.id);
    const next = await q.waitForLeader(FAILOVER_BOUND_MS + 2_000, (l) => l.id !== first.id && l.leaderEpoch > first.leaderEpoch, 10);
    const electedMs = performance.now() - t0;
    const firstWrite = await w.firstAckSentAfter(t0, FAILOVER_BOUND_MS + 5_000);
    const writeMs = firstWrite.doneAt - t0;
    await w.waitForAcks(w.acked + 20, 15_000);
    await q.start(first.id);
    const r = await healAndCheck(q, w, 'a-', 'after SIGKILL of the leader');
    process.stdout.write(
      `quorum chaos (a): leader ${first.id} (epoch ${first.leaderEpoch}) killed; leader ${next.id} (epoch ${next.leaderEpoch}) after ${electedMs.toFixed(0)} ms, ` +
        `first acknowledged write ${writeMs.toFixed(0)} ms (bound ${FAILOVER_BOUND_MS} ms); ${r.acked} acknowledged, ${r.failedApplied + r.failedAbsent} not (${r.failedApplied} applied anyway); failures ${JSON.stringify([...w.failures])}\n`,
    );
    expect(electedMs).toBeLessThan(FAILOVER_BOUND_MS);
    expect(writeMs).toBeLessThan(FAILOVER_BOUND_MS + 1_000);
    expect(r.epochLeaders.get(next.leaderEpoch)).toBe(next.id);
  });

  test('(b) a leader partitioned into a minority commits nothing, the majority moves on, and its uncommitted write is gone after the heal', async () => {
    const q = await start();
    const w = new QuorumWorkload(q, { prefix: 'b-', random: seededRandom(2), pauseMs: 5 });
    w.start();
    await w.waitForAcks(10, 15_000);
    await w.stop();
    const old = (await q.leader())!;
    q.isolate(old.id, 'drop');
    const t0 = performance.now();
    const isolatedWrite = q
      .send(old.id, 'CreateTopics', { topics: [{ name: 'b-isolated', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false }, { timeoutMs: 10_000, lane: 'isolated' })
      .then((r) => ({ code: r.topics[0].errorCode as number, at: performance.now(), error: r.topics[0].errorMessage }), (e: Error) => ({ code: -1, at: performance.now(), error: e.message }));
    const next = await q.waitForLeader(FAILOVER_BOUND_MS + 2_000, (l) => l.id !== old.id && l.leaderEpoch > old.leaderEpoch, 10);
    const electedMs = performance.now() - t0;
    // The majority commits (its leader's controller is active once the epoch's LeaderChange is committed: until then NOT_CONTROLLER).
    const majority = await createUntilAcked(q, next.id, 'b-majority-', 5_000);
    // The isolated leader's write fails (check-quorum makes it resign within 1.5 x the fetch timeout).
    const isolated = await isolatedWrite;
    expect([ErrorCode.NOT_CONTROLLER, ErrorCode.REQUEST_TIMED_OUT]).toContain(isolated.code);
    // It no longer claims to lead.
    const deadline = Date.now() + 3 * FETCH_TIMEOUT_MS + 2_000;
    while ((await q.describeQuorum(old.id)) !== null) {
      if (Date.now() > deadline) throw new Error(`isolated node ${old.id} still leads`);
      await new Promise((r) => setTimeout(r, 50));
    }
    // Its log holds the write it could not commit (read from disk after a kill, then restarted, still cut off).
    await q.kill9(old.id);
    const before = topicRecordsAnywhere(q.readLogs().filter((l) => l.nodeId === old.id), 'b-isolated');
    expect(before.map((x) => [x.nodeId, x.epoch])).toEqual([[old.id, old.leaderEpoch]]);
    await q.start(old.id);
    const w2 = new QuorumWorkload(q, { prefix: 'b2-', random: seededRandom(3), pauseMs: 5 });
    w2.start();
    await w2.waitForAcks(10, 15_000);
    const r = await healAndCheck(q, w2, 'b', 'after a minority partition', [
      ...w.outcomes,
      ...majority,
      { op: { kind: 'create', topic: 'b-isolated' }, sentAt: t0, doneAt: isolated.at, acked: false },
    ]);
    const logs = q.readLogs();
    expect(topicRecordsAnywhere(logs, 'b-isolated')).toEqual([]);
    expect(topicRecordsAnywhere(logs, majority[majority.length - 1].op.topic).length).toBe(3);
    process.stdout.write(
      `quorum chaos (b): leader ${old.id} (epoch ${old.leaderEpoch}) isolated; leader ${next.id} (epoch ${next.leaderEpoch}) after ${electedMs.toFixed(0)} ms; isolated write answered ${isolated.code} (${isolated.error}) after ${(isolated.at - t0).toFixed(0)} ms; ${r.acked} acknowledged\n`,
    );
  });

  test('(d) a voter whose log lacks committed entries is not elected, even when the only other live voter hears it alone', async () => {
    const q = await start();
    const w = new QuorumWorkload(q, { prefix: 'd-', random: seededRandom(4), pauseMs: 2 });
    w.start();
    await w.waitForAcks(10, 15_000);
    const first = (await q.leader())!;
    const [behind, ahead] = q.ids.filter((id) => id !== first.id);
    // `behind` misses what the leader and `ahead` commit next.
    q.pause(behind);
    await w.waitForAcks(w.acked + 20, 15_000);
    await w.stop();
    await q.kill9(first.id);
    // `ahead`'s requests to `behind` vanish, `behind`'s reach `ahead`: only `behind` can be elected, and must not be.
    q.cut(ahead, behind, 'drop');
    q.resume(behind);
    const windowMs = FETCH_TIMEOUT_MS + 6 * ELECTION_TIMEOUT_MS;
    const until = Date.now() + windowMs;
    while (Date.now() < until) {
      const l = await q.leader();
      if (l && l.leaderEpoch > first.leaderEpoch) throw new Error(`node ${l.id} elected in epoch ${l.leaderEpoch} while ${behind} lacks committed entries (${ahead} is the up-to-date voter)`);
      await new Promise((r) => setTimeout(r, 50));
    }
    q.heal(ahead, behind);
    const next = await q.waitForLeader(FAILOVER_BOUND_MS + 2_000, (l) => l.leaderEpoch > first.leaderEpoch, 10);
    expect(next.id).toBe(ahead);
    const r = await healAndCheck(q, { stop: async () => undefined, outcomes: w.outcomes }, 'd-', 'after a lagging voter asked for votes');
    process.stdout.write(`quorum chaos (d): ${behind} behind, ${ahead} ahead, no leader for ${windowMs} ms, then ${next.id} (epoch ${next.leaderEpoch}); ${r.acked} acknowledged\n`);
  });

  test(`(c) a random schedule of kills, pauses and dropped links for ${CHAOS_MS} ms, then a heal`, async () => {
    const seed = Number(process.env.KRILL_QUORUM_CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const context = `seed ${seed} (replay: KRILL_QUORUM_CHAOS_SEED=${seed} KRILL_QUORUM_CHAOS_MS=${CHAOS_MS})`;
    const random = seededRandom(seed);
    const q = await start();
    const w = new QuorumWorkload(q, { prefix: 'c-', random: seededRandom(seed ^ 0x5eed), pauseMs: 5 });
    w.start();
    const actions: string[] = [];
    const counts = new Map<string, number>();
    const did = (a: string) => {
      actions.push(`${(performance.now() / 1000).toFixed(1)}s ${a}`);
      const k = a.split(' ')[0];
      counts.set(k, (counts.get(k) ?? 0) + 1);
    };
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(random() * xs.length)];
    const end = Date.now() + CHAOS_MS;
    try {
      while (Date.now() < end) {
        await new Promise((r) => setTimeout(r, 200 + Math.floor(random() * 1_300)));
        const down = q.ids.filter((id) => !q.running(id));
        const paused = q.ids.filter((id) => q.paused(id));
        const cut = q.cutLinks();
        const faulty = down.length + paused.length + (cut.length ? 1 : 0);
        const r = random();
        // Heal more often the more is broken, so the quorum spends time both with and without a majority.
        if (faulty >= 2 && r < 0.6) {
          if (down.length && random() < 0.5) {
            const id = pick(down);
            await q.start(id);
            did(`restart ${id}`);
          } else if (paused.length && random() < 0.5) {
            const id = pick(paused);
            q.resume(id);
            did(`resume ${id}`);
          } else {
            q.healAll();
            did('heal-all');
          }
          continue;
        }
        const live = q.live();
        const leader = random() < 0.6 ? await q.leader() : null;
        const victim = leader && live.includes(leader.id) ? leader.id : live.length ? pick(live) : null;
        const a = random();
        if (a < 0.08 && leader && live.length === 3) {
          // A follower falls behind while the others commit, then the leader dies and it comes back:
          // the one schedule where a voter missing committed entries asks for votes.
          const lagging = pick(live.filter((id) => id !== leader.id));
          q.pause(lagging);
          await new Promise((r) => setTimeout(r, 300 + Math.floor(random() * 700)));
          await q.kill9(leader.id);
          q.resume(lagging);
          did(`lag ${lagging} then kill9 ${leader.id} (leader)`);
        } else if (a < 0.2 && victim !== null) {
          await q.kill9(victim);
          did(`kill9 ${victim}${leader?.id === victim ? ' (leader)' : ''}`);
        } else if (a < 0.3 && down.length) {
          const id = pick(down);
          await q.start(id);
          did(`restart ${id}`);
        } else if (a < 0.45 && victim !== null) {
          q.pause(victim);
          did(`pause ${victim}${leader?.id === victim ? ' (leader)' : ''}`);
        } else if (a < 0.55 && paused.length) {
          const id = pick(paused);
          q.resume(id);
          did(`resume ${id}`);
        } else if (a < 0.75) {
          const from = pick(q.ids);
          const to = pick(q.ids.filter((x) => x !== from));
          const mode = random() < 0.5 ? 'drop' : 'hold';
          q.cut(from, to, mode);
          did(`cut ${from}>${to} ${mode}`);
        } else if (a < 0.85 && victim !== null) {
          const mode = random() < 0.7 ? 'drop' : 'hold';
          q.isolate(victim, mode);
          did(`isolate ${victim}${leader?.id === victim ? ' (leader)' : ''} ${mode}`);
        } else {
          q.healAll();
          did('heal-all');
        }
      }
      did('final heal');
      const r = await healAndCheck(q, w, 'c-', context);
      process.stdout.write(
        `quorum chaos (c) ${context}: ${actions.length} actions ${JSON.stringify([...counts])}; ${r.epochLeaders.size} epochs; ${r.acked} acknowledged, ` +
          `${r.failedApplied + r.failedAbsent} not (${r.failedApplied} applied anyway); committed batches ${r.committed.length}\n`,
      );
      expect(r.acked).toBeGreaterThan(10);
    } catch (err) {
      const m = (err as Error).message;
      throw new Error(`${m.startsWith(context) ? m : `${context}: ${m}`}\nschedule:\n${actions.join('\n')}`);
    }
  });
});
