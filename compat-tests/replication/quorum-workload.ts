/**
 * The load of the quorum chaos tests: workers sending CreateTopics, DeleteTopics and
 * IncrementalAlterConfigs (SET retention.ms) to the active controller over the controller
 * listener, as brokers forward them, and recording every outcome for the checker
 * (quorum-checker.ts): when it was sent, when it was answered, and whether it was acknowledged
 * (error code 0) or not (an error, a timeout, a lost connection: it may or may not have happened).
 *
 * Invariants that make the checker's "exactly once" meaningful: every topic name and every config
 * value is used by one request only (never retried under the same name); only acknowledged,
 * not-yet-deleted topics are altered or deleted; a topic whose deletion was not acknowledged is
 * never touched again. The active controller is whichever voter DescribeQuorum names (highest
 * epoch); NOT_CONTROLLER or a failure makes a worker look again. Choices come from a seeded PRNG.
 * With `brokers`, the requests go to a random live broker instead, which forwards them to the
 * active controller as a client's would be (and answers once its own metadata has the change); a
 * failure makes the worker pick another broker.
 */
import { ErrorCode } from '../../protocol/errors';
import { ZERO_UUID } from '../../protocol/primitives/uuid';
import type { OpOutcome, QuorumOp } from './quorum-checker';
import type { BrokerProcesses, QuorumProcesses } from './quorum-processes';

/** mulberry32 (the recovery tests' PRNG): a schedule replays from its seed. */
export { prng as seededRandom } from '../recovery/helpers';

export interface WorkloadOptions {
  prefix: string;
  random: () => number;
  workers?: number;
  /** Each request's timeout (the client gives up, the outcome is "not acknowledged"). */
  requestTimeoutMs?: number;
  /** Pause between one worker's requests (the machine is shared). */
  pauseMs?: number;
  /** Send through these brokers (random live one) instead of straight to the active controller. */
  brokers?: BrokerProcesses;
  /** Partitions' replication factor of the created topics (default 1). */
  replicationFactor?: number;
}

export class QuorumWorkload {
  readonly outcomes: OpOutcome[] = [];
  /** Error codes (or 'exception') of the outcomes not acknowledged, with counts. */
  readonly failures = new Map<string, number>();
  private readonly alive: string[] = [];
  private seq = 0;
  private target: number | null = null;
  private running = false;
  private workers: Promise<void>[] = [];
  private ackListeners = new Set<(o: OpOutcome) => void>();

  constructor(
    private readonly q: QuorumProcesses,
    private readonly opts: WorkloadOptions,
  ) {}

  get acked(): number {
    return this.outcomes.filter((o) => o.acked).length;
  }

  start(): void {
    this.running = true;
    for (let i = 0; i < (this.opts.workers ?? 2); i++) this.workers.push(this.loop());
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
    this.workers = [];
  }

  /** Resolves with the first operation acknowledged that was sent at or after `t` (performance.now()). */
  firstAckSentAfter(t: number, timeoutMs: number): Promise<OpOutcome> {
    const done = this.outcomes.find((o) => o.acked && o.sentAt >= t);
    if (done) return Promise.resolve(done);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.ackListeners.delete(l);
        reject(new Error(`no operation sent after t=${t.toFixed(0)} acknowledged within ${timeoutMs} ms (failures: ${JSON.stringify([...this.failures])})`));
      }, timeoutMs);
      const l = (o: OpOutcome) => {
        if (o.sentAt < t) return;
        clearTimeout(timer);
        this.ackListeners.delete(l);
        resolve(o);
      };
      this.ackListeners.add(l);
    });
  }

  /** Resolves once `n` operations in all were acknowledged. */
  async waitForAcks(n: number, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.acked < n) {
      if (Date.now() > deadline) throw new Error(`only ${this.acked} of ${n} operations acknowledged within ${timeoutMs} ms (failures: ${JSON.stringify([...this.failures])})`);
      await new Promise<void>((resolve) => {
        const t = setTimeout(() => {
          this.ackListeners.delete(l);
          resolve();
        }, 100);
        const l = () => {
          clearTimeout(t);
          this.ackListeners.delete(l);
          resolve();
        };
        this.ackListeners.add(l);
      });
    }
  }

  private pick(): QuorumOp {
    const r = this.opts.random();
    const seq = ++this.seq;
    if (this.alive.length > 0 && r < 0.3) {
      const topic = this.alive[Math.floor(this.opts.random() * this.alive.length)];
      return { kind: 'alter', topic, key: 'retention.ms', value: String(3_600_000 + seq) };
    }
    if (this.alive.length > 4 && r < 0.5) {
      const i = Math.floor(this.opts.random() * this.alive.length);
      const [topic] = this.alive.splice(i, 1); // never touched again, whatever the answer
      return { kind: 'delete', topic };
    }
    return { kind: 'create', topic: `${this.opts.prefix}${seq}` };
  }

  private async findTarget(): Promise<number | null> {
    const b = this.opts.brokers;
    if (b) {
      const live = b.live();
      if (this.target === null || !live.includes(this.target)) this.target = live.length ? live[Math.floor(this.opts.random() * live.length)] : null;
      return this.target;
    }
    if (this.target !== null && this.q.live().includes(this.target)) return this.target;
    const l = await this.q.leader();
    this.target = l ? l.id : null;
    return this.target;
  }

  private async loop(): Promise<void> {
    while (this.running) {
      const target = await this.findTarget();
      if (target === null) {
        await new Promise((r) => setTimeout(r, 50));
        continue;
      }
      const op = this.pick();
      const sentAt = performance.now();
      let code: string;
      try {
        code = String(await this.send(target, op));
      } catch {
        code = 'exception';
      }
      const o: OpOutcome = { op, sentAt, doneAt: performance.now(), acked: code === String(ErrorCode.NONE) };
      this.outcomes.push(o);
      if (o.acked) {
        if (op.kind === 'create') this.alive.push(op.topic);
        for (const l of [...this.ackListeners]) l(o);
      } else {
        this.failures.set(code, (this.failures.get(code) ?? 0) + 1);
        if (this.target === target) this.target = null;
        await new Promise((r) => setTimeout(r, 50));
      }
      if (this.opts.pauseMs) await new Promise((r) => setTimeout(r, this.opts.pauseMs));
    }
  }

  private async send(target: number, op: QuorumOp): Promise<number> {
    const timeoutMs = this.opts.requestTimeoutMs ?? 3_000;
    const to = this.opts.brokers ?? this.q;
    // The client's timeout outlasts the one in the request, so the answer to it (REQUEST_TIMED_OUT) is seen.
    const clientTimeoutMs = this.opts.brokers ? timeoutMs + 2_000 : timeoutMs;
    if (op.kind === 'create') {
      const r = await to.send(
        target,
        'CreateTopics',
        { topics: [{ name: op.topic, numPartitions: 1, replicationFactor: this.opts.replicationFactor ?? 1, assignments: [], configs: [] }], timeoutMs, validateOnly: false },
        { timeoutMs: clientTimeoutMs },
      );
      return r.topics[0].errorCode;
    }
    if (op.kind === 'delete') {
      const r = await to.send(target, 'DeleteTopics', { topics: [{ name: op.topic, topicId: ZERO_UUID }], topicNames: [], timeoutMs }, { version: 6, timeoutMs: clientTimeoutMs });
      return r.responses[0].errorCode;
    }
    const r = await to.send(
      target,
      'IncrementalAlterConfigs',
      { resources: [{ resourceType: 2, resourceName: op.topic, configs: [{ name: op.key, configOperation: 0, value: op.value }] }], validateOnly: false },
      { timeoutMs: clientTimeoutMs },
    );
    return r.responses[0].errorCode;
  }
}
