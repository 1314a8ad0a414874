/**
 * Members of a KIP-848 consumer group (librdkafka 2.12 through node-rdkafka, group.protocol=consumer,
 * auto-commits every 100 ms of the offsets of messages already seen) for the failure tests: in this
 * process (InProcessMember) or in a child process that can be SIGKILLed (ChildMember,
 * compat-tests/helpers/kip848-consumer.js). Both track what they own from their rebalance callbacks
 * and what they read, and report every change to an Ownership log that records any partition
 * assigned to one member while another still owns it.
 * Also: bounded polling, ConsumerGroupDescribe / FindCoordinator through krill's own client, and the
 * stable-group check (disjoint, complete, balanced assignments that match the callbacks).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { connect } from '../../client/network-client';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

const REPO_ROOT = path.resolve(__dirname, '..', '..');
const SCRIPT = path.join(__dirname, 'kip848-consumer.js');
const EXIT_WITH_PARENT = path.join(__dirname, 'exit-with-parent.js');

/** Children alive now: killed when this process exits, whatever happened to the test. */
const liveChildren = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of liveChildren) c.kill('SIGKILL');
});

/** Polls `check` every 25 ms until it is truthy; throws after `timeoutMs`. */
export async function until<T>(what: string, check: () => T | undefined | false | null | Promise<T | undefined | false | null>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${(last as Error).message})` : ''}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/**
 * Who owns which partition of one topic, as the members' rebalance callbacks say, in the order this
 * process sees them: an assignment of a partition that another member still owns is a violation.
 */
export class Ownership {
  readonly owner = new Map<number, string>();
  readonly violations: string[] = [];
  /** Every change, for failure messages. */
  readonly history: string[] = [];

  constructor(readonly topic: string) {}

  assigned(member: string, partitions: number[]): void {
    this.history.push(`${Date.now()} ${member} +${partitions.join(',')}`);
    for (const p of partitions) {
      const holder = this.owner.get(p);
      if (holder !== undefined && holder !== member) this.violations.push(`partition ${p} assigned to ${member} while ${holder} owns it`);
      this.owner.set(p, member);
    }
  }

  revoked(member: string, partitions: number[]): void {
    this.history.push(`${Date.now()} ${member} -${partitions.join(',')}`);
    for (const p of partitions) if (this.owner.get(p) === member) this.owner.delete(p);
  }

  /** The member is gone (killed): it owns nothing any more. */
  gone(member: string): void {
    this.history.push(`${Date.now()} ${member} gone`);
    for (const [p, m] of [...this.owner]) if (m === member) this.owner.delete(p);
  }
}

export interface MemberOptions {
  bootstrap: string;
  group: string;
  topic: string;
  clientId: string;
  instanceId?: string;
  /** Extra librdkafka properties. */
  config?: Record<string, string | number | boolean>;
  /** ChildMember: librdkafka's log (debug=cgrp) to the child's stderr (`stderrTail`). */
  verbose?: boolean;
}

/** What both kinds of member track. */
export abstract class Member {
  /** Partitions of the topic owned now. */
  readonly owned = new Set<number>();
  /** "partition/offset" -> times read. */
  readonly seen = new Map<string, number>();
  /** Every value read. */
  readonly values = new Set<string>();
  /** The first offset read on each partition since it was last assigned. */
  readonly firstAfterAssign = new Map<number, number>();
  /** When each partition was last assigned (Date.now()). */
  readonly assignedAt = new Map<number, number>();
  /** Number of assignment / revocation callbacks. */
  assignments = 0;
  revocations = 0;
  readonly errors: { code: number; fatal: boolean; msg: string }[] = [];

  constructor(
    readonly opts: MemberOptions,
    protected readonly ownership: Ownership,
  ) {}

  get clientId(): string {
    return this.opts.clientId;
  }

  protected onAssign(parts: [string, number][]): void {
    const ps = parts.filter(([t]) => t === this.opts.topic).map(([, p]) => p);
    this.assignments++;
    const now = Date.now();
    for (const p of ps) {
      this.owned.add(p);
      this.firstAfterAssign.delete(p);
      this.assignedAt.set(p, now);
    }
    this.ownership.assigned(this.clientId, ps);
  }

  protected onRevoke(parts: [string, number][]): void {
    const ps = parts.filter(([t]) => t === this.opts.topic).map(([, p]) => p);
    this.revocations++;
    for (const p of ps) this.owned.delete(p);
    this.ownership.revoked(this.clientId, ps);
  }

  protected onMessage(t: string, p: number, o: number, v: string | null): void {
    if (t !== this.opts.topic) return;
    const k = `${p}/${o}`;
    this.seen.set(k, (this.seen.get(k) ?? 0) + 1);
    if (v !== null) this.values.add(v);
    if (!this.firstAfterAssign.has(p)) this.firstAfterAssign.set(p, o);
  }

  abstract stop(): Promise<void>;
}

export class InProcessMember extends Member {
  consumer: any;
  /** While set, a revocation callback waits for it before handing the partitions back. */
  holdRevocations: Promise<void> | undefined;
  /** Revocation callbacks now waiting for holdRevocations. */
  heldRevocations = 0;
  private stopping = false;
  private polling: Promise<void> | undefined;

  static async start(opts: MemberOptions, ownership: Ownership): Promise<InProcessMember> {
    const m = new InProcessMember(opts, ownership);
    await m.connect();
    return m;
  }

  private connect(): Promise<void> {
    const consumer = new RdKafka.KafkaConsumer(
      {
        ...(this.opts.config ?? {}),
        ...(this.opts.instanceId ? { 'group.instance.id': this.opts.instanceId } : {}),
        'group.id': this.opts.group,
        'group.protocol': 'consumer',
        'client.id': this.opts.clientId,
        'metadata.broker.list': this.opts.bootstrap,
        'fetch.wait.max.ms': 100,
        'enable.auto.commit': true,
        'auto.commit.interval.ms': 100,
        // Stored once 'data' has seen the message (as in kip848-consumer.js), so a close never
        // commits a message that had not reached JS yet.
        'enable.auto.offset.store': false,
        'enable.partition.eof': false,
        'topic.metadata.refresh.interval.ms': 1000,
        rebalance_cb: (err: { code: number }, assignment: { topic: string; partition: number }[]) => {
          const parts = assignment.map((a) => [a.topic, a.partition] as [string, number]);
          if (err.code === RdKafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
            consumer.incrementalAssign(assignment);
            this.onAssign(parts);
          } else if (err.code === RdKafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS) {
            const hold = this.holdRevocations;
            const revoke = () => {
              this.onRevoke(parts);
              consumer.incrementalUnassign(assignment);
            };
            if (!hold) return revoke();
            this.heldRevocations++;
            void hold.then(() => {
              this.heldRevocations--;
              revoke();
            });
          }
        },
      },
      { 'auto.offset.reset': 'earliest' },
    );
    this.consumer = consumer;
    consumer.on('event.error', (e: { code: number; isFatal?: boolean; message: string }) => this.errors.push({ code: e.code, fatal: Boolean(e.isFatal), msg: String(e.message) }));
    consumer.on('data', (msg: { topic: string; partition: number; offset: number; value: Buffer | null }) => {
      this.onMessage(msg.topic, msg.partition, msg.offset, msg.value ? msg.value.toString() : null);
      try {
        consumer.offsetsStore([{ topic: msg.topic, partition: msg.partition, offset: msg.offset + 1 }]);
      } catch {
        // no longer assigned: the next owner reads it again
      }
    });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`${this.clientId} did not connect`)), 20_000);
      consumer.on('ready', () => {
        clearTimeout(timer);
        consumer.subscribe([this.opts.topic]);
        consumer.setDefaultConsumeTimeout(100);
        this.polling = this.poll();
        resolve();
      });
      consumer.connect();
    });
  }

  /**
   * Batches of up to 100 messages, each call waiting at most 100 ms, until stop(): no message is
   * ever in flight outside a call (the flowing consume() keeps a thread that does, and a
   * disconnect() then can hang in rd_kafka_destroy, keeping this process alive).
   */
  private async poll(): Promise<void> {
    while (!this.stopping) {
      const failed = await new Promise<boolean>((resolve) =>
        this.consumer.consume(100, (err: { code: number; isFatal?: boolean; message: string } | null) => {
          if (err && err.code !== RdKafka.CODES.ERRORS.ERR__TIMED_OUT) this.errors.push({ code: err.code, fatal: Boolean(err.isFatal), msg: String(err.message) });
          resolve(err !== null && err !== undefined);
        }),
      );
      await new Promise((r) => (failed ? setTimeout(r, 100) : setImmediate(r)));
    }
  }

  /** Closes the consumer (leave heartbeat), handing back its partitions. */
  async stop(): Promise<void> {
    this.stopping = true;
    await this.polling;
    if (!this.consumer?.isConnected()) return;
    return new Promise((resolve) => {
      const timer = setTimeout(resolve, 15_000);
      this.consumer.disconnect(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}

export class ChildMember extends Member {
  private child: ChildProcess | undefined;
  /** Resolves with the exit code / signal. */
  exited!: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private stderr = '';
  ready = false;
  /** The script reported its consumer closed (leave heartbeat answered). */
  closed = false;

  static async start(opts: MemberOptions, ownership: Ownership): Promise<ChildMember> {
    const m = new ChildMember(opts, ownership);
    m.spawn();
    await until(`${opts.clientId} ready`, () => m.ready || m.child === undefined, 20_000);
    if (!m.ready) throw new Error(`${opts.clientId} exited before it was ready: ${m.stderr.slice(-2000)}`);
    return m;
  }

  /** The last 200 kB of the child's stderr. */
  get stderrTail(): string {
    return this.stderr;
  }

  get running(): boolean {
    return this.child !== undefined;
  }

  private spawn(): void {
    const child = spawn(process.execPath, ['-r', EXIT_WITH_PARENT, SCRIPT, JSON.stringify({ ...this.opts, topics: [this.opts.topic] })], {
      cwd: REPO_ROOT,
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    liveChildren.add(child);
    this.child = child;
    child.stdin!.on('error', () => undefined);
    this.exited = new Promise((resolve) =>
      child.once('exit', (code, signal) => {
        liveChildren.delete(child);
        this.child = undefined;
        resolve({ code, signal });
      }),
    );
    let buf = '';
    child.stdout!.setEncoding('utf8').on('data', (s: string) => {
      buf += s;
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (line.length > 0) this.onLine(line);
      }
    });
    child.stderr!.setEncoding('utf8').on('data', (s: string) => {
      this.stderr = (this.stderr + s).slice(-200_000);
    });
  }

  private onLine(line: string): void {
    let e: any;
    try {
      e = JSON.parse(line);
    } catch {
      return; // librdkafka's own log lines, if any
    }
    if (e.ev === 'ready') this.ready = true;
    else if (e.ev === 'assign') this.onAssign(e.parts);
    else if (e.ev === 'revoke') this.onRevoke(e.parts);
    else if (e.ev === 'msg') this.onMessage(e.t, e.p, e.o, e.v);
    else if (e.ev === 'error') this.errors.push({ code: e.code, fatal: e.fatal, msg: e.msg });
    else if (e.ev === 'closed') this.closed = true;
  }

  /** SIGKILL: no leave heartbeat, no last commit. Resolves once the process is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGKILL');
    await this.exited;
    this.owned.clear();
    this.ownership.gone(this.clientId);
  }

  /** SIGTERM: the script closes its consumer (leave heartbeat), reports it (`closed`) and ends. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child) return;
    child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const r = await Promise.race([this.exited, new Promise<'timeout'>((res) => (timer = setTimeout(() => res('timeout'), 15_000)))]);
    clearTimeout(timer);
    if (r === 'timeout') await this.kill();
    this.owned.clear();
    this.ownership.gone(this.clientId);
  }
}

/** ConsumerGroupDescribe v1 of `group` from the broker at `hostPort` (undefined if it fails). */
export async function describeGroup(hostPort: string, group: string): Promise<any | undefined> {
  const [host, port] = hostPort.split(':');
  const wire = await connect(host, Number(port), { clientId: 'kip848-describe' }).catch(() => undefined);
  if (!wire) return undefined;
  try {
    return (await wire.send('ConsumerGroupDescribe', 1, { groupIds: [group], includeAuthorizedOperations: false })).groups[0];
  } catch {
    return undefined;
  } finally {
    await wire.close().catch(() => undefined);
  }
}

/** The node id of `group`'s coordinator, as the broker at `hostPort` answers FindCoordinator v6. */
export async function findCoordinator(hostPort: string, group: string): Promise<{ nodeId: number; errorCode: number }> {
  const [host, port] = hostPort.split(':');
  const wire = await connect(host, Number(port), { clientId: 'kip848-find-coordinator' });
  try {
    const c = (await wire.send('FindCoordinator', 6, { keyType: 0, coordinatorKeys: [group] })).coordinators[0];
    return { nodeId: c.nodeId, errorCode: c.errorCode };
  } finally {
    await wire.close().catch(() => undefined);
  }
}

const sorted = (s: Iterable<number>) => [...s].sort((a, b) => a - b);

/**
 * A stable group as both sides see it: the coordinator says Stable with exactly `members`, each at
 * the group epoch, and each member's assignment there equals what its callbacks own; the owned
 * sets are disjoint, cover partitions 0..partitions-1 and differ in size by at most one. Returns
 * the description, or undefined (with the reason in `why`) while it is not so.
 */
export async function stableGroup(describe: () => Promise<any | undefined>, members: Member[], partitions: number, why: string[] = []): Promise<any | undefined> {
  why.length = 0;
  const d = await describe();
  if (!d || d.errorCode !== 0) return void why.push(`describe: ${d ? `error ${d.errorCode}` : 'failed'}`);
  if (d.groupState !== 'Stable') return void why.push(`state ${d.groupState}`);
  if (d.members.length !== members.length) return void why.push(`${d.members.length} members described`);
  for (const m of members) {
    const dm = d.members.find((x: any) => x.clientId === m.clientId);
    if (!dm) return void why.push(`${m.clientId} not described`);
    if (dm.memberEpoch !== d.groupEpoch) return void why.push(`${m.clientId} at epoch ${dm.memberEpoch}, group ${d.groupEpoch}`);
    const described = sorted(dm.assignment.topicPartitions.flatMap((t: any) => t.partitions));
    if (JSON.stringify(described) !== JSON.stringify(sorted(m.owned))) return void why.push(`${m.clientId} owns ${sorted(m.owned)}, described ${described}`);
  }
  const all = members.flatMap((m) => [...m.owned]);
  if (new Set(all).size !== all.length) return void why.push('overlapping assignments');
  if (JSON.stringify(sorted(all)) !== JSON.stringify(Array.from({ length: partitions }, (_, i) => i))) return void why.push(`owned ${sorted(all)}`);
  const sizes = members.map((m) => m.owned.size);
  if (Math.max(...sizes) - Math.min(...sizes) > 1) return void why.push(`unbalanced ${sizes}`);
  return d;
}

/** Waits for stableGroup, with the last reason in the timeout message. */
export async function waitStable(describe: () => Promise<any | undefined>, members: Member[], partitions: number, timeoutMs = 30_000): Promise<any> {
  const why: string[] = [];
  try {
    return await until('a stable group', () => stableGroup(describe, members, partitions, why), timeoutMs);
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${why.join('; ')}`);
  }
}

/**
 * Writes one message to each of `partitions` partitions of `topic` every `everyMs` (acks=-1) until
 * stopped, and `acked` holds the value of every acknowledged message. A message counts as
 * acknowledged only when the produce response names its partition without an error: KafkaJS 2.2.4
 * resolves a send whose retry skipped a partition (sendMessages keeps the responses per broker, so
 * a partition that moved during a failover to a broker that had already answered for others is
 * never sent again, and the send still succeeds). A partition without an acknowledgement is sent
 * again, as a new attempt with its own value.
 */
export class StreamProducer {
  readonly acked = new Set<string>();
  /** When each acknowledged value was acknowledged (Date.now()). */
  readonly ackedAt = new Map<string, number>();
  errors = 0;
  /** Sends that resolved without mentioning every partition sent to. */
  partialSends = 0;
  private running = true;
  private paused: Promise<void> | undefined;
  private resume: (() => void) | undefined;
  private readonly loop: Promise<void>;

  constructor(
    private readonly producer: {
      send(r: { topic: string; acks: number; timeout?: number; messages: { partition: number; value: string }[] }): Promise<{ partition: number; errorCode: number }[]>;
    },
    private readonly topic: string,
    private readonly partitions: number,
    private readonly everyMs = 50,
  ) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    let seq = 0;
    while (this.running) {
      if (this.paused) await this.paused;
      const batch = seq++;
      let pending = Array.from({ length: this.partitions }, (_, p) => p);
      for (let attempt = 1; pending.length > 0 && (this.running || attempt === 1); attempt++) {
        const values = new Map(pending.map((p) => [p, `${batch}/${p}#${attempt}`]));
        try {
          const res = await this.producer.send({ topic: this.topic, acks: -1, timeout: 5000, messages: [...values].map(([partition, value]) => ({ partition, value })) });
          const now = Date.now();
          const ok = new Set(res.filter((r) => r.errorCode === 0).map((r) => r.partition));
          for (const [p, v] of values) {
            if (!ok.has(p)) continue;
            this.acked.add(v);
            this.ackedAt.set(v, now);
          }
          if (ok.size < values.size) this.partialSends++;
          pending = pending.filter((p) => !ok.has(p));
        } catch {
          this.errors++;
        }
        if (pending.length > 0) {
          if (attempt > 300) throw new Error(`could not produce batch ${batch} after ${attempt} attempts`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      await new Promise((r) => setTimeout(r, this.everyMs));
    }
  }

  /** Waits until `n` more messages were acknowledged. */
  async progress(n: number, timeoutMs = 30_000): Promise<void> {
    const target = this.acked.size + n;
    await until(`${n} more acknowledged messages`, () => this.acked.size >= target, timeoutMs);
  }

  pause(): void {
    if (!this.paused) this.paused = new Promise((r) => (this.resume = r));
  }

  unpause(): void {
    const r = this.resume;
    this.paused = undefined;
    this.resume = undefined;
    r?.();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.unpause();
    await this.loop;
  }
}

/** Offsets of `partition` each member read, as ranges ("name: 0-11 13-20"), for failure messages. */
export function readRanges(members: Member[], partition: number): string {
  return members
    .map((m) => {
      const os = [...m.seen.keys()].filter((k) => k.startsWith(`${partition}/`)).map((k) => Number(k.split('/')[1])).sort((a, b) => a - b);
      const ranges: string[] = [];
      for (let i = 0; i < os.length; i++) {
        let j = i;
        while (j + 1 < os.length && os[j + 1] <= os[j] + 1) j++;
        ranges.push(os[i] === os[j] ? `${os[i]}` : `${os[i]}-${os[j]}`);
        i = j;
      }
      return `${m.clientId}: ${ranges.join(' ')}`;
    })
    .join('; ');
}

/** The acknowledged values that no member has read. */
export function unread(p: StreamProducer, members: Member[]): string[] {
  return [...p.acked].filter((v) => !members.some((m) => m.values.has(v)));
}
