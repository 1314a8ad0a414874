// @platformatic/kafka (ESM only) on a compacted krill topic; run in a child process by
// platformatic.test.ts:
//   node platformatic.mjs produce HOST:PORT TOPIC OUT.json   keyed updates and tombstones (acks -1,
//       sends of 20 messages to partition 0); OUT.json gets every message with its offset
//   node platformatic.mjs consume HOST:PORT TOPIC GROUP COUNT OUT.json   reads COUNT records from
//       the earliest offset through a consumer group; OUT.json gets key, value and offset of each
import { writeFileSync } from 'node:fs';
import { Consumer, Producer, ProduceAcks } from '@platformatic/kafka';

const [mode, bootstrap, topic, ...rest] = process.argv.slice(2);
const base = { clientId: 'krill-compat-platformatic-compaction', bootstrapBrokers: [bootstrap], timeout: 10_000, retries: 3, retryDelay: 100 };
const KEYS = 50;
const ROUNDS = 6;
const PER_SEND = 20;

async function produce(outFile) {
  const producer = new Producer({ ...base, autocreateTopics: false });
  const written = [];
  try {
    const all = [];
    for (let r = 0; r < ROUNDS; r++) {
      for (let k = 0; k < KEYS; k++) {
        const tombstone = r === ROUNDS - 1 && k % 6 === 1;
        all.push({ key: `pl-k${k}`, value: tombstone ? null : `pl:${r}:${k}`.padEnd(30 + ((k * 7) % 50), '-') });
      }
    }
    for (let i = 0; i < all.length; i += PER_SEND) {
      const chunk = all.slice(i, i + PER_SEND);
      const res = await producer.send({
        acks: ProduceAcks.ALL,
        messages: chunk.map((m) => ({ topic, partition: 0, key: Buffer.from(m.key), value: m.value === null ? null : Buffer.from(m.value) })),
      });
      const baseOffset = BigInt(res.offsets.find((o) => o.partition === 0).offset);
      chunk.forEach((m, j) => written.push({ key: m.key, value: m.value, offset: String(baseOffset + BigInt(j)) }));
    }
    writeFileSync(outFile, JSON.stringify(written));
    process.stdout.write(`ok ${written.length}\n`);
  } finally {
    await producer.close().catch(() => undefined);
  }
}

async function consume(groupId, count, outFile) {
  const consumer = new Consumer({ ...base, groupId, sessionTimeout: 10_000, heartbeatInterval: 500 });
  const read = [];
  try {
    const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
    for await (const message of stream) {
      const value = message.value === null || message.value === undefined ? null : Buffer.from(message.value).toString();
      read.push({ key: Buffer.from(message.key).toString(), value, offset: String(message.offset) });
      if (read.length >= count) break;
    }
    await stream.close();
    writeFileSync(outFile, JSON.stringify(read));
    process.stdout.write(`ok ${read.length}\n`);
  } finally {
    await consumer.close(true).catch(() => undefined);
  }
}

try {
  if (mode === 'produce') await produce(rest[0]);
  else if (mode === 'consume') await consume(rest[0], Number(rest[1]), rest[2]);
  else throw new Error(`unknown mode ${mode}`);
} catch (err) {
  process.stderr.write(`platformatic client failed: ${err?.stack ?? err}\n`);
  if (err?.errors) for (const e of err.errors) process.stderr.write(`  cause: ${e?.stack ?? e}\n`);
  process.exitCode = 1;
}
