// @platformatic/kafka (ESM only) reading a topic back through a consumer group on a krill broker;
// run in a child process by platformatic.test.ts:  node consume.mjs HOST:PORT TOPIC GROUP COUNT OUT.json
// Joins GROUP with the classic protocol (platformatic sends the newest flexible versions:
// FindCoordinator v6, JoinGroup v9, SyncGroup v5, OffsetCommit v9, OffsetFetch v9...), consumes from
// the earliest offset until COUNT messages arrived, commits, then writes what it read to OUT.json.
import { writeFileSync } from 'node:fs';
import { Consumer } from '@platformatic/kafka';

const [bootstrap, topic, groupId, countArg, outFile] = process.argv.slice(2);
const count = Number(countArg);
const consumer = new Consumer({
  clientId: 'krill-compat-platformatic-consumer',
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
    read.push({
      partition: message.partition,
      offset: String(message.offset),
      key: message.key === null || message.key === undefined ? null : Buffer.from(message.key).toString('hex'),
    });
    if (read.length >= count) {
      await message.commit();
      break;
    }
  }
  await stream.close();
  writeFileSync(outFile, JSON.stringify(read));
  process.stdout.write(`ok ${read.length}\n`);
} catch (err) {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exitCode = 1;
} finally {
  await consumer.close(true).catch(() => undefined);
}
