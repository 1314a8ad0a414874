/**
 * The deterministic simulation of the consensus core (testing/raft-simulator.ts): random fault
 * schedules on 3- and 5-node quorums (drops, delays, partitions, crashes and restarts, snapshots),
 * checked continuously for election safety and the agreement and durability of the committed log,
 * then healed and checked for a bounded re-election and replication; plus scenarios for a
 * partitioned minority leader, pre-vote against a rejoining node, a leader restart and a snapshot
 * catch-up, a figure-8 schedule and observers; a few schedules run on disk logs. KRILL_RAFT_SIM_SEEDS=<n>
 * runs n random schedules (and n/20 on disk) instead of the default 200 (and 6).
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { LeaderState } from './epoch-state';
import { RaftSimulator, type SimNode } from './testing/raft-simulator';

const SEEDS = Number(process.env.KRILL_RAFT_SIM_SEEDS ?? 200);
/** KIP-853 schedules (dynamic voters changing under the faults): one per 10, at least 20. */
const DYNAMIC_SEEDS = Math.max(20, Math.floor(SEEDS / 10));
/** Schedules run on disk logs (real recovery at each restart): one per 20 in memory, at least 6. */
const DISK_SEEDS = Math.max(6, Math.floor(SEEDS / 20));
const FAULT_PHASE_MS = 15_000;
/** After the faults stop a leader must be agreed on within this (Kafka's default timeouts). */
const ELECTION_BOUND_MS = 20_000;

function randomSchedule(seed: number, nodeCount: number, opts: { diskDir?: string; faultPhaseMs?: number; dynamic?: boolean } = {}): { electedAfterMs: number; sim: RaftSimulator } {
  // One seed in four replicates batch by batch (tiny fetch responses), which opens more windows
  // where a follower holds an old epoch's entry without the new leader's first one.
  // One seed in five adds an observer (a non-voter replica, as a broker is).
  const sim = new RaftSimulator({
    seed,
    nodeCount,
    // A dynamic quorum has two replicas outside the initial voter set to add.
    observerCount: opts.dynamic ? 2 : seed % 5 === 0 ? 1 : 0,
    appendIntervalMs: 50,
    fetchMaxBytes: seed % 4 === 1 ? 64 : 4096,
    diskDir: opts.diskDir,
    dynamic: opts.dynamic,
  });
  try {
    return runSchedule(sim, seed, opts.faultPhaseMs ?? FAULT_PHASE_MS);
  } finally {
    sim.close();
  }
}

/** Adds a non-voter, or removes a voter (possibly the leader), through the leaders' admin RPCs. */
function changeVoters(sim: RaftSimulator): void {
  const rng = sim.rng;
  for (const n of sim.liveNodes()) {
    const raft = n.raft!;
    if (!raft.isLeader) continue;
    const voters = [...raft.voterSet.ids()];
    const others = sim.nodes.map((x) => x.id).filter((id) => !voters.includes(id));
    const corr = voters.length > 2 && (others.length === 0 || rng.chance(0.5)) ? sim.removeVoter(n.id, voters[rng.nextInt(voters.length)]) : sim.addVoter(n.id, others[rng.nextInt(others.length)]);
    if (corr !== null) {
      sim.runFor(0);
      if (sim.adminResponse(corr)?.data.errorCode === 0) sim.voterChanges++;
      else pendingCorrs.push({ sim, corr });
    }
  }
}
const pendingCorrs: { sim: RaftSimulator; corr: number }[] = [];

function runSchedule(sim: RaftSimulator, seed: number, faultPhaseMs: number): { electedAfterMs: number; sim: RaftSimulator } {
  const rng = sim.rng;
  const ids = sim.nodes.map((n) => n.id);
  sim.crashAfterVoteRate = 0.2;
  const end = sim.now + faultPhaseMs;
  while (sim.now < end) {
    sim.runFor(200 + rng.nextInt(1300));
    const r = rng.next();
    if (r < 0.15) {
      const up = ids.filter((id) => sim.isUp(id));
      if (up.length > 1) sim.crash(up[rng.nextInt(up.length)]);
    } else if (r < 0.35) {
      const down = ids.filter((id) => !sim.isUp(id));
      if (down.length) sim.restart(down[rng.nextInt(down.length)]);
    } else if (r < 0.5) {
      const a: number[] = [];
      const b: number[] = [];
      for (const id of ids) (rng.chance(0.5) ? a : b).push(id);
      sim.partition([a, b]);
    } else if (r < 0.62) {
      sim.heal();
    } else if (r < 0.75) {
      const d = [0, 0, 0.05, 0.2][rng.nextInt(4)];
      const delay = [
        [1, 5],
        [1, 50],
        [5, 300],
      ][rng.nextInt(3)];
      sim.network = { dropRate: d, minDelayMs: delay[0], maxDelayMs: delay[1] };
    } else if (r < 0.85) {
      const up = ids.filter((id) => sim.isUp(id));
      if (up.length) sim.snapshot(up[rng.nextInt(up.length)]);
    } else if (sim.dynamic) {
      // KIP-853: a voter change sent to whoever leads (refused when it cannot be done now).
      changeVoters(sim);
    }
  }
  // The faults stop: everything heals and restarts.
  sim.crashAfterVoteRate = 0;
  sim.heal();
  sim.network = { dropRate: 0, minDelayMs: 1, maxDelayMs: 5 };
  for (const id of ids) sim.restart(id);
  const faultsEnd = sim.now;
  // A leader every node follows, and that stays so for longer than a fetch timeout (a follower
  // whose last fetch was lost in the fault phase may still time out once and start an election).
  let at: number | null = null;
  while (sim.now - faultsEnd < ELECTION_BOUND_MS) {
    const t = sim.runUntilTrue(() => sim.stableLeader() !== null, faultsEnd + ELECTION_BOUND_MS - sim.now);
    if (t === null) break;
    const l = sim.stableLeader()!;
    const epoch = l.raft!.epoch;
    const broke = sim.runUntilTrue(() => sim.stableLeader() !== l || l.raft?.epoch !== epoch, 3_000);
    if (broke === null) {
      at = t;
      break;
    }
  }
  if (at === null) {
    const states = sim.nodes.map((n) => `${n.id}:${n.raft!.stateName}@${n.raft!.epoch}(leader ${n.raft!.leaderId}${sim.dynamic ? `, voters ${[...n.raft!.voterSet.ids()]}, leo ${n.log.endOffset().offset}, hw ${n.log.highWatermark()}` : ''})`).join(' ');
    throw new Error(`seed ${seed}: no stable agreed leader ${ELECTION_BOUND_MS} ms after the faults stopped: ${states}\n${sim.trace.slice(-30).join('\n')}`);
  }
  // Replication resumes: a fresh record commits everywhere.
  const leader = sim.stableLeader()!;
  const offset = sim.appendTo(leader)!;
  const committed = sim.runUntilTrue(() => sim.nodes.every((n) => n.log.highWatermark() > offset), 5_000);
  if (committed === null) {
    const hw = sim.nodes.map((n) => `${n.id}:${n.log.highWatermark()}/${n.log.endOffset().offset}`).join(' ');
    throw new Error(`seed ${seed}: offset ${offset} not committed on every node within 5 s: ${hw}`);
  }
  if (sim.dynamic) healedVoterChanges(sim, seed);
  return { electedAfterMs: at - faultsEnd, sim };
}

/** Once healed, a removal and an addition each commit (retried while refused), and a record commits after them. */
function healedVoterChanges(sim: RaftSimulator, seed: number): void {
  for (const op of ['remove', 'add'] as const) {
    const deadline = sim.now + 15_000;
    let done = false;
    while (!done && sim.now < deadline) {
      if (sim.runUntilTrue(() => sim.stableLeader() !== null, deadline - sim.now) === null) break;
      const l = sim.stableLeader()!;
      const voters = [...l.raft!.voterSet.ids()];
      const others = sim.nodes.map((x) => x.id).filter((id) => !voters.includes(id));
      const corr = op === 'remove' ? sim.removeVoter(l.id, voters[sim.rng.nextInt(voters.length)]) : sim.addVoter(l.id, others[sim.rng.nextInt(others.length)]);
      if (corr === null) continue;
      sim.runUntilTrue(() => sim.adminResponse(corr) !== undefined, 5_000);
      const code = sim.adminResponse(corr)?.data.errorCode;
      if (code === 0) {
        sim.voterChanges++;
        done = true;
      } else {
        sim.runFor(200);
      }
    }
    if (!done) {
      const states = sim.nodes.map((n) => `${n.id}:${n.raft!.stateName}@${n.raft!.epoch}(leader ${n.raft!.leaderId}, voters ${n.raft!.voterSet}, leo ${n.log.endOffset().offset})`).join(' ');
      throw new Error(`seed ${seed}: the healed quorum did not ${op} a voter within 15 s: ${states}\n${sim.trace.slice(-30).join('\n')}`);
    }
  }
  const t = sim.runUntilTrue(() => sim.stableLeader() !== null, 20_000);
  if (t === null) throw new Error(`seed ${seed}: no stable leader after the voter changes`);
  const leader = sim.stableLeader()!;
  const offset = sim.appendTo(leader)!;
  if (sim.runUntilTrue(() => sim.nodes.every((n) => n.log.highWatermark() > offset), 5_000) === null) throw new Error(`seed ${seed}: no commit after the voter changes`);
}

describe('raft simulation: random fault schedules', () => {
  it(`with dynamic voters (KIP-853): voters added and removed under the faults, ${DYNAMIC_SEEDS} seeds`, () => {
    let changes = 0;
    let committed = 0;
    let maxElection = 0;
    const started = Date.now();
    for (let seed = 200_001; seed <= 200_000 + DYNAMIC_SEEDS; seed++) {
      const { electedAfterMs, sim } = randomSchedule(seed, 3, { dynamic: true });
      maxElection = Math.max(maxElection, electedAfterMs);
      for (const p of pendingCorrs.splice(0)) if (p.sim === sim && p.sim.adminResponse(p.corr)?.data.errorCode === 0) sim.voterChanges++;
      changes += sim.voterChanges;
      committed += sim.committed.length;
    }
    // Voter changes did commit (the invariants held across them) and the quorum kept working.
    expect(changes).toBeGreaterThan(2 * DYNAMIC_SEEDS);
    expect(committed).toBeGreaterThan(DYNAMIC_SEEDS * 10);
    if (process.env.KRILL_RAFT_SIM_SEEDS) {
      // eslint-disable-next-line no-console
      console.log(`dynamic: ${DYNAMIC_SEEDS} seeds in ${Date.now() - started} ms; ${changes} voter changes committed; ${committed} entries; slowest re-election ${maxElection} ms`);
    }
  });

  it(`on disk (UnifiedRaftLog and the quorum-state file, recovered at every restart): ${DISK_SEEDS} seeds`, () => {
    for (let seed = 100_001; seed <= 100_000 + DISK_SEEDS; seed++) {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-raft-sim-'));
      try {
        const { sim } = randomSchedule(seed, seed % 2 ? 3 : 5, { diskDir: dir });
        if (process.env.KRILL_RAFT_SIM_SEEDS) {
          // eslint-disable-next-line no-console
          console.log(`disk seed ${seed}: ${sim.committed.length} committed, ${sim.trace.filter((t) => t.includes('restart')).length} restarts, ${sim.leaders.size} leaders, ${sim.snapshotChunks} snapshot chunks`);
        }
        expect(sim.committed.length).toBeGreaterThan(10);
        expect(fs.readdirSync(path.join(dir, 'node-1', '__cluster_metadata-0'))).toContain('quorum-state');
      } finally {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  it(`keeps election safety and the committed log across ${SEEDS} seeds, and recovers after faults`, () => {
    let maxElection = 0;
    let committed = 0;
    let elections = 0;
    let diverging = 0;
    let snapshotChunks = 0;
    const started = Date.now();
    for (let seed = 1; seed <= SEEDS; seed++) {
      const nodeCount = seed % 2 === 0 ? 3 : 5;
      const { electedAfterMs, sim } = randomSchedule(seed, nodeCount);
      maxElection = Math.max(maxElection, electedAfterMs);
      committed += sim.committed.length;
      elections += sim.leaders.size;
      diverging += sim.divergingResponses;
      snapshotChunks += sim.snapshotChunks;
    }
    // The schedules reach the interesting paths: re-elections, log divergence, snapshot transfer.
    expect(elections).toBeGreaterThan(SEEDS * 1.5);
    expect(diverging).toBeGreaterThan(0);
    expect(snapshotChunks).toBeGreaterThan(0);
    // Something was actually replicated and committed under the faults.
    expect(committed).toBeGreaterThan(SEEDS * 10);
    expect(maxElection).toBeLessThan(ELECTION_BOUND_MS);
    if (process.env.KRILL_RAFT_SIM_SEEDS) {
      // eslint-disable-next-line no-console
      console.log(`${SEEDS} seeds in ${Date.now() - started} ms; slowest re-election ${maxElection} ms; ${committed} entries committed; ${elections} leaders; ${diverging} diverging fetches; ${snapshotChunks} snapshot chunks`);
    }
  });
});

function electLeader(sim: RaftSimulator): SimNode {
  const t = sim.runUntilTrue(() => sim.stableLeader() !== null, 10_000);
  if (t === null) throw new Error('no leader');
  return sim.stableLeader()!;
}

describe('raft simulation: scenarios', () => {
  it('a leader partitioned into a minority commits nothing and resigns; its entries are truncated after the heal', () => {
    const sim = new RaftSimulator({ seed: 42, nodeCount: 5 });
    const leader = electLeader(sim);
    const epoch = leader.raft!.epoch;
    for (let i = 0; i < 3; i++) sim.appendTo(leader);
    sim.runFor(1_000);
    const hwBefore = leader.log.highWatermark();
    expect(hwBefore).toBe(leader.log.endOffset().offset);
    const others = sim.nodes.filter((n) => n !== leader).map((n) => n.id);
    const minority = [leader.id, others[0]];
    sim.partition([minority, others.slice(1)]);
    const stranded: bigint[] = [];
    for (let i = 0; i < 3; i++) stranded.push(sim.appendTo(leader)!);
    // Check-quorum: the old leader stops being leader within 1.5 fetch timeouts (plus a poll).
    const resignedAt = sim.runUntilTrue(() => !leader.raft!.isLeader, 3_000 + 600);
    expect(resignedAt).not.toBeNull();
    expect(leader.log.highWatermark()).toBe(hwBefore);
    expect(sim.node(others[0]).log.highWatermark()).toBeLessThanOrEqual(hwBefore);
    // The majority elects a new leader in a later epoch and commits.
    const t = sim.runUntilTrue(() => sim.nodes.some((n) => others.slice(1).includes(n.id) && n.raft!.isLeader), 10_000);
    expect(t).not.toBeNull();
    const newLeader = sim.nodes.find((n) => n.raft!.isLeader && n !== leader)!;
    expect(newLeader.raft!.epoch).toBeGreaterThan(epoch);
    sim.appendTo(newLeader);
    sim.runFor(1_000);
    sim.heal();
    const l = electLeader(sim);
    sim.appendTo(l);
    sim.runFor(2_000);
    // Every log agrees with the committed history; the stranded entries are gone.
    const end = sim.committed.length;
    for (const n of sim.nodes) {
      expect(n.log.highWatermark()).toBe(BigInt(end));
      expect(n.log.endOffset().offset).toBe(BigInt(end));
    }
    const strandedValues = sim.appended.filter((a) => stranded.includes(a.offset) && a.nodeId === leader.id).map((a) => a.value);
    const history = sim.committed.join(',');
    for (const v of strandedValues) expect(history).not.toContain(Buffer.from(v).toString('hex'));
  });

  it("Raft's figure 8: an older epoch's entry on a majority is not committed before an entry of the leader's own epoch", () => {
    // Replication batch by batch, so a follower can hold the old entry without the new leader's first.
    const sim = new RaftSimulator({ seed: 8, nodeCount: 5, fetchMaxBytes: 64 });
    const a = electLeader(sim);
    sim.appendTo(a);
    sim.runFor(500);
    const [b, ...rest] = sim.nodes.filter((n) => n !== a);
    // 1. A (epoch eA) writes X at offset x and replicates it to B only, then crashes.
    sim.partition([[a.id, b.id], rest.map((n) => n.id)]);
    const x = sim.appendTo(a)!;
    expect(sim.runUntilTrue(() => b.log.endOffset().offset > x, 1_000)).not.toBeNull();
    sim.crash(a.id);
    // 2. One of the other three (E, epoch e2) is elected and cut off before its LeaderChange record
    //    (at offset x too) reaches anyone.
    sim.partition([[b.id], rest.map((n) => n.id)]);
    expect(sim.runUntilTrue(() => rest.some((n) => n.raft!.isLeader), 10_000)).not.toBeNull();
    const e = rest.find((n) => n.raft!.isLeader)!;
    const [c, d] = rest.filter((n) => n !== e);
    sim.partition([[b.id], [e.id], [c.id, d.id]]);
    expect(e.log.endOffset()).toEqual({ offset: x + 1n, epoch: e.raft!.epoch });
    expect(c.log.endOffset().offset).toBe(x);
    // 3. A restarts; A or B (W, epoch e3) is elected with C's vote (D and E are cut off).
    sim.restart(a.id);
    sim.partition([[a.id, b.id, c.id], [d.id], [e.id]]);
    expect(sim.runUntilTrue(() => a.raft!.isLeader || b.raft!.isLeader, 15_000)).not.toBeNull();
    const w = a.raft!.isLeader ? a : b;
    // 4. C fetches X (one batch) and reports it: X is on a majority (W, B, C), but W's own first
    //    entry is not yet on C. Then W crashes and B is cut off.
    const reported = sim.runUntilTrue(() => (w.raft!.currentState as LeaderState).voterStates.get(c.id)?.endOffset === x + 1n, 5_000);
    expect(reported).not.toBeNull();
    expect(c.log.endOffset().offset).toBe(x + 1n);
    expect(w.log.highWatermark()).toBeLessThanOrEqual(x);
    sim.crash(w.id);
    sim.partition([[b.id], [c.id, d.id, e.id]]);
    // 5. E's log (e2 at x) beats C's (eA at x): E is elected by C and D and replaces X. That is
    //    allowed only because X was never committed; the simulator's checks throw otherwise.
    expect(sim.runUntilTrue(() => e.raft!.isLeader && c.log.endOffset().epoch === e.raft!.epoch, 20_000)).not.toBeNull();
    const xValue = Buffer.from(sim.appended.find((p) => p.offset === x && p.nodeId === a.id)!.value).toString('hex');
    expect(sim.entriesOf(c, x + 1n)[Number(x)]).not.toContain(xValue);
    expect(sim.committed.join(',')).not.toContain(xValue);
  });

  it('a voter that crashes right after voting keeps its vote: the other candidate of that epoch cannot win with it', () => {
    // S leads; A and B cannot reach each other. S crashes and comes back, A and B time out, both get
    // S's pre-vote and run in the same epoch; S votes for one, crashes at once and restarts; the
    // other's Vote (refused while S was down, retried after the backoff) then reaches the restarted
    // S. Whether both candidacies overlap depends on the seed, so several seeds are tried. A voter
    // that did not persist its vote before answering grants it again here: two leaders.
    let exercised = 0;
    for (let seed = 1; seed <= 60 && exercised < 3; seed++) {
      const sim = new RaftSimulator({ seed, nodeCount: 3 });
      const s = electLeader(sim);
      const [a, b] = sim.nodes.filter((n) => n !== s);
      sim.runFor(300);
      sim.blockLink(a.id, b.id);
      const epoch = s.raft!.epoch;
      sim.crash(s.id);
      sim.runFor(50);
      sim.restart(s.id);
      const voted = sim.runUntilTrue(() => {
        const st = s.raft!.currentState;
        return st.name === 'Unattached' && st.epoch === epoch + 1 && st.votedId >= 0 && a.raft!.stateName === 'Candidate' && b.raft!.stateName === 'Candidate';
      }, 10_000);
      if (voted === null || a.raft!.epoch !== epoch + 1 || b.raft!.epoch !== epoch + 1) continue;
      exercised++;
      const chosen = (s.raft!.currentState as { votedId: number }).votedId;
      // The chosen one hears S's vote and leads, but cannot tell S so (BeginQuorumEpoch would
      // otherwise make S a follower before the other candidate asks again).
      sim.blockLink(chosen, s.id, true);
      sim.crash(s.id);
      sim.restart(s.id);
      sim.runFor(3_000);
      // The simulator throws on a second leader of epoch + 1; the other candidate never led it.
      expect(sim.leaders.get(epoch + 1) ?? chosen).toBe(chosen);
    }
    expect(exercised).toBeGreaterThan(0);
  });

  it('pre-vote: a follower partitioned alone does not bump the epoch, and rejoining does not disturb the leader', () => {
    // No client: the loner's log stays as up to date as everyone's, so only pre-vote's "I still
    // follow a live leader" rule can stop it (a lagging log would be refused anyway).
    const sim = new RaftSimulator({ seed: 7, nodeCount: 3 });
    const leader = electLeader(sim);
    const epoch = leader.raft!.epoch;
    const loner = sim.nodes.find((n) => n !== leader)!;
    sim.partition([[loner.id], sim.nodes.filter((n) => n !== loner).map((n) => n.id)]);
    const states = new Set<string>();
    for (let i = 0; i < 200; i++) {
      sim.runFor(100);
      states.add(loner.raft!.stateName);
      expect(loner.raft!.epoch).toBe(epoch);
      expect(leader.raft!.isLeader).toBe(true);
    }
    // It did time out and try (pre-vote), but never became a candidate.
    expect(states.has('Prospective')).toBe(true);
    expect(states.has('Candidate')).toBe(false);
    // Heal just before its fetch timeout fires, so that its pre-votes reach the quorum: the leader
    // and the follower that still hears from it refuse, and it goes back to following the leader.
    // Repeated a few times; without pre-vote (or with a follower granting it) the leader is unseated.
    let preVotesDelivered = 0;
    for (let round = 0; round < 5; round++) {
      expect(sim.runUntilTrue(() => loner.raft!.stateName === 'Follower', 10_000)).not.toBeNull();
      const st = loner.raft!.currentState;
      if (st.name !== 'Follower') throw new Error('not a follower');
      sim.runUntil(st.fetchDeadline - 5);
      expect(loner.raft!.currentState).toBe(st);
      sim.heal();
      const went = sim.runUntilTrue(() => loner.raft!.stateName === 'Prospective', 100);
      if (went !== null) preVotesDelivered++;
      for (let i = 0; i < 30; i++) {
        sim.runFor(100);
        expect(leader.raft!.isLeader).toBe(true);
        expect(leader.raft!.epoch).toBe(epoch);
      }
      expect(sim.stableLeader()).toBe(leader);
      sim.partition([[loner.id], sim.nodes.filter((n) => n !== loner).map((n) => n.id)]);
      sim.runFor(3_000);
    }
    expect(preVotesDelivered).toBeGreaterThan(0);
    sim.heal();
    sim.runFor(3_000);
    expect(sim.stableLeader()).toBe(leader);
    expect(loner.log.highWatermark()).toBeGreaterThan(0n);
  });

  it("observers find the leader through any voter, replicate the committed log and are tracked as the leader's observers", () => {
    const sim = new RaftSimulator({ seed: 21, nodeCount: 3, observerCount: 2, appendIntervalMs: 50 });
    const leader = electLeader(sim);
    sim.runFor(2_000);
    const observers = sim.nodes.filter((n) => n.id > 3);
    for (const o of observers) {
      expect(o.raft!.isVoter).toBe(false);
      expect(o.raft!.stateName).toBe('Follower');
      expect(o.log.highWatermark()).toBeGreaterThan(30n);
    }
    const ls = leader.raft!.currentState as LeaderState;
    expect([...ls.observerStates.keys()].sort()).toEqual([4, 5]);
    // Observers do not count for the high watermark or check-quorum: with both other voters down the
    // leader commits nothing more and resigns.
    const hw = leader.log.highWatermark();
    for (const n of sim.nodes) if (n.id <= 3 && n !== leader) sim.crash(n.id);
    sim.runFor(1_000);
    expect(leader.log.highWatermark()).toBe(hw);
    expect(sim.runUntilTrue(() => !leader.raft!.isLeader, 4_000)).not.toBeNull();
    // A new leader after the voters return; the observers follow it.
    for (const n of sim.nodes) sim.restart(n.id);
    const l2 = electLeader(sim);
    expect(l2.raft!.epoch).toBeGreaterThan(ls.epoch);
    for (const o of observers) expect(o.raft!.leaderId).toBe(l2.id);
  });

  it.each([3, 5])('a leader that shuts down gracefully (%i voters) is replaced within a second, its successor first', (voters) => {
    const sim = new RaftSimulator({ seed: 5 + voters, nodeCount: voters, appendIntervalMs: 50 });
    const leader = electLeader(sim);
    sim.runFor(1_000);
    const start = sim.now;
    leader.raft!.beginShutdown();
    const done = sim.runUntilTrue(() => leader.raft!.isShutdownComplete(), 1_000);
    expect(done).not.toBeNull();
    sim.crash(leader.id);
    const t = sim.runUntilTrue(() => sim.nodes.some((n) => n.raft?.isLeader), 2_000);
    expect(t).not.toBeNull();
    expect(t! - start).toBeLessThan(1_000);
    sim.restart(leader.id);
    expect(electLeader(sim)).not.toBe(leader);
  });

  it('a crashed leader is replaced; restarted, it comes back resigned and follows the new leader', () => {
    const sim = new RaftSimulator({ seed: 3, nodeCount: 3, appendIntervalMs: 100 });
    const leader = electLeader(sim);
    sim.runFor(1_000);
    const epoch = leader.raft!.epoch;
    sim.crash(leader.id);
    const t = sim.runUntilTrue(() => sim.nodes.some((n) => n.raft?.isLeader), 10_000);
    expect(t).not.toBeNull();
    sim.restart(leader.id);
    expect(leader.raft!.stateName).toBe('Resigned');
    const l = electLeader(sim);
    expect(l).not.toBe(leader);
    expect(l.raft!.epoch).toBeGreaterThan(epoch);
  });

  it('a replica behind the leader log start catches up from a snapshot fetched in chunks', () => {
    const sim = new RaftSimulator({ seed: 11, nodeCount: 3, appendIntervalMs: 20 });
    const leader = electLeader(sim);
    const lagging = sim.nodes.find((n) => n !== leader)!;
    sim.crash(lagging.id);
    sim.runFor(8_000);
    const snap = sim.snapshot(leader.id)!;
    expect(snap).not.toBeNull();
    expect(leader.log.startOffset()).toBe(snap.offset);
    // The snapshot is larger than one FetchSnapshot response (fetchMaxBytes 4096 in the simulator).
    expect(leader.log.readSnapshot(snap)!.length).toBeGreaterThan(4096);
    sim.restart(lagging.id);
    const t = sim.runUntilTrue(() => lagging.log.highWatermark() >= snap.offset && lagging.log.latestSnapshotId() !== null, 10_000);
    expect(t).not.toBeNull();
    expect(lagging.log.latestSnapshotId()).toEqual(snap);
    sim.runFor(2_000);
    expect(lagging.log.highWatermark()).toBeGreaterThan(snap.offset);
  });
});
