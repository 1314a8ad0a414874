// @platformatic/kafka (ESM only) with its `sasl` option against a krill SASL_PLAINTEXT listener;
// run in a child process by sasl-platformatic.test.ts:
//   node sasl-platformatic.mjs HOST:PORT TOPIC MECHANISM USERNAME PASSWORD COUNT
// Creates TOPIC with the Admin client, produces COUNT messages (acks -1) and reads them back
// through a consumer group, all authenticated; prints one JSON line { created, produced, values }.
// A failed authentication prints { error: <message> } and exits 0, for the test to check it.
import { Admin, Consumer, Producer, ProduceAcks } from '@platformatic/kafka';

const [bootstrap, topic, mechanism, username, password, countArg] = process.argv.slice(2);
const count = Number(countArg);
const base = { bootstrapBrokers: [bootstrap], timeout: 10_000, retries: 0, retryDelay: 100, sasl: { mechanism, username, password } };
const report = { created: false, produced: 0, values: [] };
const admin = new Admin({ ...base, clientId: 'krill-sasl-platformatic-admin' });
const producer = new Producer({ ...base, clientId: 'krill-sasl-platformatic-producer', autocreateTopics: false });
const consumer = new Consumer({ ...base, retries: 3, clientId: 'krill-sasl-platformatic-consumer', groupId: `${topic}-group`, sessionTimeout: 10_000, heartbeatInterval: 500 });
try {
  await admin.createTopics({ topics: [topic], partitions: 1, replicas: 1 });
  report.created = true;
  const messages = Array.from({ length: count }, (_, i) => ({ topic, key: Buffer.from(`k${i}`), value: Buffer.from(`v${i}`) }));
  const res = await producer.send({ messages, acks: ProduceAcks.ALL });
  report.produced = res.offsets?.length ?? count;
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
  for await (const message of stream) {
    report.values.push(Buffer.from(message.value).toString());
    if (report.values.length >= count) break;
  }
  await stream.close();
  process.stdout.write(JSON.stringify(report) + '\n');
} catch (err) {
  // The root cause of a MultipleErrors / network error chain.
  let e = err;
  const messages = [];
  let response;
  for (let i = 0; e && i < 8; i++) {
    messages.push(e.message);
    response ??= e.response;
    e = e.errors?.[0] ?? e.cause;
  }
  // A ResponseError keeps the broker's response: its error code and message.
  process.stdout.write(JSON.stringify({ error: messages.join(' <- '), errorCode: response?.errorCode, errorMessage: response?.errorMessage }) + '\n');
} finally {
  await consumer.close(true).catch(() => undefined);
  await producer.close().catch(() => undefined);
  await admin.close().catch(() => undefined);
}
