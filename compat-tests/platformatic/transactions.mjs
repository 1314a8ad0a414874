// @platformatic/kafka (ESM only) transactions against krill; run in a child process by
// transactions.test.ts. platformatic sends the newest versions: InitProducerId v5, AddPartitionsToTxn
// v5 (the batched form, verify_only false), Produce v11 with the transactional id, AddOffsetsToTxn v4,
// TxnOffsetCommit v4 (to the group coordinator), EndTxn v4; its Consumer fetches with Fetch v17 and
// isolation level READ_COMMITTED by default, dropping aborted batches itself.
//
//   node transactions.mjs produce BOOTSTRAP TOPIC PLAN OUT.json
//       PLAN: comma-separated TXNID:commit|abort; each transaction sends 3 messages to each of
//       partitions 0 and 1 ("t<i>-<outcome>-p<p>-<j>") in one send, then commits or aborts. One
//       Producer per distinct TXNID (in this process).
//   node transactions.mjs consume BOOTSTRAP TOPIC GROUP ISOLATION(0|1) STOP_VALUES OUT.json
//       A group Consumer from the earliest offset until every value of STOP_VALUES (comma-separated)
//       was read; writes what it read.
//   node transactions.mjs ctp BOOTSTRAP IN_TOPIC OUT_TOPIC GROUP TXNID PER_PARTITION OUTCOME OUT.json
//       Consume-transform-produce: a group Consumer (committed offsets, else earliest) takes the
//       next PER_PARTITION messages of partitions 0 and 1; one transaction sends "out:<value>" to
//       the same partition, adds the consumer (AddOffsetsToTxn) and the offset after each
//       partition's last message (TxnOffsetCommit), prints "pending" and waits for a line on
//       stdin, then commits or aborts (OUTCOME).
//   node transactions.mjs init BOOTSTRAP TXNID [fresh]
//       Begins a transaction (FindCoordinator + InitProducerId) and prints the producer id and
//       epoch, or the broker's error. platformatic's InitProducerId carries producerId 0 / epoch 0
//       unless told otherwise; "fresh" passes producerId -1n / producerEpoch -1 (what the Java
//       client and librdkafka send on start).
import { writeFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { Consumer, Producer } from '@platformatic/kafka';

const [command, bootstrap, ...args] = process.argv.slice(2);
const DEADLINE_MS = 20_000;
const common = { bootstrapBrokers: [bootstrap], timeout: 10_000, retries: 20, retryDelay: 50 };
const closers = [];

function producerFor(transactionalId, extra = {}) {
  const p = new Producer({ ...common, clientId: `plat-txn-${transactionalId}`, idempotent: true, transactionalId, autocreateTopics: false, ...extra });
  closers.push(() => p.close());
  return p;
}

function consumerFor(groupId, isolationLevel) {
  const c = new Consumer({ ...common, clientId: `plat-txn-consumer-${groupId}`, groupId, isolationLevel, sessionTimeout: 10_000, heartbeatInterval: 500, maxWaitTime: 100 });
  closers.push(() => c.close(true));
  return c;
}

/** The protocol errors inside a platformatic error, as "NAME(code)". */
function protocolErrors(err) {
  const out = [];
  const walk = (e) => {
    if (!e || typeof e !== 'object') return;
    if (e.apiId) out.push(`${e.apiId}(${e.apiCode})`);
    for (const x of e.errors ?? []) walk(x);
    if (e.cause) walk(e.cause);
  };
  walk(err);
  return [...new Set(out)];
}

async function produce(topic, plan, outFile) {
  const producers = new Map();
  const report = [];
  for (const [t, step] of plan.split(',').entries()) {
    const [txnId, outcome] = step.split(':');
    if (!producers.has(txnId)) producers.set(txnId, producerFor(txnId));
    const producer = producers.get(txnId);
    const txn = await producer.beginTransaction();
    const messages = [];
    for (let j = 0; j < 3; j++) for (const p of [0, 1]) messages.push({ topic, partition: p, key: Buffer.from(`k${j}`), value: Buffer.from(`t${t}-${outcome}-p${p}-${j}`) });
    const res = await txn.send({ messages });
    if (outcome === 'commit') await txn.commit();
    else await txn.abort();
    report.push({
      transactionalId: txnId,
      outcome,
      producerId: String(producer.producerId),
      producerEpoch: producer.producerEpoch,
      offsets: (res.offsets ?? []).map((o) => ({ partition: o.partition, offset: String(o.offset) })),
      completed: txn.completed,
      producerFree: producer.transaction === undefined,
    });
  }
  writeFileSync(outFile, JSON.stringify(report));
}

async function consume(topic, groupId, isolation, stopValues, outFile) {
  const consumer = consumerFor(groupId, Number(isolation));
  const want = new Set(stopValues.split(','));
  const read = [];
  const stream = await consumer.consume({ topics: [topic], mode: 'earliest', autocommit: false });
  const timer = setTimeout(() => stream.destroy(new Error(`still missing ${[...want].join(',')} after ${DEADLINE_MS} ms; read ${JSON.stringify(read)}`)), DEADLINE_MS);
  try {
    for await (const m of stream) {
      const value = m.value ? Buffer.from(m.value).toString() : null;
      read.push({ partition: m.partition, offset: String(m.offset), value });
      want.delete(value);
      if (want.size === 0) break;
    }
  } finally {
    clearTimeout(timer);
    await stream.close().catch(() => undefined);
  }
  writeFileSync(outFile, JSON.stringify(read));
}

async function ctp(inTopic, outTopic, groupId, txnId, perPartitionArg, outcome, outFile) {
  const perPartition = Number(perPartitionArg);
  const consumer = consumerFor(groupId, 1);
  const producer = producerFor(txnId);
  const taken = new Map([
    [0, []],
    [1, []],
  ]);
  const stream = await consumer.consume({ topics: [inTopic], mode: 'committed', fallbackMode: 'earliest', autocommit: false });
  const timer = setTimeout(() => stream.destroy(new Error(`did not get ${perPartition} messages per partition within ${DEADLINE_MS} ms`)), DEADLINE_MS);
  try {
    for await (const m of stream) {
      const list = taken.get(m.partition);
      if (list.length < perPartition) list.push(m);
      if ([...taken.values()].every((l) => l.length >= perPartition)) break;
    }
  } finally {
    clearTimeout(timer);
  }
  const txn = await producer.beginTransaction();
  const messages = [];
  for (const [p, list] of taken) for (const m of list) messages.push({ topic: outTopic, partition: p, value: Buffer.from(`out:${Buffer.from(m.value).toString()}`) });
  await txn.send({ messages });
  await txn.addConsumer(consumer);
  for (const list of taken.values()) await txn.addOffset(list[list.length - 1]);
  process.stdout.write('pending\n');
  const rl = createInterface({ input: process.stdin });
  await new Promise((resolve) => rl.once('line', resolve));
  rl.close();
  if (outcome === 'commit') await txn.commit();
  else await txn.abort();
  await stream.close().catch(() => undefined);
  const report = {
    generationId: consumer.generationId,
    memberId: consumer.memberId,
    taken: Object.fromEntries([...taken].map(([p, list]) => [p, list.map((m) => String(m.offset))])),
  };
  writeFileSync(outFile, JSON.stringify(report));
}

async function init(txnId, fresh) {
  const producer = producerFor(txnId, fresh === 'fresh' ? { producerId: -1n, producerEpoch: -1 } : {});
  try {
    await producer.beginTransaction();
    process.stdout.write(JSON.stringify({ ok: true, producerId: String(producer.producerId), producerEpoch: producer.producerEpoch }) + '\n');
  } catch (err) {
    process.stdout.write(JSON.stringify({ ok: false, errors: protocolErrors(err), message: String(err && err.message) }) + '\n');
  }
}

try {
  if (command === 'produce') await produce(args[0], args[1], args[2]);
  else if (command === 'consume') await consume(args[0], args[1], args[2], args[3], args[4]);
  else if (command === 'ctp') await ctp(args[0], args[1], args[2], args[3], args[4], args[5], args[6]);
  else if (command === 'init') await init(args[0], args[1]);
  else throw new Error(`unknown command ${command}`);
  process.stdout.write('ok\n');
} catch (err) {
  process.stderr.write(`${err && err.stack ? err.stack : err}\nprotocol errors: ${protocolErrors(err).join(', ')}\n`);
  process.exitCode = 1;
} finally {
  for (const close of closers.reverse()) await close().catch(() => undefined);
}
