/**
 * RequestFaults without a broker: matching by API, version, topic, partition and client id, rule
 * counts and probability, the order of refusal, recording, pause and rules, and the errors for a
 * rule that cannot work.
 */
import { CapturingLogger } from '../../common/testing/mock-time';
import { ANONYMOUS } from '../../common/kafka-principal';
import { ErrorCode } from '../../protocol/errors';
import type { RequestContext } from '../network/request-context';
import { peerNodeOf, RequestFaults } from './request-faults';

function ctx(apiKey: number, apiVersion: number, clientId: string | null = 'app'): RequestContext {
  return {
    apiKey,
    apiVersion,
    correlationId: 7,
    clientId,
    connection: { id: 1, remoteAddress: '127.0.0.1', remotePort: 5000, localPort: 9092, listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', principal: ANONYMOUS, attributes: new Map() },
    receivedAtMs: 0,
    requestBytes: 10,
    onResponseSent: () => undefined,
    parked: () => undefined,
    principal: ANONYMOUS,
    throttle: () => undefined,
    requestThrottleMs: () => 0,
  };
}

const produce = (topic: string, partitions: number[]) => ({ transactionalId: null, acks: 1, timeoutMs: 100, topicData: [{ name: topic, partitionData: partitions.map((index) => ({ index, records: null })) }] });

test('an error rule answers the matching partition for `times` requests, then removes itself', async () => {
  const f = new RequestFaults(new CapturingLogger());
  const rule = f.intercept({ api: 'produce', topic: 't', partition: 1 }, { error: 'NOT_LEADER_OR_FOLLOWER' }, { times: 2 });
  expect(await f.interceptor.intercept(ctx(0, 9), produce('t', [0]))).toBeUndefined();
  expect(await f.interceptor.intercept(ctx(0, 9), produce('u', [1]))).toBeUndefined();
  const d = await f.interceptor.intercept(ctx(0, 9), produce('t', [0, 1]));
  expect(d).toMatchObject({ action: 'respond', response: { responses: [{ name: 't', partitionResponses: [{ index: 0, errorCode: 6 }, { index: 1, errorCode: 6 }] }] } });
  expect(await f.interceptor.intercept(ctx(0, 9), produce('t', [1]))).toMatchObject({ action: 'respond' });
  expect(rule.hits).toBe(2);
  expect(rule.active).toBe(false);
  await rule.done;
  expect(await f.interceptor.intercept(ctx(0, 9), produce('t', [1]))).toBeUndefined();
});

test('versions and client ids narrow a rule; the first matching rule wins', async () => {
  const f = new RequestFaults(new CapturingLogger());
  f.intercept({ api: 0, versions: [3, 7] }, 'close');
  f.intercept({ api: 'Produce', clientId: /^rdk/ }, 'drop');
  f.intercept({ api: 'Produce' }, 'closeAfterHandling');
  expect(await f.interceptor.intercept(ctx(0, 5), produce('t', [0]))).toMatchObject({ action: 'close' });
  expect(await f.interceptor.intercept(ctx(0, 9, 'rdkafka'), produce('t', [0]))).toEqual({ action: 'drop' });
  expect(await f.interceptor.intercept(ctx(0, 9, 'kafkajs'), produce('t', [0]))).toMatchObject({ action: 'closeAfterHandling' });
});

test('probability: the rule applies to the draws below it', async () => {
  const draws = [0.9, 0.1, 0.5, 0.2];
  const f = new RequestFaults(new CapturingLogger(), () => draws.shift()!);
  const rule = f.intercept({ api: 'Heartbeat' }, { error: ErrorCode.REBALANCE_IN_PROGRESS }, { probability: 0.3 });
  const out = [];
  for (let i = 0; i < 4; i++) out.push((await f.interceptor.intercept(ctx(12, 4), { groupId: 'g' }))?.action);
  expect(out).toEqual([undefined, 'respond', undefined, 'respond']);
  expect(rule.hits).toBe(2);
});

test('a delay rule waits, then lets the handler run', async () => {
  const f = new RequestFaults(new CapturingLogger());
  f.intercept({ api: 'Metadata' }, { delayMs: 50 }, { times: 1 });
  const t0 = Date.now();
  expect(await f.interceptor.intercept(ctx(3, 12), { topics: null })).toBeUndefined();
  expect(Date.now() - t0).toBeGreaterThanOrEqual(45);
});

test('recording, pause and resume', async () => {
  const f = new RequestFaults(new CapturingLogger());
  const rec = f.record({ topic: 't' });
  f.pause();
  let answered = false;
  const pending = Promise.resolve(f.interceptor.intercept(ctx(0, 9), produce('t', [2]))).then(() => (answered = true));
  await new Promise((r) => setImmediate(r));
  expect(answered).toBe(false);
  expect(rec.requests.map((r) => [r.apiName, r.topics])).toEqual([['Produce', [{ topic: 't', partition: 2 }]]]);
  f.resume();
  await pending;
  expect(answered).toBe(true);
  rec.stop();
  await f.interceptor.intercept(ctx(0, 9), produce('t', [2]));
  expect(rec.requests).toHaveLength(1);
});

test('a refused peer is recognised by krill client ids and closed before anything else', async () => {
  expect(peerNodeOf('krill-replica-fetcher-2-0')).toBe(2);
  expect(peerNodeOf('krill-broker-1-heartbeat')).toBe(1);
  expect(peerNodeOf('kafkajs')).toBeUndefined();
  expect(peerNodeOf(null)).toBeUndefined();
  const f = new RequestFaults(new CapturingLogger());
  const rec = f.record();
  f.refusePeer(2);
  expect(await f.interceptor.intercept(ctx(1, 12, 'krill-replica-fetcher-2-0'), { topics: [] })).toMatchObject({ action: 'close' });
  expect(await f.interceptor.intercept(ctx(1, 12, 'krill-replica-fetcher-1-0'), { topics: [] })).toBeUndefined();
  expect(rec.requests).toHaveLength(1);
  f.acceptPeer(2);
  expect(await f.interceptor.intercept(ctx(1, 12, 'krill-replica-fetcher-2-0'), { topics: [] })).toBeUndefined();
});

test('rules that cannot work are refused when armed', () => {
  const f = new RequestFaults(new CapturingLogger());
  expect(() => f.intercept({ api: 'NoSuchApi' }, 'close')).toThrow('unknown Kafka API "NoSuchApi"');
  expect(() => f.intercept({ api: 'Produce' }, { error: 'NO_SUCH_ERROR' })).toThrow('unknown Kafka error "NO_SUCH_ERROR"');
  expect(() => f.intercept({}, { error: 'NOT_LEADER_OR_FOLLOWER' })).toThrow('an error answer needs the API');
  expect(() => f.intercept({ api: 'CreateAcls' }, { error: 'UNKNOWN_SERVER_ERROR' })).toThrow('CreateAcls has no error response');
  expect(() => f.intercept({ api: 'Produce', partition: 0 }, 'close')).toThrow('a partition match needs a topic');
  expect(() => f.intercept({ api: 'Produce' }, 'close', { times: 0 })).toThrow('invalid times 0');
  expect(() => f.intercept({ api: 'Produce' }, 'close', { probability: 2 })).toThrow('invalid probability 2');
  expect(() => f.intercept({ api: 'Produce' }, { delayMs: -1 })).toThrow('invalid delay -1 ms');
  expect(() => f.slow(Number.NaN)).toThrow('invalid latency');
});

test('clear() removes rules, ends refusals and latency, and releases a pause', async () => {
  const log = new CapturingLogger();
  const f = new RequestFaults(log);
  const rule = f.intercept({ api: 'Produce' }, 'close');
  f.refusePeer(1);
  f.pause();
  f.clear();
  expect(rule.active).toBe(false);
  expect(f.paused).toBe(false);
  expect(f.refusedPeers.size).toBe(0);
  expect(await f.interceptor.intercept(ctx(0, 9, 'krill-broker-1-x'), produce('t', [0]))).toBeUndefined();
  expect(log.matching(/fault injection: rule armed \(Produce -> close\)/)).toHaveLength(1);
});

test('a custom response (kfake Control): built from the request; undefined passes it on', async () => {
  const f = new RequestFaults(new CapturingLogger());
  const rule = f.intercept(
    { api: 'FindCoordinator' },
    { respond: (r) => ((r.body as { key: string }).key === 'mine' ? { errorCode: 0, nodeId: 7, host: 'elsewhere', port: 1 } : undefined) },
    { times: 1 },
  );
  expect(await f.interceptor.intercept(ctx(10, 2), { key: 'other', keyType: 0 })).toBeUndefined();
  expect(rule.hits).toBe(0);
  expect(await f.interceptor.intercept(ctx(10, 2), { key: 'mine', keyType: 0 })).toEqual({ action: 'respond', response: { errorCode: 0, nodeId: 7, host: 'elsewhere', port: 1 } });
  expect(rule.active).toBe(false);
  expect(() => f.intercept({ api: 'Produce' }, { respond: 42 as never })).toThrow('respond must be a function');
});
