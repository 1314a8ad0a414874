/**
 * ControllerChannel against a scripted provider and connection: a NOT_CONTROLLER answer (top level
 * or nested per item) and a lost connection are resent to the controller the provider names next
 * (at once on a change, else after a backoff), other answers come back as they are, no controller
 * known waits for one, and the request's deadline ends it with REQUEST_TIMED_OUT naming the last
 * failure.
 */
import { ControllerChannel, carriesNotController, type ControllerNode, type RetargetableChannel } from './controller-channel';
import { ErrorCode, KafkaError } from '../protocol/errors';
import { ConnectionError } from '../client/network-client';
import { Logger } from '../common/logger';

class Provider {
  node: ControllerNode | null = null;
  private listeners = new Set<() => void>();
  controller = () => this.node;
  onChange = (l: () => void) => {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  };
  set(node: ControllerNode | null): void {
    this.node = node;
    for (const l of [...this.listeners]) l();
  }
}

type Reply = (address: string, body: unknown) => unknown;

function fakeChannel(reply: Reply): RetargetableChannel & { sent: string[] } {
  let address = '';
  const sent: string[] = [];
  return {
    sent,
    retarget: (host: string, port: number) => void (address = `${host}:${port}`),
    send: (async (_api: string, body: unknown) => {
      sent.push(address);
      const r = await reply(address, body);
      if (r instanceof Error) throw r;
      return r;
    }) as RetargetableChannel['send'],
    versionFor: async () => 0,
    close: () => undefined,
  };
}

const logger = Logger.silent();
const c1 = { id: 1, host: 'c1', port: 9093 };
const c2 = { id: 2, host: 'c2', port: 9093 };

test('NOT_CONTROLLER anywhere in an answer', () => {
  expect(carriesNotController({ errorCode: ErrorCode.NOT_CONTROLLER })).toBe(true);
  expect(carriesNotController({ errorCode: 0, topics: [{ name: 'a', errorCode: 0 }, { name: 'b', errorCode: ErrorCode.NOT_CONTROLLER }] })).toBe(true);
  expect(carriesNotController({ errorCode: 0, responses: [{ errorCode: ErrorCode.TOPIC_ALREADY_EXISTS }] })).toBe(false);
  expect(carriesNotController({ records: Buffer.from([0, 41]) })).toBe(false);
});

test('a NOT_CONTROLLER answer is resent to the next active controller; other answers are returned as they are', async () => {
  const provider = new Provider();
  provider.set(c1);
  const ch = fakeChannel((address) =>
    address === 'c1:9093' ? { errorCode: 0, topics: [{ name: 't', errorCode: ErrorCode.NOT_CONTROLLER }] } : { errorCode: 0, topics: [{ name: 't', errorCode: ErrorCode.TOPIC_ALREADY_EXISTS }] },
  );
  const channel = new ControllerChannel({ provider, channel: ch, logger, requestTimeoutMs: 2_000, retryBackoffMs: 500 });
  const pending = channel.send('CreateTopics', { topics: [], timeoutMs: 1000, validateOnly: false });
  await new Promise((r) => setTimeout(r, 20));
  // The leader changes: the wait ends at once, not after the 500 ms backoff.
  const t0 = Date.now();
  provider.set(c2);
  const res = await pending;
  expect(Date.now() - t0).toBeLessThan(300);
  expect(res.topics[0].errorCode).toBe(ErrorCode.TOPIC_ALREADY_EXISTS);
  expect(ch.sent).toEqual(['c1:9093', 'c2:9093']);
  expect(channel.retries).toBe(1);
});

test('a lost connection is retried after a backoff; no known controller waits for one', async () => {
  const provider = new Provider();
  let failures = 2;
  const ch = fakeChannel(() => (failures-- > 0 ? new ConnectionError('connection reset') : { errorCode: 0, isFenced: false }));
  const channel = new ControllerChannel({ provider, channel: ch, logger, requestTimeoutMs: 2_000, retryBackoffMs: 10 });
  const pending = channel.send('BrokerHeartbeat', { brokerId: 0, brokerEpoch: 1n, currentMetadataOffset: 0n, wantFence: false, wantShutDown: false, offlineLogDirs: [] });
  await new Promise((r) => setTimeout(r, 30));
  expect(ch.sent).toEqual([]);
  provider.set(c1);
  expect((await pending).errorCode).toBe(0);
  expect(ch.sent).toEqual(['c1:9093', 'c1:9093', 'c1:9093']);
});

test('the deadline ends the retries with REQUEST_TIMED_OUT; other failures are not retried', async () => {
  const provider = new Provider();
  provider.set(c1);
  const ch = fakeChannel(() => ({ errorCode: ErrorCode.NOT_CONTROLLER }));
  const channel = new ControllerChannel({ provider, channel: ch, logger, requestTimeoutMs: 5_000, retryBackoffMs: 10 });
  const t0 = Date.now();
  const err = await channel.send('AllocateProducerIds', { brokerId: 0, brokerEpoch: 1n }, { timeoutMs: 200 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(KafkaError);
  expect((err as KafkaError).code).toBe(ErrorCode.REQUEST_TIMED_OUT);
  expect((err as Error).message).toMatch(/within 200 ms: AllocateProducerIds answered NOT_CONTROLLER \(controller 1 at c1:9093\)/);
  expect(Date.now() - t0).toBeLessThan(1_000);
  expect(ch.sent.length).toBeGreaterThan(2);

  const broken = fakeChannel(() => new TypeError('encoding bug'));
  const once = new ControllerChannel({ provider, channel: broken, logger, requestTimeoutMs: 1_000, retryBackoffMs: 10 });
  await expect(once.send('AllocateProducerIds', { brokerId: 0, brokerEpoch: 1n })).rejects.toThrow('encoding bug');
  expect(broken.sent).toHaveLength(1);

  // close() ends a wait at once.
  const idle = new ControllerChannel({ provider: new Provider(), channel: fakeChannel(() => ({})), logger, requestTimeoutMs: 10_000, retryBackoffMs: 5_000 });
  const waiting = idle.send('AllocateProducerIds', { brokerId: 0, brokerEpoch: 1n }).catch((e: Error) => e.message);
  idle.close();
  expect(await waiting).toMatch(/closed|within/);
});
