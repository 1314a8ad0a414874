// @platformatic/kafka (ESM only) producing to a krill broker; run in a child process by
// platformatic.test.ts:  node produce.mjs HOST:PORT TOPIC OUT.json
// Creates TOPIC (3 partitions) with the Admin client, lists it, produces keyed messages with
// headers and explicit timestamps in four phases (acks -1, 1, 0, and gzip with acks -1), then
// writes what it sent (hex) to OUT.json for the test to compare with what krill reads back.
import { writeFileSync } from 'node:fs';
import { Admin, Producer, ProduceAcks } from '@platformatic/kafka';

const [bootstrap, topic, outFile] = process.argv.slice(2);
const clientId = 'krill-compat-platformatic';
const base = { clientId, bootstrapBrokers: [bootstrap], timeout: 10_000, retries: 1, retryDelay: 100 };
const PER_PHASE = 500;
const PER_SEND = 100;
const BASE_TS = 1_700_000_000_000n;

const phases = [
  { name: 'acks-all', acks: ProduceAcks.ALL, compression: 'none' },
  { name: 'acks-1', acks: ProduceAcks.LEADER, compression: 'none' },
  { name: 'acks-0', acks: ProduceAcks.NO_RESPONSE, compression: 'none' },
  // Last, with acks -1 on the same connection: it is answered after every acks=0 request.
  { name: 'gzip', acks: ProduceAcks.ALL, compression: 'gzip' },
];

const admin = new Admin(base);
const producer = new Producer({ ...base, autocreateTopics: false });
const sent = [];
const report = { topic, created: false, listed: false, partitions: 0, results: [] };
try {
  await admin.createTopics({ topics: [topic], partitions: 3, replicas: 1 });
  report.created = true;
  report.listed = (await admin.listTopics()).includes(topic);
  const md = await admin.metadata({ topics: [topic] });
  report.partitions = md.topics.get(topic)?.partitionsCount ?? 0;

  for (const [p, phase] of phases.entries()) {
    for (let off = 0; off < PER_PHASE; off += PER_SEND) {
      const messages = [];
      for (let i = off; i < off + PER_SEND; i++) {
        const key = Buffer.from(`${phase.name}-key-${i}`);
        const value = i % 97 === 13 ? null : Buffer.from(`${phase.name}:${i}:${'v'.repeat(i % 61)}`);
        const headers = new Map([
          [Buffer.from('phase'), Buffer.from(phase.name)],
          [Buffer.from('bin'), Buffer.from([i & 0xff, (i >> 8) & 0xff, 0x00, 0xff])],
        ]);
        const timestamp = BASE_TS + BigInt(p * 1_000_000 + ((i * 7919) % 100_000));
        messages.push({ topic, key, value, headers, timestamp });
        sent.push({
          key: key.toString('hex'),
          value: value === null ? null : value.toString('hex'),
          headers: [...headers].map(([k, v]) => [k.toString('utf8'), v.toString('hex')]),
          timestamp: timestamp.toString(),
        });
      }
      const res = await producer.send({ messages, acks: phase.acks, compression: phase.compression });
      report.results.push({ phase: phase.name, offsets: (res.offsets ?? []).map((o) => ({ partition: o.partition, offset: String(o.offset) })) });
    }
  }
  writeFileSync(outFile, JSON.stringify({ report, sent }));
  process.stdout.write(`ok ${sent.length}\n`);
} catch (err) {
  process.stderr.write(`platformatic client failed: ${err?.stack ?? err}\n`);
  if (err?.errors) for (const e of err.errors) process.stderr.write(`  cause: ${e?.stack ?? e}\n`);
  process.exitCode = 1;
} finally {
  await producer.close().catch(() => undefined);
  await admin.close().catch(() => undefined);
}
