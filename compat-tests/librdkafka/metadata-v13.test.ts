/**
 * Metadata v13 (KIP-1102) with librdkafka 2.12 (node-rdkafka), which asks for up to v13: the
 * fault-injection recorder shows every Metadata request of the client at v13 while it produces and
 * consumes normally (top-level error_code NONE); and a REBOOTSTRAP_REQUIRED top-level error injected
 * into one Metadata answer is seen by librdkafka (its debug log names top-level error 129), which
 * asks for metadata again and carries on delivering every message. Its re-bootstrap itself runs on
 * one of its own timers and is logged (REBOOTSTRAP) at a moment the test does not control, so the
 * test does not wait for that line (it once took longer than 30 s in a loaded full run).
 */
import { startBroker, type RunningBroker } from '../../broker';
import { rdkafkaConsume, rdkafkaProduce } from '../helpers/rdkafka';
// eslint-disable-next-line @typescript-eslint/no-var-requires
const RdKafka = require('node-rdkafka');

let broker: RunningBroker;

beforeAll(async () => {
  broker = await startBroker({ logLevel: 'warn', config: { 'num.partitions': 2 } });
});

afterAll(async () => {
  await broker?.close();
});

const brokerList = () => broker.bootstrapServers.join(',');

test('librdkafka gets metadata at v13, produces and consumes', async () => {
  const rec = broker.control.record({ api: 'Metadata', clientId: /^rdk-md13/ });
  try {
    const delivered = await rdkafkaProduce({ 'metadata.broker.list': brokerList(), 'client.id': 'rdk-md13-p', acks: -1, 'allow.auto.create.topics': true }, 'md13', 100, (i) => ({ partition: null, value: Buffer.from(`v-${i}`), key: `k-${i}` }));
    expect(delivered).toHaveLength(100);
    const got = await rdkafkaConsume({ 'metadata.broker.list': brokerList(), 'client.id': 'rdk-md13-c', 'group.id': 'rdk-md13-g', 'enable.partition.eof': false }, 'md13', 2, 100);
    expect(new Set(got.map((m) => m.value.toString()))).toEqual(new Set(Array.from({ length: 100 }, (_, i) => `v-${i}`)));
  } finally {
    rec.stop();
  }
  expect(rec.requests.length).toBeGreaterThan(0);
  expect(new Set(rec.requests.map((r) => r.apiVersion))).toEqual(new Set([13]));
  expect(new Set(rec.requests.map((r) => r.clientId))).toEqual(new Set(['rdk-md13-p', 'rdk-md13-c']));
});

test('REBOOTSTRAP_REQUIRED in a Metadata v13 answer: librdkafka sees it, asks again and delivers everything', async () => {
  const rule = broker.control.intercept({ api: 'Metadata', versions: 13, clientId: 'rdk-reboot' }, { error: 'REBOOTSTRAP_REQUIRED' }, { times: 1 });
  const rec = broker.control.record({ api: 'Metadata', clientId: 'rdk-reboot' });
  const logs: string[] = [];
  const count = 50;
  const delivered = await new Promise<number>((resolve, reject) => {
    const producer = new RdKafka.Producer({ 'metadata.broker.list': brokerList(), 'client.id': 'rdk-reboot', acks: -1, dr_cb: true, event_cb: true, debug: 'metadata', 'allow.auto.create.topics': true });
    let n = 0;
    let settled = false;
    const sawError = () => logs.some((l) => /top level error code 129/.test(l));
    const fail = (err: Error) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (producer.isConnected()) producer.disconnect();
      reject(err);
    };
    // Done once every message is delivered and the client has logged the top-level error (its
    // log events come on their own thread, so either may come first).
    const maybeDone = () => {
      if (settled || n < count || !sawError()) return;
      settled = true;
      clearTimeout(timer);
      producer.disconnect(() => resolve(n));
    };
    const timer = setTimeout(() => fail(new Error(`timed out with ${n}/${count} delivered, top-level error 129 logged: ${sawError()}`)), 30_000);
    producer.on('event.log', (l: { fac: string; message: string }) => {
      logs.push(`${l.fac} ${l.message}`);
      maybeDone();
    });
    producer.on('event.error', fail);
    producer.on('delivery-report', (err: Error | null) => {
      if (err) return fail(err);
      n++;
      maybeDone();
    });
    producer.setPollInterval(5);
    producer.on('ready', () => {
      for (let i = 0; i < count; i++) producer.produce('md13-reboot', null, Buffer.from(`r-${i}`), `k-${i}`);
    });
    producer.connect();
  });
  rec.stop();
  expect(delivered).toBe(count);
  expect(rule.hits).toBe(1);
  // The client asked again after the error (the error answer is the first one it got).
  expect(rec.requests.length).toBeGreaterThan(1);
  expect(logs.some((l) => /top level error code 129/.test(l))).toBe(true);
});
