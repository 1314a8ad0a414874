// @platformatic/kafka (ESM only) reading a tiered topic from its earliest offset; run in a child
// process by clients.test.ts:  node platformatic.mjs HOST:PORT TOPIC GROUP COUNT OUT.json
// Joins GROUP (classic protocol), consumes from the earliest offset until COUNT messages arrived
// (no commits), and writes each message's offset and value to OUT.json; prints `ok COUNT`.
import { writeFileSync } from 'node:fs';
import { Consumer } from '@platformatic/kafka';

const [bootstrap, topic, groupId, countArg, outFile] = process.argv.slice(2);
const count = Number(countArg);
const consumer = new Consumer({
  clientId: 'krill-compat-platformatic-tiered',
  groupId,
  bootstrapBrokers: [bootstrap],
  timeout: 10_000,
  retries: 3,
  retryDelay: 100,
  sessionTimeout: 10_000,
  heartbeatInterval: 500,
});
const read = [];
try {
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
  for await (const message of stream) {
    read.push({ offset: String(message.offset), value: message.value === null || message.value === undefined ? null : Buffer.from(message.value).toString() });
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
