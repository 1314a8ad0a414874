/**
 * The rebalance rows of the bench ('rebalance ...'): how long a 10-member group of librdkafka
 * consumers (node-rdkafka) takes to be stable again after an 11th member subscribes, on one krill
 * broker process, for the classic protocol with the eager `range` assignor, the classic protocol
 * with `cooperative-sticky`, and the KIP-848 consumer protocol (server-side `uniform` assignor).
 *
 * Owns: starting the consumers, tracking every member's partitions from its rebalance callbacks,
 * deciding when the group is stable (as the clients see it: every partition of the topic owned by
 * exactly one member and every member owning at least one, i.e. consumption could proceed
 * everywhere), checking that against the coordinator (DescribeGroups / ConsumerGroupDescribe), and
 * the figures: time from the 11th member's subscribe() to stable, partitions whose owner changed,
 * partitions revoked, the longest any partition went unowned, the time no partition was owned at
 * all (the eager row's stop-the-world), and the phase timings that show what the wait is made of.
 * Client and broker timings are their defaults (printed in the notes), except node-rdkafka's
 * consume loop (CONSUME_LOOP_DELAY_MS, CONSUME_TIMEOUT_MS) and --quick's shorter intervals.
 */
import { connect, type BrokerConnection } from '../client/network-client';
import { readConsumerProtocolAssignment } from '../protocol/generated/message-data/consumer-protocol-assignment';
import { Reader } from '../protocol/primitives/reader';
import { KRILL_BIN, KRILL_READY, makeTempDir, removeTempDir, spawnBroker, type BrokerProcess } from './proc';
import { loadRdkafka } from './workloads';

export const REBALANCE_PARTITIONS = 60;
export const REBALANCE_MEMBERS = 10;
/**
 * node-rdkafka's flowing consume() sleeps 500 ms (setDefaultConsumeLoopTimeoutDelay) after every
 * poll that timed out empty, and rebalance callbacks are served only while it polls. On this empty
 * topic every poll times out, so the sleep would delay each callback by up to 0.5 s, which a
 * consumer of a busy topic (always polling) does not see; it is 0 here (polls back to back).
 */
const CONSUME_LOOP_DELAY_MS = 0;
/**
 * node-rdkafka's poll timeout (setDefaultConsumeTimeout, 1000 ms by default). A rebalance callback
 * wakes a poll at once, so this does not delay callbacks; but disconnect() joins the consume loop's
 * thread on the JS thread, waiting for the poll in progress, so with 11 consumers closing the
 * default costs ~5 s of teardown per run.
 */
const CONSUME_TIMEOUT_MS = 100;

type Protocol = 'classic' | 'consumer';
interface RowDef {
  name: string;
  protocol: Protocol;
  /** classic: partition.assignment.strategy; consumer: the server assignor (the broker's default). */
  assignor: string;
  incremental: boolean;
}
export const REBALANCE_ROWS: readonly RowDef[] = [
  { name: 'rebalance classic range', protocol: 'classic', assignor: 'range', incremental: false },
  { name: 'rebalance classic cooperative-sticky', protocol: 'classic', assignor: 'cooperative-sticky', incremental: true },
  { name: 'rebalance consumer uniform', protocol: 'consumer', assignor: 'uniform', incremental: true },
];

export interface RebalanceSample {
  run: number;
  /** The 11th member's subscribe() to the group being stable again (client callbacks), ms. */
  stableMs: number;
  /** Partitions whose owner differs between the 10-member and the 11-member assignment. */
  moved: number;
  /** Partitions revoked from their owners during the rebalance (eager: all of them). */
  revoked: number;
  /** The longest any one partition had no owner, ms. */
  maxUnownedMs: number;
  /** Time during which no partition at all was owned (eager's stop-the-world), ms. */
  allUnownedMs: number;
  /** subscribe() to the last of the 10 old members' first callback (eager: its revoke-all, i.e. it noticed and rejoined), ms; NaN if none had a callback. */
  lastOldMemberReactMs: number;
  /** subscribe() to the first old member's first callback, ms. */
  firstOldMemberReactMs: number;
  /** subscribe() to the new member's first assignment, ms. */
  newMemberFirstAssignMs: number;
  /** Old members that got any callback (consumer protocol / cooperative: those losing partitions). */
  oldMembersInvolved: number;
  /** Rebalance callbacks (assign + revoke) over all members, from subscribe() to stable. */
  callbacks: number;
  /** The 10 members' own start (connect + subscribe) to stable, ms (not the measured figure). */
  setupMs: number;
  /** The 10-member group's last rebalance callback (its last SyncGroup / assignment) to the 11th member's subscribe(), ms. */
  joinAfterSettledMs: number;
}

export interface RebalanceRow {
  name: string;
  protocol: Protocol;
  assignor: string;
  members: number;
  partitions: number;
  samples: RebalanceSample[];
  median: Omit<RebalanceSample, 'run'>;
  /** Fastest and slowest run's stableMs. */
  stableRangeMs: [number, number];
  /** librdkafka settings on top of the defaults (--quick's, then --rebalance-conf; classic rows only). */
  extraConf: Record<string, string>;
  /** Arguments given to the krill process beyond port and data dir (--quick's, then --krill-arg). */
  krillArgs: string[];
  /** Section wall time (all runs, warm-up, setup and teardown included), seconds. */
  sectionSeconds?: number;
}

const median = (xs: number[]): number => {
  const s = xs.filter((x) => !Number.isNaN(x)).sort((a, b) => a - b);
  if (!s.length) return NaN;
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(20);
  }
}

/* eslint-disable @typescript-eslint/no-explicit-any */
interface Member {
  clientId: string;
  consumer: any;
  owned: Set<number>;
  /** disconnect() called: rebalance callbacks are no longer acted on. */
  closing: boolean;
}

/** Every member's partitions, updated from the rebalance callbacks; watches for stability. */
class Tracker {
  readonly members: Member[] = [];
  /** When the last rebalance callback of any member ran. */
  lastCallbackAt = NaN;
  /** While measuring: */
  private window: {
    t0: number;
    expect: number;
    newMember: Member;
    old: Set<Member>;
    firstCallback: Map<Member, number>;
    newFirstAssign: number;
    revoked: number;
    callbacks: number;
    unownedSince: Map<number, number>;
    maxUnowned: number;
    allUnownedSince: number;
    allUnowned: number;
    resolve: (t: number) => void;
  } | null = null;

  constructor(readonly topic: string, readonly partitions: number) {}

  owners(): Map<number, string[]> {
    const m = new Map<number, string[]>();
    for (const mem of this.members) for (const p of mem.owned) m.set(p, [...(m.get(p) ?? []), mem.clientId]);
    return m;
  }

  /** n members, each owning something, every partition owned exactly once. */
  stable(n: number): boolean {
    if (this.members.length !== n) return false;
    let total = 0;
    const seen = new Set<number>();
    for (const m of this.members) {
      if (m.owned.size === 0) return false;
      total += m.owned.size;
      for (const p of m.owned) seen.add(p);
    }
    return total === this.partitions && seen.size === this.partitions;
  }

  private ownedCount(p: number): number {
    let c = 0;
    for (const m of this.members) if (m.owned.has(p)) c++;
    return c;
  }

  private totalOwned(): number {
    return this.members.reduce((a, m) => a + m.owned.size, 0);
  }

  onCallback(m: Member, kind: 'assign' | 'revoke', parts: number[]): void {
    const t = nowMs();
    this.lastCallbackAt = t;
    if (kind === 'assign') for (const p of parts) m.owned.add(p);
    else for (const p of parts) m.owned.delete(p);
    const w = this.window;
    if (!w) return;
    w.callbacks++;
    if (!w.firstCallback.has(m)) w.firstCallback.set(m, t);
    if (kind === 'revoke') {
      w.revoked += parts.length;
      for (const p of parts) if (this.ownedCount(p) === 0 && !w.unownedSince.has(p)) w.unownedSince.set(p, t);
      if (this.totalOwned() === 0 && Number.isNaN(w.allUnownedSince)) w.allUnownedSince = t;
    } else {
      if (m === w.newMember && Number.isNaN(w.newFirstAssign) && parts.length) w.newFirstAssign = t;
      for (const p of parts) {
        const since = w.unownedSince.get(p);
        if (since !== undefined) {
          w.maxUnowned = Math.max(w.maxUnowned, t - since);
          w.unownedSince.delete(p);
        }
      }
      if (!Number.isNaN(w.allUnownedSince) && this.totalOwned() > 0) {
        w.allUnowned += t - w.allUnownedSince;
        w.allUnownedSince = NaN;
      }
    }
    if (this.stable(w.expect)) w.resolve(t);
  }

  /** Starts the measured window at `t0` (the new member's subscribe), resolving at the stable point. */
  watch(t0: number, newMember: Member, expect: number): Promise<number> {
    return new Promise((resolve) => {
      this.window = {
        t0,
        expect,
        newMember,
        old: new Set(this.members.filter((m) => m !== newMember)),
        firstCallback: new Map(),
        newFirstAssign: NaN,
        revoked: 0,
        callbacks: 0,
        unownedSince: new Map(),
        maxUnowned: 0,
        allUnownedSince: NaN,
        allUnowned: 0,
        resolve,
      };
    });
  }

  endWatch(): Omit<RebalanceSample, 'run' | 'stableMs' | 'moved' | 'setupMs' | 'joinAfterSettledMs'> {
    const w = this.window!;
    this.window = null;
    const oldTimes = [...w.firstCallback.entries()].filter(([m]) => w.old.has(m)).map(([, t]) => t - w.t0);
    return {
      revoked: w.revoked,
      maxUnownedMs: w.maxUnowned,
      allUnownedMs: w.allUnowned,
      lastOldMemberReactMs: oldTimes.length ? Math.max(...oldTimes) : NaN,
      firstOldMemberReactMs: oldTimes.length ? Math.min(...oldTimes) : NaN,
      newMemberFirstAssignMs: w.newFirstAssign - w.t0,
      oldMembersInvolved: oldTimes.length,
      callbacks: w.callbacks,
    };
  }
}

/** A connected (not yet subscribed) librdkafka consumer of `row`'s protocol in `group`. */
function newMember(rd: any, bootstrap: string, row: RowDef, group: string, clientId: string, tracker: Tracker, extra: Record<string, string>): Promise<Member> {
  const m: Member = { clientId, consumer: undefined, owned: new Set(), closing: false };
  const conf: Record<string, unknown> = {
    // The consumer protocol takes its timings from the broker (group.consumer.*), not from these.
    ...(row.protocol === 'classic' ? extra : {}),
    'group.id': group,
    'client.id': clientId,
    'metadata.broker.list': bootstrap,
    'group.protocol': row.protocol,
    rebalance_cb: (err: { code: number }, assignment: { topic: string; partition: number }[]) => {
      const parts = assignment.filter((a) => a.topic === tracker.topic).map((a) => a.partition);
      const assign = err.code === rd.CODES.ERRORS.ERR__ASSIGN_PARTITIONS;
      const revoke = err.code === rd.CODES.ERRORS.ERR__REVOKE_PARTITIONS;
      const act = (): void => {
        if (assign && row.incremental) consumer.incrementalAssign(assignment);
        else if (assign) consumer.assign(assignment);
        else if (revoke && row.incremental) consumer.incrementalUnassign(assignment);
        else if (revoke) consumer.unassign();
      };
      if (m.closing) {
        // During teardown, members still closing get the partitions of those already gone, and
        // node-rdkafka throws from these calls once disconnect() has begun: nothing to track then.
        try {
          act();
        } catch {
          /* disconnected */
        }
        return;
      }
      act();
      // Eager: unassign() drops everything, whatever the list says.
      if (assign) tracker.onCallback(m, 'assign', parts);
      else if (revoke) tracker.onCallback(m, 'revoke', row.incremental ? parts : [...m.owned]);
    },
  };
  if (row.protocol === 'classic') conf['partition.assignment.strategy'] = row.assignor;
  const consumer = new rd.KafkaConsumer(conf, {});
  m.consumer = consumer;
  consumer.on('event.error', () => undefined);
  consumer.setDefaultConsumeLoopTimeoutDelay(CONSUME_LOOP_DELAY_MS);
  consumer.setDefaultConsumeTimeout(CONSUME_TIMEOUT_MS);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${clientId} did not connect within 20 s`)), 20000);
    consumer.connect({ timeout: 20000 }, (err: Error | null) => {
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(m);
    });
  });
}

function subscribe(m: Member, topic: string): void {
  m.consumer.subscribe([topic]);
  m.consumer.consume();
}

function disconnect(m: Member): Promise<void> {
  m.closing = true;
  if (!m.consumer.isConnected()) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      process.stderr.write(`${m.clientId}: disconnect() not done after 30 s\n`);
      resolve();
    }, 30000);
    m.consumer.disconnect(() => {
      clearTimeout(t);
      resolve();
    });
  });
}

/** The coordinator's view, per client id: the partitions of `topic` it assigned, or null while not settled. */
async function coordinatorView(wire: BrokerConnection, row: RowDef, group: string, topic: string): Promise<Map<string, number[]> | null> {
  const out = new Map<string, number[]>();
  if (row.protocol === 'classic') {
    const g = (await wire.send('DescribeGroups', undefined, { groups: [group], includeAuthorizedOperations: false })).groups[0];
    if (!g || g.errorCode !== 0 || g.groupState !== 'Stable') return null;
    for (const mem of g.members) {
      const bytes = mem.memberAssignment;
      let parts: number[] = [];
      if (bytes.length) {
        const r = new Reader(bytes);
        const version = r.int16();
        const a = readConsumerProtocolAssignment(r, Math.min(version, 3));
        parts = a.assignedPartitions.filter((t) => t.topic === topic).flatMap((t) => t.partitions);
      }
      out.set(mem.clientId, parts.sort((a, b) => a - b));
    }
  } else {
    const g = (await wire.send('ConsumerGroupDescribe', undefined, { groupIds: [group], includeAuthorizedOperations: false })).groups[0];
    if (!g || g.errorCode !== 0 || g.groupState !== 'Stable') return null;
    if (g.members.some((m) => m.memberEpoch !== g.groupEpoch)) return null;
    for (const mem of g.members) {
      out.set(mem.clientId, mem.assignment.topicPartitions.filter((t) => t.topicName === topic).flatMap((t) => t.partitions).sort((a, b) => a - b));
    }
  }
  return out;
}

/** Waits until the coordinator reports the group stable with exactly the members' own view of their partitions. */
async function checkCoordinator(wire: BrokerConnection, row: RowDef, group: string, tracker: Tracker): Promise<void> {
  let last = '';
  try {
    await until(
      `${group}: the coordinator's assignment to match the clients'`,
      async () => {
        const v = await coordinatorView(wire, row, group, tracker.topic);
        if (!v) return (last = 'not stable'), false;
        const mine = new Map(tracker.members.map((m) => [m.clientId, [...m.owned].sort((a, b) => a - b)]));
        const a = JSON.stringify([...v.entries()].sort());
        const b = JSON.stringify([...mine.entries()].sort());
        last = `coordinator ${a}\nclients     ${b}`;
        return a === b;
      },
      20000,
    );
  } catch (err) {
    throw new Error(`${(err as Error).message}\n${last}`);
  }
}

async function createTopic(wire: BrokerConnection, topic: string, partitions: number): Promise<void> {
  const res = await wire.send('CreateTopics', undefined, {
    topics: [{ name: topic, numPartitions: partitions, replicationFactor: 1, assignments: [], configs: [] }],
    timeoutMs: 10000,
    validateOnly: false,
  });
  const t = res.topics[0];
  if (t.errorCode !== 0) throw new Error(`CreateTopics ${topic}: error ${t.errorCode} ${t.errorMessage ?? ''}`);
}

let groupSeq = 0;

/** One measurement: 10 members stable, then an 11th subscribes; returns the sample. Untimed setup and teardown around it. */
async function oneRun(rd: any, bp: BrokerProcess, wire: BrokerConnection, row: RowDef, topic: string, run: number, members: number, extra: Record<string, string>): Promise<RebalanceSample> {
  const group = `bench-rebalance-${row.protocol}-${row.assignor}-${process.pid}-${++groupSeq}`;
  const bootstrap = `${bp.host}:${bp.port}`;
  const tracker = new Tracker(topic, REBALANCE_PARTITIONS);
  const all: Member[] = [];
  try {
    const tSetup = nowMs();
    const firstTen = await Promise.all(Array.from({ length: members }, (_, i) => newMember(rd, bootstrap, row, group, `${group}-m${i}`, tracker, extra)));
    all.push(...firstTen);
    tracker.members.push(...firstTen);
    for (const m of firstTen) subscribe(m, topic);
    await until(`${group}: ${members} members stable`, () => tracker.stable(members), 90000);
    const setupMs = nowMs() - tSetup;
    await checkCoordinator(wire, row, group, tracker);
    if (!tracker.stable(members)) throw new Error(`${group}: the 10-member assignment changed while the coordinator was checked`);
    const before = tracker.owners();

    const late = await newMember(rd, bootstrap, row, group, `${group}-m${members}`, tracker, extra);
    all.push(late);
    tracker.members.push(late);
    const t0 = nowMs();
    const joinAfterSettledMs = t0 - tracker.lastCallbackAt;
    const stableAt = tracker.watch(t0, late, members + 1);
    subscribe(late, topic);
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<number>((r) => (timer = setTimeout(() => r(NaN), 90000)));
    const t1 = await Promise.race([stableAt, timeout]);
    clearTimeout(timer);
    const phases = tracker.endWatch();
    if (Number.isNaN(t1)) throw new Error(`${group}: not stable with ${members + 1} members within 90 s: ${JSON.stringify([...tracker.owners()])}`);
    const after = tracker.owners();
    let moved = 0;
    for (let p = 0; p < REBALANCE_PARTITIONS; p++) if (before.get(p)![0] !== after.get(p)![0]) moved++;
    const sizes = tracker.members.map((m) => m.owned.size);
    if (Math.max(...sizes) - Math.min(...sizes) > 1) throw new Error(`${group}: unbalanced final assignment ${sizes.join(',')}`);
    await checkCoordinator(wire, row, group, tracker);
    return { run, stableMs: t1 - t0, moved, setupMs, joinAfterSettledMs, ...phases };
  } finally {
    await Promise.all(all.map(disconnect));
  }
}

/** The rebalance section: one krill process, every selected row `o.runs` times (rows interleaved per run). */
export async function measureRebalance(
  o: { quick: boolean; runs: number; krillArgs: string[]; rebalanceConf: Record<string, string> },
  selected: (name: string) => boolean,
  log: (line: string) => void,
): Promise<RebalanceRow[]> {
  const rows = REBALANCE_ROWS.filter((r) => selected(r.name));
  if (!rows.length) return [];
  const rd = loadRdkafka() as any;
  if (!rd) {
    log('rebalance rows skipped: node-rdkafka is not installed');
    return [];
  }
  const t0 = Date.now();
  const dir = makeTempDir('krill-bench-rebalance-');
  // Broker defaults (group.initial.rebalance.delay.ms 3000 lets the 10 first members join in one
  // rebalance; it applies only to an empty group, not to the measured join). --quick, a smoke test,
  // shortens every interval the figures wait for, so the section takes ~15 s instead of ~100 s.
  const quickKrill = o.quick
    ? ['group.consumer.min.heartbeat.interval.ms=500', 'group.consumer.heartbeat.interval.ms=500', 'group.initial.rebalance.delay.ms=500'].flatMap((kv) => ['--override', kv])
    : [];
  const krillArgs = [...quickKrill, ...o.krillArgs];
  const extra = { ...(o.quick ? { 'heartbeat.interval.ms': '500' } : {}), ...o.rebalanceConf };
  const bp = await spawnBroker({ name: 'krill (rebalance)', args: [KRILL_BIN, '--port', '0', '--data-dir', dir, ...krillArgs], readyPattern: KRILL_READY, timeoutMs: 20000 });
  let wire: BrokerConnection | null = null;
  const out: RebalanceRow[] = rows.map((r) => ({
    name: r.name,
    protocol: r.protocol,
    assignor: r.assignor,
    members: REBALANCE_MEMBERS,
    partitions: REBALANCE_PARTITIONS,
    samples: [],
    median: {} as RebalanceRow['median'],
    stableRangeMs: [NaN, NaN],
    extraConf: extra,
    krillArgs,
  }));
  try {
    wire = await connect(bp.host, bp.port, { clientId: 'krill-bench-rebalance' });
    const topic = 'bench-rebalance';
    await createTopic(wire, topic, REBALANCE_PARTITIONS);
    for (let run = 1; run <= o.runs; run++) {
      for (let i = 0; i < rows.length; i++) {
        const s = await oneRun(rd, bp, wire, rows[i], topic, run, REBALANCE_MEMBERS, extra);
        out[i].samples.push(s);
        log(
          `  run ${run} ${rows[i].name.padEnd(38)} stable again after ${s.stableMs.toFixed(0).padStart(5)} ms; moved ${s.moved}, revoked ${s.revoked}, ` +
            `longest unowned ${s.maxUnownedMs.toFixed(0)} ms, none owned ${s.allUnownedMs.toFixed(0)} ms; old members reacted ${s.firstOldMemberReactMs.toFixed(0)}-${s.lastOldMemberReactMs.toFixed(0)} ms ` +
            `(${s.oldMembersInvolved} of ${REBALANCE_MEMBERS}), new member's first partitions ${s.newMemberFirstAssignMs.toFixed(0)} ms, ${s.callbacks} callbacks ` +
            `(joined ${s.joinAfterSettledMs.toFixed(0)} ms after the 10 settled, which took ${(s.setupMs / 1000).toFixed(1)} s)`,
        );
      }
    }
  } catch (err) {
    log(`krill (rebalance) stderr (tail):\n${bp.stderrTail().slice(-4000)}`);
    throw err;
  } finally {
    await wire?.close().catch(() => undefined);
    await bp.stop();
    removeTempDir(dir);
  }
  for (const r of out) {
    const m = (f: (s: RebalanceSample) => number): number => Math.round(median(r.samples.map(f)));
    r.median = {
      stableMs: m((s) => s.stableMs),
      moved: m((s) => s.moved),
      revoked: m((s) => s.revoked),
      maxUnownedMs: m((s) => s.maxUnownedMs),
      allUnownedMs: m((s) => s.allUnownedMs),
      lastOldMemberReactMs: m((s) => s.lastOldMemberReactMs),
      firstOldMemberReactMs: m((s) => s.firstOldMemberReactMs),
      newMemberFirstAssignMs: m((s) => s.newMemberFirstAssignMs),
      oldMembersInvolved: m((s) => s.oldMembersInvolved),
      callbacks: m((s) => s.callbacks),
      setupMs: m((s) => s.setupMs),
      joinAfterSettledMs: m((s) => s.joinAfterSettledMs),
    };
    const st = r.samples.map((s) => s.stableMs);
    r.stableRangeMs = [Math.round(Math.min(...st)), Math.round(Math.max(...st))];
  }
  const seconds = Math.round((Date.now() - t0) / 100) / 10;
  for (const r of out) r.sectionSeconds = seconds;
  log(`rebalance section: ${seconds} s`);
  return out;
}

/** The notes line for the rebalance rows: what was measured and with which settings. */
export function rebalanceNote(rows: readonly RebalanceRow[], librdkafkaVersion: string): string {
  const extra = Object.entries(rows[0]?.extraConf ?? {}).map(([k, v]) => `${k}=${v}`);
  const krillArgs = rows[0]?.krillArgs ?? [];
  const overridden = [
    ...(extra.length ? [`librdkafka ${extra.join(', ')} (classic rows)`] : []),
    ...(krillArgs.length ? [`krill ${krillArgs.join(' ')}`] : []),
  ];
  return (
    `rebalance rows: one krill process, a ${REBALANCE_PARTITIONS}-partition topic (empty), ` +
    `${REBALANCE_MEMBERS} librdkafka ${librdkafkaVersion} consumers (node-rdkafka, flowing consume(), rebalance_cb doing assign/unassign or their incremental forms) in a fresh group per run; ` +
    'once the clients and the coordinator agree on a stable 10-member assignment, an 11th consumer (already connected) subscribes, and "stable again" is the time from its subscribe() ' +
    'to the rebalance callback after which all 11 members own something and every partition is owned exactly once (checked against DescribeGroups / ConsumerGroupDescribe afterwards). ' +
    'Settings are the defaults: classic consumers heartbeat.interval.ms 3000, session.timeout.ms 45000, max.poll.interval.ms 300000 (the rebalance timeout); ' +
    'the consumer protocol takes its timings from the broker: group.consumer.heartbeat.interval.ms 5000, group.consumer.session.timeout.ms 45000, assignor uniform; ' +
    'group.initial.rebalance.delay.ms 3000 (it applies to the 10 members forming the group, not to the measured join)' +
    (overridden.length ? `; overridden in this run: ${overridden.join('; ')}` : '') +
    `. node-rdkafka's consume loop polls ${CONSUME_TIMEOUT_MS} ms at a time with no sleep between empty polls (its defaults, 1000 ms and a 500 ms sleep, would delay callbacks on an empty topic ` +
    'and make each close() wait out a poll). The 11th member subscribes right after the 10-member group settled ("joined after"), i.e. just after every member\'s last heartbeat: ' +
    'the longest wait for the next one. moved = partitions whose owner changed; revoked = partitions taken away in revoke callbacks (eager: all); longest unowned = the longest one ' +
    'partition went without an owner; none owned = time with no partition owned at all (eager\'s stop-the-world); old members reacted = subscribe() to the first / last of the 10 old ' +
    'members\' first callback.'
  );
}
