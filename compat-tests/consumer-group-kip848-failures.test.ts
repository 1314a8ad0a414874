/**
 * The KIP-848 consumer group protocol under membership churn and member failures, with librdkafka
 * 2.12 (node-rdkafka, `group.protocol: 'consumer'`, auto-commits) against one embedded broker with
 * a 4 s group.consumer.session.timeout.ms, while a producer writes to every partition throughout:
 * - four members join one by one on an 8-partition topic and leave one by one: after each step the
 *   group is Stable with assignments that are disjoint, complete and balanced (uniform assignor),
 *   the same in ConsumerGroupDescribe and in the members' rebalance callbacks; no partition is ever
 *   assigned to one member while another still owns it; every message is read;
 * - a member in a child process is SIGKILLed: its partitions stay with it until the session timeout
 *   fences it, then move to the survivors, which read them from the committed offsets (nothing lost);
 * - static membership (group.instance.id) across process restarts: a member closed with SIGTERM
 *   (leave epoch -2) and started again gets its partitions back without a rebalance; a member
 *   SIGKILLed and started again before its session timeout is refused UNRELEASED_INSTANCE_ID (fatal
 *   for librdkafka, as for Kafka's own clients) while the group keeps the old member and its
 *   partitions untouched, and after the session timeout the instance id joins again.
 * The 3-broker coordinator failover is in consumer-group-kip848-failover.test.ts.
 */
import type { Admin, Kafka, Producer } from 'kafkajs';
import { startTestBroker, type TestBroker } from './helpers/brokers';
import { connectedAdmin, connectedProducer, disconnectAll, kafkaFor } from './helpers/kafkajs';
import { ChildMember, describeGroup, InProcessMember, Ownership, readRanges, StreamProducer, unread, until, waitStable, type Member, type MemberOptions } from './helpers/kip848';

jest.setTimeout(60_000);

const SESSION_TIMEOUT_MS = 4000;
const HEARTBEAT_INTERVAL_MS = 250;
/**
 * The session timeout runs from a member's last heartbeat, which came up to an interval before a
 * kill (more on a loaded machine): a partition of a killed member moves at least this long after
 * the kill (a leave would move it within milliseconds), and what must happen before the old
 * session ends has to happen within it.
 */
const SESSION_LOWER_BOUND_MS = SESSION_TIMEOUT_MS - 1000;

const sorted = (s: Iterable<number>) => [...s].sort((a, b) => a - b);

describe('KIP-848 consumer groups under churn and failures (librdkafka, group.protocol=consumer)', () => {
  let broker: TestBroker;
  let kafka: Kafka;
  let admin: Admin;
  let producer: Producer;
  /** Everything started, stopped in afterAll whatever happened. */
  const started: Member[] = [];
  const streams: StreamProducer[] = [];

  beforeAll(async () => {
    broker = await startTestBroker('embedded', {
      config: {
        'offsets.topic.num.partitions': 2,
        'group.consumer.min.heartbeat.interval.ms': 100,
        'group.consumer.heartbeat.interval.ms': HEARTBEAT_INTERVAL_MS,
        'group.consumer.min.session.timeout.ms': 1000,
        'group.consumer.session.timeout.ms': SESSION_TIMEOUT_MS,
      },
    });
    kafka = kafkaFor(broker, 'kip848-failures');
    admin = await connectedAdmin(kafka);
    producer = await connectedProducer(kafka);
  });

  afterAll(async () => {
    await Promise.all(streams.map((s) => s.stop().catch(() => undefined)));
    await Promise.all(started.map((m) => m.stop().catch(() => undefined)));
    await disconnectAll(admin, producer);
    await broker?.close();
  });

  const describe_ = (group: string) => () => describeGroup(broker.bootstrap, group);
  const inProcess = async (o: Omit<MemberOptions, 'bootstrap'>, ownership: Ownership) => {
    const m = await InProcessMember.start({ ...o, bootstrap: broker.bootstrap }, ownership);
    started.push(m);
    return m;
  };
  const child = async (o: Omit<MemberOptions, 'bootstrap'>, ownership: Ownership) => {
    const m = await ChildMember.start({ ...o, bootstrap: broker.bootstrap }, ownership);
    started.push(m);
    return m;
  };
  const stream = (topic: string, partitions: number) => {
    const s = new StreamProducer(producer, topic, partitions);
    streams.push(s);
    return s;
  };
  const committed = async (group: string, topic: string) => {
    const [o] = await admin.fetchOffsets({ groupId: group, topics: [topic] });
    return new Map(o.partitions.map((p) => [p.partition, Number(p.offset)]));
  };
  /** Every acknowledged message has been read by one of `members`. */
  const allRead = async (p: StreamProducer, members: Member[], ownership?: Ownership) => {
    let left: string[] = [];
    try {
      await until('every acknowledged message read', () => (left = unread(p, members)).length === 0, 20_000);
    } catch (err) {
      const partitions = [...new Set(left.map((v) => Number(v.split('/')[1].split('#')[0])))];
      const detail = partitions.map((q) => `partition ${q} read by ${readRanges(members, q)}`).join('\n');
      throw new Error(`${(err as Error).message}: ${left.length} unread, e.g. ${left.slice(0, 5).join(' ')}\n${detail}\nownership: ${ownership?.history.join(' | ')}`);
    }
  };

  test('four members join one by one and leave one by one: every step ends balanced, disjoint and complete, nothing owned twice, every message read', async () => {
    const topic = 'churn';
    const group = 'churn-group';
    const PARTITIONS = 8;
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
    const ownership = new Ownership(topic);
    const p = stream(topic, PARTITIONS);
    await p.progress(PARTITIONS * 5);

    const members: InProcessMember[] = [];
    const epochs: number[] = [];
    const sizes: number[][] = [];
    for (let i = 1; i <= 4; i++) {
      members.push(await inProcess({ group, topic, clientId: `churn-${i}` }, ownership));
      const d = await waitStable(describe_(group), members, PARTITIONS);
      epochs.push(d.groupEpoch);
      sizes.push(members.map((m) => m.owned.size));
      await p.progress(PARTITIONS * 3);
    }
    expect(sizes.map((s) => s.sort())).toEqual([[8], [4, 4], [2, 3, 3], [2, 2, 2, 2]]);
    const all = members.slice();
    for (let i = 0; i < 3; i++) {
      const leaving = members.shift()!;
      await leaving.stop(); // leave heartbeat (epoch -1)
      const d = await waitStable(describe_(group), members, PARTITIONS);
      epochs.push(d.groupEpoch);
      sizes.push(members.map((m) => m.owned.size));
      await p.progress(PARTITIONS * 3);
    }
    expect(sizes.slice(4).map((s) => s.sort())).toEqual([[2, 3, 3], [4, 4], [8]]);
    // Every join and every leave is a new group epoch.
    for (let i = 1; i < epochs.length; i++) expect(epochs[i]).toBeGreaterThan(epochs[i - 1]);
    expect(ownership.violations).toEqual([]);
    await p.stop();
    await allRead(p, all, ownership);
    expect(ownership.violations).toEqual([]);

    await members[0].stop();
    await until('the group is empty', async () => (await describeGroup(broker.bootstrap, group))?.groupState === 'Empty');
  });

  test('a member SIGKILLed without leaving: its partitions move to the survivors after the session timeout, read from the committed offsets', async () => {
    const topic = 'crash';
    const group = 'crash-group';
    const PARTITIONS = 8;
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
    const ownership = new Ownership(topic);
    const p = stream(topic, PARTITIONS);
    const a = await inProcess({ group, topic, clientId: 'crash-a' }, ownership);
    const c = await child({ group, topic, clientId: 'crash-c' }, ownership);
    const b = await inProcess({ group, topic, clientId: 'crash-b' }, ownership);
    await waitStable(describe_(group), [a, b, c], PARTITIONS);
    const fromC = sorted(c.owned);
    expect(fromC.length).toBeGreaterThanOrEqual(2);
    // c has read and committed on each of its partitions.
    await until('c committed on its partitions', async () => {
      const o = await committed(group, topic);
      return fromC.every((q) => (o.get(q) ?? -1) > 0 && [...c.seen.keys()].some((k) => k.startsWith(`${q}/`)));
    });

    await c.kill();
    const killedAt = Date.now();
    // Nobody commits on c's partitions until they are reassigned (the survivors commit only what
    // they read): once two reads agree, these are the offsets the survivors must start from.
    let last = '';
    const atKill = await until('the committed offsets of c\'s partitions settle', async () => {
      const o = await committed(group, topic);
      const now = JSON.stringify(fromC.map((q) => o.get(q)));
      const same = now === last;
      last = now;
      if (!same) await new Promise((r) => setTimeout(r, 200));
      return same ? new Map(fromC.map((q) => [q, o.get(q)!])) : undefined;
    });
    const settledAt = Date.now();
    expect(settledAt - killedAt).toBeLessThan(SESSION_LOWER_BOUND_MS);
    // Until the session timeout, c is still a member holding its partitions.
    const during = await describeGroup(broker.bootstrap, group);
    expect(during.members.map((m: any) => m.clientId).sort()).toEqual(['crash-a', 'crash-b', 'crash-c']);

    await waitStable(describe_(group), [a, b], PARTITIONS);
    for (const q of fromC) {
      const heir = a.owned.has(q) ? a : b;
      const at = heir.assignedAt.get(q)!;
      // Reassigned only once the session timed out.
      expect(at - killedAt).toBeGreaterThanOrEqual(SESSION_LOWER_BOUND_MS);
      expect(at).toBeGreaterThan(settledAt);
      await until(`the heir of partition ${q} reads it`, () => heir.firstAfterAssign.has(q));
      expect([q, heir.firstAfterAssign.get(q)]).toEqual([q, atKill.get(q)]);
    }
    await p.progress(PARTITIONS * 5);
    await p.stop();
    await allRead(p, [a, b, c], ownership);
    expect(ownership.violations).toEqual([]);
    const final = await describeGroup(broker.bootstrap, group);
    expect(final.members.map((m: any) => m.clientId).sort()).toEqual(['crash-a', 'crash-b']);
  });

  test('static members across process restarts: SIGTERM and restart keeps the partitions without a rebalance; SIGKILL and restart before the session timeout is UNRELEASED_INSTANCE_ID until the old member times out', async () => {
    const topic = 'static';
    const group = 'static-group';
    const PARTITIONS = 6;
    await admin.createTopics({ topics: [{ topic, numPartitions: PARTITIONS }], waitForLeaders: true });
    const ownership = new Ownership(topic);
    const p = stream(topic, PARTITIONS);
    const describe = describe_(group);
    const a = await inProcess({ group, topic, clientId: 'static-a', instanceId: 'instance-a' }, ownership);
    const b = await inProcess({ group, topic, clientId: 'static-b', instanceId: 'instance-b' }, ownership);
    const sOpts = { group, topic, clientId: 'static-s', instanceId: 'instance-s' };
    let s = await child(sOpts, ownership);
    const before = await waitStable(describe, [a, b, s], PARTITIONS);
    const fromS = sorted(s.owned);
    const ofA = sorted(a.owned);
    const ofB = sorted(b.owned);
    const calls = () => [a.assignments, a.revocations, b.assignments, b.revocations];
    const callsBefore = calls();
    const memberOf = (d: any, instanceId: string) => d.members.find((m: any) => m.instanceId === instanceId);

    // 1. SIGTERM: the script closes the consumer, a static leave (epoch -2); a new process with the
    //    same instance id takes over the member, its partitions and its epoch: no rebalance.
    await s.stop();
    expect(s.closed).toBe(true);
    const left = await until('instance-s left temporarily', async () => {
      const d = await describe();
      return memberOf(d, 'instance-s')?.memberEpoch === -2 ? d : undefined;
    });
    expect(left.groupEpoch).toBe(before.groupEpoch);
    s = await child(sOpts, ownership);
    await until('the restarted instance-s gets its partitions back', () => s.owned.size === fromS.length);
    expect(sorted(s.owned)).toEqual(fromS);
    const back = await waitStable(describe, [a, b, s], PARTITIONS);
    expect(back.groupEpoch).toBe(before.groupEpoch);
    expect(memberOf(back, 'instance-s').memberId).not.toBe(memberOf(before, 'instance-s').memberId);
    expect([sorted(a.owned), sorted(b.owned)]).toEqual([ofA, ofB]);
    expect(calls()).toEqual(callsBefore);
    await until('the restarted instance-s reads', () => fromS.every((q) => s.firstAfterAssign.has(q)));

    // 2. SIGKILL: no leave. Kafka (GroupMetadataManager.throwIfInstanceIdIsUnreleased) refuses a
    //    new member with the instance id while the old one holds it (epoch != -2), and librdkafka
    //    treats UNRELEASED_INSTANCE_ID as fatal, as Kafka's Java consumer does.
    const held = await describe();
    const heldMember = memberOf(held, 'instance-s');
    await s.kill();
    const killedAt = Date.now();
    const refused = await child(sOpts, ownership);
    const fatal = await until('the second incarnation fails', () => refused.errors.find((e) => e.fatal));
    expect(fatal.msg).toMatch(/The instance ID is still used by another member in the consumer group/);
    expect(Date.now() - killedAt).toBeLessThan(SESSION_LOWER_BOUND_MS);
    // Meanwhile the group still has the old member at its epoch, holding its partitions.
    const meanwhile = await describe();
    expect(meanwhile.groupEpoch).toBe(held.groupEpoch);
    expect([memberOf(meanwhile, 'instance-s').memberId, memberOf(meanwhile, 'instance-s').memberEpoch]).toEqual([heldMember.memberId, heldMember.memberEpoch]);
    expect(refused.owned.size).toBe(0);
    expect(calls()).toEqual(callsBefore);
    await refused.kill();

    // 3. The session timeout fences the old member: a and b take its partitions; then the instance
    //    id joins again as a new member and gets a balanced share.
    await waitStable(describe, [a, b], PARTITIONS);
    const fencedAfter = Math.min(...fromS.map((q) => (a.owned.has(q) ? a : b).assignedAt.get(q)!)) - killedAt;
    expect(fencedAfter).toBeGreaterThanOrEqual(SESSION_LOWER_BOUND_MS);
    s = await child(sOpts, ownership);
    const rejoined = await waitStable(describe, [a, b, s], PARTITIONS);
    expect(memberOf(rejoined, 'instance-s').memberId).not.toBe(heldMember.memberId);
    await p.progress(PARTITIONS * 5);
    await p.stop();
    await allRead(p, started.filter((m) => m.opts.group === group), ownership);
    expect(ownership.violations).toEqual([]);
  });
});
