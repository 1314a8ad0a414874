// @platformatic/kafka (ESM only) as a KIP-848 consumer (groupProtocol: 'consumer'); run in a child
// process by consumer-protocol.test.ts:  node consumer-protocol.mjs HOST:PORT TOPIC GROUP COUNT OUT.json
// Joins GROUP with ConsumerGroupHeartbeat, consumes from the earliest offsets until COUNT messages
// arrived, commits them, and writes each message's partition, offset and value to OUT.json; prints `ok COUNT`.
import { writeFileSync } from 'node:fs';
import { Consumer } from '@platformatic/kafka';

const [bootstrap, topic, groupId, countArg, outFile] = process.argv.slice(2);
const count = Number(countArg);
const consumer = new Consumer({
  clientId: 'krill-compat-platformatic-kip848',
  groupId,
  groupProtocol: 'consumer',
  bootstrapBrokers: [bootstrap],
  timeout: 10_000,
  retries: 5,
  retryDelay: 200,
});
const read = [];
try {
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
  for await (const message of stream) {
    read.push({ partition: message.partition, offset: String(message.offset), value: message.value === null || message.value === undefined ? null : Buffer.from(message.value).toString() });
    await message.commit();
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
