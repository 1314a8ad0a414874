/**
 * The workload of the failover suites: a KafkaJS producer writing continuously with acks=-1, each
 * record naming its message id and the attempt that wrote it (retries are ours, so every attempt
 * is visible), and the check that every acknowledged produce is in the log exactly once.
 */
import type { Producer } from 'kafkajs';
import { waitFor } from './helpers';

export class ContinuousProducer {
  /** id -> the attempt that was acknowledged. */
  readonly acked = new Map<string, number>();
  readonly attempted = new Set<string>();
  errors = 0;
  private running = true;
  private loop: Promise<void>;

  constructor(
    private readonly producer: Producer,
    private readonly topic: string,
  ) {
    this.loop = this.run();
  }

  private async run(): Promise<void> {
    let seq = 0;
    while (this.running) {
      const ids = Array.from({ length: 6 }, () => `m${seq++}`);
      for (let attempt = 1; ; attempt++) {
        try {
          await this.producer.send({ topic: this.topic, acks: -1, timeout: 5000, messages: ids.map((id) => ({ key: id, value: `${id}#${attempt}` })) });
          for (const id of ids) this.acked.set(id, attempt);
          break;
        } catch {
          this.errors++;
          for (const id of ids) this.attempted.add(`${id}#${attempt}`);
          if (attempt > 200) throw new Error(`could not produce ${ids[0]} after ${attempt} attempts`);
          await new Promise((r) => setTimeout(r, 100));
        }
      }
      for (const id of ids) this.attempted.add(`${id}#${this.acked.get(id)}`);
    }
  }

  /** Waits until `n` more produce requests were acknowledged. */
  async progress(n: number): Promise<void> {
    const target = this.acked.size + n * 6;
    await waitFor(`${n} more acknowledged sends`, () => this.acked.size >= target, 20_000);
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/**
 * `seen` counts every record value read back. Each attempt appears at most once (nothing is
 * duplicated by replication or failover), every acknowledged attempt appears, and nothing appears
 * that was never sent. A failed attempt may or may not be there (Kafka without idempotence).
 */
export function checkExactlyOnce(p: ContinuousProducer, seen: Map<string, number>): void {
  const dupes = [...seen].filter(([, n]) => n > 1);
  expect(dupes).toEqual([]);
  const missing = [...p.acked].map(([id, attempt]) => `${id}#${attempt}`).filter((v) => !seen.has(v));
  expect(missing).toEqual([]);
  expect([...seen.keys()].filter((v) => !p.attempted.has(v))).toEqual([]);
}
