'use strict';
// One node-rdkafka consumer (librdkafka 2.12, group.protocol=consumer, auto-commit every 100 ms of
// the offsets of the messages reported)
// in a child process, for tests that SIGKILL a member (compat-tests/helpers/kip848.ts starts it):
//   node -r exit-with-parent.js kip848-consumer.js '<JSON {bootstrap, group, topics, clientId, instanceId?, config?}>'
// Reports on stdout, one JSON object a line: {ev:'ready'}, {ev:'assign'|'revoke', parts:[[topic,
// partition]...]} (an assignment is reported once librdkafka has it, a revocation before it is
// handed back), {ev:'msg', t, p, o, v} for each message, {ev:'error', code, fatal, msg}. SIGTERM
// closes the consumer (a leave heartbeat: epoch -1, or -2 with an instance id); once librdkafka logs
// "Consumer closed" (the leave was answered) the script reports {ev:'closed'} and ends itself with
// SIGKILL: the rest of the client's teardown (rd_kafka_destroy, also run by process.exit) was seen to
// hang for good here under load with the flowing consume(), its broker handles never released,
// after the group had closed cleanly; the broker has nothing more to see by then. `debug: 'cgrp'` is set for that log line;
// opts.verbose copies librdkafka's log to stderr.
const RdKafka = require('node-rdkafka');

const opts = JSON.parse(process.argv[2]);
const out = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const consumer = new RdKafka.KafkaConsumer(
  {
    ...(opts.config || {}),
    debug: opts.config && opts.config.debug ? `cgrp,${opts.config.debug}` : 'cgrp',
    ...(opts.instanceId ? { 'group.instance.id': opts.instanceId } : {}),
    'group.id': opts.group,
    'group.protocol': 'consumer',
    'client.id': opts.clientId,
    'metadata.broker.list': opts.bootstrap,
    'fetch.wait.max.ms': 100,
    'enable.auto.commit': true,
    // Offsets are stored once a message has been reported (below), not when librdkafka hands it to
    // node-rdkafka's consume thread: a message still on its way to JS at a close or a kill is then
    // read again by the next owner instead of being committed unseen.
    'enable.auto.offset.store': false,
    'auto.commit.interval.ms': 100,
    'enable.partition.eof': false,
    'topic.metadata.refresh.interval.ms': 1000,
    rebalance_cb: (err, assignment) => {
      const parts = assignment.map((a) => [a.topic, a.partition]);
      if (err.code === RdKafka.CODES.ERRORS.ERR__ASSIGN_PARTITIONS) {
        consumer.incrementalAssign(assignment);
        out({ ev: 'assign', parts });
      } else if (err.code === RdKafka.CODES.ERRORS.ERR__REVOKE_PARTITIONS) {
        out({ ev: 'revoke', parts });
        consumer.incrementalUnassign(assignment);
      }
    },
  },
  { 'auto.offset.reset': 'earliest' },
);
let closing = false;
consumer.on('event.log', (l) => {
  if (opts.verbose) process.stderr.write(`${Date.now()} ${l.fac} ${l.message}\n`);
  // A fatal error (e.g. UNRELEASED_INSTANCE_ID) is logged, and handed to the consume loop's
  // callback as ERR__FATAL without its cause.
  if (l.fac === 'FATAL') out({ ev: 'error', code: RdKafka.CODES.ERRORS.ERR__FATAL, fatal: true, msg: String(l.message) });
  if (closing && l.fac === 'CLOSE' && /Consumer closed/.test(l.message)) {
    out({ ev: 'closed' });
    process.kill(process.pid, 'SIGKILL');
  }
});
consumer.on('event.error', (e) => out({ ev: 'error', code: e.code, fatal: Boolean(e.isFatal), msg: String(e.message) }));
consumer.on('data', (m) => {
  out({ ev: 'msg', t: m.topic, p: m.partition, o: m.offset, v: m.value ? m.value.toString() : null });
  try {
    consumer.offsetsStore([{ topic: m.topic, partition: m.partition, offset: m.offset + 1 }]);
  } catch {
    // no longer assigned: the next owner reads it again
  }
});
// Batches of up to 100 messages, each call waiting at most 100 ms, rather than the flowing
// consume(), whose thread keeps messages in flight outside any call.
let polled;
const poll = () =>
  new Promise((resolve) => {
    const next = () => {
      if (closing) return resolve();
      consumer.consume(100, (err) => {
        if (err && err.code !== RdKafka.CODES.ERRORS.ERR__TIMED_OUT && err.code !== RdKafka.CODES.ERRORS.ERR__FATAL) {
          out({ ev: 'error', code: err.code, fatal: Boolean(err.isFatal), msg: String(err.message) });
        }
        if (err) setTimeout(next, 100);
        else setImmediate(next);
      });
    };
    next();
  });
consumer.on('ready', () => {
  consumer.subscribe(opts.topics);
  consumer.setDefaultConsumeTimeout(100);
  polled = poll();
  out({ ev: 'ready' });
});
consumer.connect();

process.on('SIGTERM', async () => {
  if (closing) return;
  closing = true;
  await polled;
  consumer.disconnect(() => {
    out({ ev: 'closed' });
    process.kill(process.pid, 'SIGKILL');
  });
});
