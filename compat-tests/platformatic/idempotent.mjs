// @platformatic/kafka (ESM only) with an idempotent producer against krill; run in a child process
// by platformatic.test.ts:  node idempotent.mjs HOST:PORT TOPIC COUNT
// The producer sends InitProducerId (v5, no transactional id) and then batches carrying its
// producer id, epoch and sequences; it prints the producer id and the offsets it was given.
import { Producer, ProduceAcks } from '@platformatic/kafka';

const [bootstrap, topic, countArg] = process.argv.slice(2);
const count = Number(countArg);
const producer = new Producer({
  clientId: 'krill-compat-platformatic-idempotent',
  bootstrapBrokers: [bootstrap],
  idempotent: true,
  timeout: 10_000,
  retries: 3,
  retryDelay: 100,
});
try {
  const offsets = [];
  for (let off = 0; off < count; off += 50) {
    const messages = [];
    for (let i = off; i < Math.min(count, off + 50); i++) messages.push({ topic, partition: 0, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) });
    const res = await producer.send({ messages, acks: ProduceAcks.ALL });
    for (const o of res.offsets ?? []) offsets.push(String(o.offset));
  }
  process.stdout.write(JSON.stringify({ producerId: String(producer.producerId ?? ''), offsets }) + '\n');
} catch (err) {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exitCode = 1;
} finally {
  await producer.close().catch(() => undefined);
}
