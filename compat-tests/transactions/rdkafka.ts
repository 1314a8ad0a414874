/**
 * Promise wrappers around node-rdkafka's callback API for the transaction suites: a transactional
 * Producer (each send resolves with its delivery report), a manually assigned reader that records
 * messages and partition-EOF positions, and a group consumer. Every call is bounded.
 */
import { within } from '../helpers/transactions';
// eslint-disable-next-line @typescript-eslint/no-var-requires
export const RdKafka = require('node-rdkafka');

export const CODES = RdKafka.CODES.ERRORS as Record<string, number>;

/** Bound of every librdkafka call (its own timeout argument is a little shorter). */
const CALL_MS = 15_000;

export interface RdError extends Error {
  code: number;
  isFatal?: boolean;
  isRetriable?: boolean;
  isTxnRequiresAbort?: boolean;
}

/** Runs a callback-style call, bounded. */
export function call<T = void>(what: string, fn: (cb: (err: RdError | null | undefined, v?: T) => void) => void, ms = CALL_MS): Promise<T> {
  return within(
    what,
    ms,
    new Promise<T>((resolve, reject) => {
      fn((err, v) => (err ? reject(err) : resolve(v as T)));
    }),
  );
}

export interface Delivered {
  topic: string;
  partition: number;
  offset: number;
}

export class TxnProducer {
  readonly producer: any;
  private nextId = 0;
  private readonly pending = new Map<number, { resolve: (d: Delivered) => void; reject: (e: Error) => void }>();

  constructor(
    readonly transactionalId: string,
    bootstrap: string,
    extra: Record<string, unknown> = {},
  ) {
    this.producer = new RdKafka.Producer({
      'metadata.broker.list': bootstrap,
      'client.id': `rdk-${transactionalId}`,
      'transactional.id': transactionalId,
      'transaction.timeout.ms': 30_000,
      dr_cb: true,
      'linger.ms': 5,
      'retry.backoff.ms': 50,
      ...extra,
    });
    this.producer.on('delivery-report', (err: RdError | null, report: { topic: string; partition: number; offset: number; opaque: number }) => {
      const p = this.pending.get(report.opaque);
      if (!p) return;
      this.pending.delete(report.opaque);
      if (err) p.reject(err);
      else p.resolve({ topic: report.topic, partition: report.partition, offset: report.offset });
    });
    // Errors also surface through the calls; keep an unhandled 'error' from crashing jest.
    this.producer.on('event.error', () => undefined);
  }

  async connect(): Promise<void> {
    await call('producer connect', (cb) => this.producer.connect({ timeout: 10_000 }, cb));
    this.producer.setPollInterval(5);
  }

  init(): Promise<void> {
    return call('initTransactions', (cb) => this.producer.initTransactions(12_000, cb));
  }

  begin(): Promise<void> {
    return call('beginTransaction', (cb) => this.producer.beginTransaction(cb));
  }

  commit(): Promise<void> {
    return call('commitTransaction', (cb) => this.producer.commitTransaction(12_000, cb));
  }

  abort(): Promise<void> {
    return call('abortTransaction', (cb) => this.producer.abortTransaction(12_000, cb));
  }

  sendOffsets(offsets: { topic: string; partition: number; offset: number }[], consumer: any): Promise<void> {
    return call('sendOffsetsToTransaction', (cb) => this.producer.sendOffsetsToTransaction(offsets, consumer, 12_000, cb));
  }

  /** Produces one message to an explicit partition; resolves with its delivery report. */
  send(topic: string, partition: number, value: string, key: string | null = null): Promise<Delivered> {
    const id = this.nextId++;
    const delivered = new Promise<Delivered>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      try {
        this.producer.produce(topic, partition, Buffer.from(value), key, null, id);
      } catch (err) {
        this.pending.delete(id);
        reject(err as Error);
      }
    });
    return within(`delivery of ${topic}-${partition} ${value}`, CALL_MS, delivered);
  }

  async close(): Promise<void> {
    if (!this.producer.isConnected()) return;
    await call('producer disconnect', (cb) => this.producer.disconnect(5_000, cb)).catch(() => undefined);
  }
}

export interface ReadMessage {
  partition: number;
  offset: number;
  value: string;
}

/** A librdkafka consumer polled in the background until close(): what it reads lands in `messages`, in arrival order. */
abstract class BackgroundConsumer {
  readonly messages: ReadMessage[] = [];
  private stopped = false;
  private inFlight: Promise<void> = Promise.resolve();
  /** The latest consume error other than a poll timeout. */
  protected error: Error | undefined;

  protected constructor(
    readonly consumer: any,
    private readonly name: string,
  ) {}

  protected loop(): void {
    if (this.stopped) return;
    this.inFlight = new Promise<void>((resolve) => {
      this.consumer.consume(200, (err: Error | null, messages: any[]) => {
        if (err && (err as RdError).code !== CODES.ERR__TIMED_OUT) this.error = err;
        for (const m of messages ?? []) this.messages.push({ partition: m.partition, offset: m.offset, value: m.value ? m.value.toString() : '' });
        resolve();
        setImmediate(() => this.loop());
      });
    });
  }

  async close(): Promise<void> {
    this.stopped = true;
    await this.inFlight;
    if (this.consumer.isConnected()) await call(`${this.name} disconnect`, (cb) => this.consumer.disconnect(cb)).catch(() => undefined);
  }
}

/**
 * A consumer with a manual assignment from offset 0 or `from[p]` (no group commits), consuming in the
 * background: `eof` the latest end-of-partition position reported per partition (with
 * read_committed librdkafka's end is the last stable offset).
 */
export class Reader extends BackgroundConsumer {
  readonly eof = new Map<number, number>();

  private constructor(consumer: any) {
    super(consumer, 'reader');
  }

  static async open(bootstrap: string, topic: string, partitions: number, isolation: 'read_committed' | 'read_uncommitted', from: number[] = []): Promise<Reader> {
    const consumer = new RdKafka.KafkaConsumer(
      {
        'metadata.broker.list': bootstrap,
        'group.id': `reader-${topic}-${isolation}-${Math.random().toString(36).slice(2)}`,
        'client.id': `reader-${isolation}`,
        'enable.auto.commit': false,
        'enable.partition.eof': true,
        'isolation.level': isolation,
        'fetch.wait.max.ms': 50,
      },
      { 'auto.offset.reset': 'earliest' },
    );
    const r = new Reader(consumer);
    consumer.on('partition.eof', (e: { partition: number; offset: number }) => r.eof.set(e.partition, e.offset));
    consumer.on('event.error', () => undefined);
    await call('reader connect', (cb) => consumer.connect({ timeout: 10_000 }, cb));
    consumer.setDefaultConsumeTimeout(50);
    consumer.assign(Array.from({ length: partitions }, (_, partition) => ({ topic, partition, offset: from[partition] ?? 0 })));
    r.loop();
    return r;
  }

  /** Waits until every partition reported EOF at (or past) its `ends[p]`. */
  async untilEof(ends: number[], timeoutMs = 15_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!ends.every((end, p) => (this.eof.get(p) ?? -1) >= end)) {
      if (this.error) throw this.error;
      if (Date.now() > deadline) throw new Error(`reader: no EOF at ${JSON.stringify(ends)} within ${timeoutMs} ms (EOF seen ${JSON.stringify([...this.eof])}, ${this.messages.length} messages)`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  /** Values read from partition `p`, in offset order of arrival. */
  valuesOf(p: number): string[] {
    return this.messages.filter((m) => m.partition === p).map((m) => m.value);
  }
}

/**
 * A group member (subscribe, classic protocol, no auto commit) that buffers what it consumes.
 * `assigned` follows the rebalance callbacks.
 */
export class GroupMember extends BackgroundConsumer {
  readonly assigned = new Set<number>();

  private constructor(consumer: any) {
    super(consumer, 'group member');
  }

  static async join(bootstrap: string, groupId: string, topic: string, clientId: string): Promise<GroupMember> {
    const consumer = new RdKafka.KafkaConsumer(
      {
        'metadata.broker.list': bootstrap,
        'group.id': groupId,
        'client.id': clientId,
        'enable.auto.commit': false,
        'enable.auto.offset.store': false,
        'enable.partition.eof': false,
        'isolation.level': 'read_committed',
        'session.timeout.ms': 10_000,
        'heartbeat.interval.ms': 500,
        'fetch.wait.max.ms': 50,
        rebalance_cb: true,
      },
      { 'auto.offset.reset': 'earliest' },
    );
    const m = new GroupMember(consumer);
    consumer.on('rebalance', (err: { code: number }, assignment: { partition: number }[]) => {
      if (err.code === CODES.ERR__ASSIGN_PARTITIONS) for (const a of assignment) m.assigned.add(a.partition);
      else for (const a of assignment) m.assigned.delete(a.partition);
    });
    consumer.on('event.error', () => undefined);
    await call('group member connect', (cb) => consumer.connect({ timeout: 10_000 }, cb));
    consumer.setDefaultConsumeTimeout(50);
    consumer.subscribe([topic]);
    m.loop();
    return m;
  }

  /** librdkafka's own view of the group's committed offsets (OffsetFetch, require_stable under read_committed). */
  committed(topic: string, partitions: number[]): Promise<{ partition: number; offset: number }[]> {
    return call('committed', (cb) =>
      this.consumer.committed(
        partitions.map((partition) => ({ topic, partition })),
        10_000,
        cb,
      ),
    );
  }
}
