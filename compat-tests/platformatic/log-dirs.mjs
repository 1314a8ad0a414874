// @platformatic/kafka (ESM only) describing log dirs on krill; run in a child process by
// log-dirs.test.ts:  node log-dirs.mjs HOST:PORT TOPIC OUT.json
// Writes the answers of describeLogDirs for TOPIC's partitions 0-2 and for its partition 0 with a
// topic that does not exist to OUT.json (bigints as strings), then prints "ok". (The client always
// sends a topic list: the all-partitions form is tested with krill's own client.)
import { writeFileSync } from 'node:fs';
import { Admin } from '@platformatic/kafka';

const [bootstrap, topic, outFile] = process.argv.slice(2);
const admin = new Admin({ clientId: 'krill-compat-logdirs', bootstrapBrokers: [bootstrap], timeout: 10_000, retries: 1, retryDelay: 100 });
try {
  const three = await admin.describeLogDirs({ topics: [{ name: topic, partitions: [0, 1, 2] }] });
  const one = await admin.describeLogDirs({ topics: [{ name: topic, partitions: [0] }, { name: 'no-such-topic', partitions: [0] }] });
  writeFileSync(outFile, JSON.stringify({ three, one }, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
  process.stdout.write('ok\n');
} finally {
  await admin.close();
}
