// @platformatic/kafka (ESM only) reading a topic back through a consumer group on a krill broker;
// run in a child process by the platformatic, tiered-storage and consumer-protocol tests:
//   node consume.mjs HOST:PORT TOPIC GROUP COUNT OUT.json [classic|consumer] [last|each|none]
// Joins GROUP with the classic protocol (default; platformatic sends the newest flexible versions:
// FindCoordinator v6, JoinGroup v9, SyncGroup v5, OffsetCommit v9, OffsetFetch v9...) or the KIP-848
// consumer protocol (ConsumerGroupHeartbeat), consumes from the earliest offsets until COUNT
// messages arrived, commits the last message (default), every message, or none, and writes each
// message's partition, offset, key (hex) and value (text) to OUT.json; prints `ok COUNT`.
import { writeFileSync } from 'node:fs';
import { Consumer } from '@platformatic/kafka';

const [bootstrap, topic, groupId, countArg, outFile, protocol = 'classic', commit = 'last'] = process.argv.slice(2);
const count = Number(countArg);
const consumer = new Consumer({
  clientId: protocol === 'consumer' ? 'krill-compat-platformatic-kip848' : 'krill-compat-platformatic-consumer',
  groupId,
  bootstrapBrokers: [bootstrap],
  timeout: 10_000,
  ...(protocol === 'consumer' ? { groupProtocol: 'consumer', retries: 5, retryDelay: 200 } : { retries: 3, retryDelay: 100, sessionTimeout: 10_000, heartbeatInterval: 500 }),
});
const text = (b, encoding) => (b === null || b === undefined ? null : Buffer.from(b).toString(encoding));
const read = [];
try {
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
  for await (const message of stream) {
    read.push({ partition: message.partition, offset: String(message.offset), key: text(message.key, 'hex'), value: text(message.value, 'utf8') });
    if (commit === 'each' || (commit === 'last' && read.length >= count)) await message.commit();
    if (read.length >= count) break;
  }
  await stream.close();
  writeFileSync(outFile, JSON.stringify(read));
  process.stdout.write(`ok ${read.length}\n`);
} catch (err) {
  process.stderr.write(`platformatic consumer failed: ${err?.stack ?? err}\n`);
  if (err?.errors) for (const e of err.errors) process.stderr.write(`  cause: ${e?.stack ?? e}\n`);
  process.exitCode = 1;
} finally {
  await consumer.close(true).catch(() => undefined);
}
