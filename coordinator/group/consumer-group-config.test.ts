/**
 * A consumer group's dynamic configs (GROUP config resources) in the group coordinator: the
 * heartbeat interval a ConsumerGroupHeartbeat returns and the session timeout that fences a silent
 * member come from the group's consumer.heartbeat.interval.ms / consumer.session.timeout.ms when
 * set, from group.consumer.* otherwise, other groups keep the broker's, and a change applies from
 * the member's next heartbeat (as Kafka's GroupMetadataManager reads GroupConfigManager).
 */
import { ErrorCode } from '../../protocol/errors';
import { FOO, start, stopAll, waitFor, hb } from './testing/consumer-group-harness';

afterEach(stopAll);

test("the group's heartbeat interval is returned, from the next heartbeat after a change; other groups get the broker's", async () => {
  const { c, metadata, groupConfigs } = await start();
  metadata.add('foo', FOO, 2);
  groupConfigs.set('tuned', new Map([['consumer.heartbeat.interval.ms', '7000']]));
  expect(await c.consumerGroupHeartbeat(hb('tuned', 'm1', 0))).toMatchObject({ errorCode: ErrorCode.NONE, heartbeatIntervalMs: 7000 });
  expect(await c.consumerGroupHeartbeat(hb('plain', 'm2', 0))).toMatchObject({ errorCode: ErrorCode.NONE, heartbeatIntervalMs: 5000 });
  groupConfigs.set('tuned', new Map([['consumer.heartbeat.interval.ms', '9000']]));
  expect(await c.consumerGroupHeartbeat(hb('tuned', 'm1', 1))).toMatchObject({ errorCode: ErrorCode.NONE, heartbeatIntervalMs: 9000 });
  // Deleted: the broker's value again.
  groupConfigs.delete('tuned');
  expect(await c.consumerGroupHeartbeat(hb('tuned', 'm1', 1))).toMatchObject({ errorCode: ErrorCode.NONE, heartbeatIntervalMs: 5000 });
});

test("the group's session timeout fences a silent member; the broker's (45 s) keeps another group's member", async () => {
  const { c, metadata, groupConfigs } = await start();
  metadata.add('foo', FOO, 2);
  groupConfigs.set('short', new Map([['consumer.session.timeout.ms', '150']]));
  await c.consumerGroupHeartbeat(hb('short', 'a', 0));
  await c.consumerGroupHeartbeat(hb('long', 'b', 0));
  await waitFor(async () => (await c.consumerGroupDescribe('short')).members.length === 0, 3000);
  expect((await c.consumerGroupHeartbeat(hb('short', 'a', 1))).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
  expect((await c.consumerGroupDescribe('long')).members.map((m) => m.memberId)).toEqual(['b']);
});

test('a session timeout set later applies from the next heartbeat', async () => {
  const { c, metadata, groupConfigs } = await start();
  metadata.add('foo', FOO, 1);
  const joined = await c.consumerGroupHeartbeat(hb('g', 'a', 0));
  expect(joined.errorCode).toBe(ErrorCode.NONE);
  // Scheduled with the broker's 45 s at join: not fenced by a later config alone...
  groupConfigs.set('g', new Map([['consumer.session.timeout.ms', '150']]));
  await new Promise((r) => setTimeout(r, 300));
  expect((await c.consumerGroupDescribe('g')).members.map((m) => m.memberId)).toEqual(['a']);
  // ...but this heartbeat reschedules the session with 150 ms.
  expect((await c.consumerGroupHeartbeat(hb('g', 'a', joined.memberEpoch))).errorCode).toBe(ErrorCode.NONE);
  await waitFor(async () => (await c.consumerGroupDescribe('g')).members.length === 0, 3000);
});
