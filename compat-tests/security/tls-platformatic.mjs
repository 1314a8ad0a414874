// @platformatic/kafka (ESM only) over TLS with a client certificate, run in a child process by
// tls-platformatic.test.ts:  node tls-platformatic.mjs HOST:PORT CA.pem CERT.pem KEY.pem TOPIC COUNT
// Creates TOPIC with the Admin client, produces COUNT messages (acks -1), reads them back through a
// consumer group, all with its `tls` option (node:tls connect options), and prints
// `ok <produced> <consumed>` and the consumed values as JSON on the next line.
import { readFileSync } from 'node:fs';
import { Admin, Consumer, Producer, ProduceAcks } from '@platformatic/kafka';

const [bootstrap, caFile, certFile, keyFile, topic, countArg] = process.argv.slice(2);
const count = Number(countArg);
const tls = { ca: readFileSync(caFile), cert: readFileSync(certFile), key: readFileSync(keyFile) };
const base = { bootstrapBrokers: [bootstrap], tls, timeout: 10_000, retries: 2, retryDelay: 100 };

const admin = new Admin({ ...base, clientId: 'plat-tls-admin' });
const producer = new Producer({ ...base, clientId: 'plat-tls-producer', autocreateTopics: false });
const consumer = new Consumer({ ...base, clientId: 'plat-tls-consumer', groupId: `${topic}-group`, sessionTimeout: 10_000, heartbeatInterval: 500 });
try {
  await admin.createTopics({ topics: [topic], partitions: 2, replicas: 1 });
  const messages = Array.from({ length: count }, (_, i) => ({ topic, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) }));
  await producer.send({ messages, acks: ProduceAcks.ALL });
  const read = [];
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
  for await (const message of stream) {
    read.push(Buffer.from(message.value).toString());
    if (read.length >= count) break;
  }
  await stream.close();
  process.stdout.write(`ok ${messages.length} ${read.length}\n${JSON.stringify(read)}\n`);
} catch (err) {
  process.stderr.write(`${err && err.stack ? err.stack : err}\n`);
  process.exitCode = 1;
} finally {
  await consumer.close(true).catch(() => undefined);
  await producer.close().catch(() => undefined);
  await admin.close().catch(() => undefined);
}
