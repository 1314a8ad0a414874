/**
 * The range assignor against the examples of Kafka's RangeAssignorTest (same inputs, Kafka's
 * expected outputs; the range assignor's output does not depend on hash iteration order) and the
 * co-partitioning / static-membership examples of RangeAssignor's documentation.
 */
import { PartitionAssignorError, SubscriptionType, assignmentOf } from './assignor';
import { RangeAssignor } from './range-assignor';
import { plain, specOf, topicsOf } from './testing';

const T1 = 'AAAAAAAAAAAAAAAAAAAAAQ';
const T2 = 'AAAAAAAAAAAAAAAAAAAAAg';
const T3 = 'AAAAAAAAAAAAAAAAAAAAAw';
const assignor = new RangeAssignor();
const HOMO = SubscriptionType.HOMOGENEOUS;
const HETERO = SubscriptionType.HETEROGENEOUS;

test('name is range', () => {
  expect(assignor.name()).toBe('range');
});

test('a member without topics gets an empty assignment entry', () => {
  const result = assignor.assign(specOf({ A: { topics: [] } }, HOMO), topicsOf({ [T1]: 3 }));
  expect(plain(result)).toEqual({ A: {} });
});

test('no members, no assignment', () => {
  expect(assignor.assign(specOf({}, HOMO), topicsOf({ [T1]: 3 })).members.size).toBe(0);
});

test('a subscription to a topic missing from the metadata throws', () => {
  expect(() => assignor.assign(specOf({ A: { topics: [T2] } }, HOMO), topicsOf({ [T1]: 3 }))).toThrow(PartitionAssignorError);
  expect(() => assignor.assign(specOf({ A: { topics: [T1] }, B: { topics: [T2] } }, HETERO), topicsOf({ [T1]: 3 }))).toThrow(PartitionAssignorError);
});

test('first assignment, two members, same subscriptions', () => {
  const result = assignor.assign(specOf({ A: { topics: [T1, T3] }, B: { topics: [T1, T3] } }, HOMO), topicsOf({ [T1]: 3, [T3]: 2 }));
  expect(plain(result)).toEqual({ A: { [T1]: [0, 1], [T3]: [0] }, B: { [T1]: [2], [T3]: [1] } });
});

test('first assignment, three members, different subscriptions', () => {
  const result = assignor.assign(
    specOf({ A: { topics: [T1, T2] }, B: { topics: [T3] }, C: { topics: [T2, T3] } }, HETERO),
    topicsOf({ [T1]: 3, [T2]: 3, [T3]: 2 }),
  );
  expect(plain(result)).toEqual({ A: { [T1]: [0, 1, 2], [T2]: [0, 1] }, B: { [T3]: [0] }, C: { [T2]: [2], [T3]: [1] } });
});

test('more members than partitions', () => {
  const result = assignor.assign(
    specOf({ A: { topics: [T1, T3] }, B: { topics: [T1, T3] }, C: { topics: [T1, T3] } }, HOMO),
    topicsOf({ [T1]: 3, [T3]: 2 }),
  );
  expect(plain(result)).toEqual({ A: { [T1]: [0], [T3]: [0] }, B: { [T1]: [1], [T3]: [1] }, C: { [T1]: [2] } });
});

test('members are ordered by member id, not by the order they are given in', () => {
  const result = assignor.assign(specOf({ C: { topics: [T1] }, A: { topics: [T1] }, B: { topics: [T1] } }, HOMO), topicsOf({ [T1]: 4 }));
  expect(plain(result)).toEqual({ A: { [T1]: [0, 1] }, B: { [T1]: [2] }, C: { [T1]: [3] } });
});

test('static membership: a static member rejoining under a new member id keeps its ranges', () => {
  const topics = topicsOf({ [T1]: 3 });
  const before = assignor.assign(specOf({ A: { topics: [T1], instanceId: 'instanceA' }, B: { topics: [T1], instanceId: 'instanceB' } }, HOMO), topics);
  const after = assignor.assign(specOf({ B: { topics: [T1], instanceId: 'instanceB' }, memberA1: { topics: [T1], instanceId: 'instanceA' } }, HOMO), topics);
  expect(plain(after).memberA1).toEqual(plain(before).A);
  expect(plain(after).B).toEqual(plain(before).B);
});

test('mixed static and dynamic members: static members first by instance id, then dynamic by member id', () => {
  const topics = topicsOf({ [T1]: 5 });
  const before = assignor.assign(
    specOf({ A: { topics: [T1], instanceId: 'instanceA' }, C: { topics: [T1], instanceId: 'instanceC' }, B: { topics: [T1] } }, HOMO),
    topics,
  );
  expect(plain(before)).toEqual({ A: { [T1]: [0, 1] }, C: { [T1]: [2, 3] }, B: { [T1]: [4] } });
  const after = assignor.assign(
    specOf({ C: { topics: [T1], instanceId: 'instanceC' }, B: { topics: [T1] }, memberA1: { topics: [T1], instanceId: 'instanceA' } }, HOMO),
    topics,
  );
  expect(plain(after).memberA1).toEqual(plain(before).A);
  expect(plain(after).B).toEqual(plain(before).B);
  expect(plain(after).C).toEqual(plain(before).C);
});

test('a member added when there are fewer partitions than members gets nothing', () => {
  const result = assignor.assign(
    specOf(
      {
        A: { topics: [T1, T2], assignment: assignmentOf([T1, [0]], [T2, [0]]) },
        B: { topics: [T1, T2], assignment: assignmentOf([T1, [1]], [T2, [1]]) },
        C: { topics: [T1, T2] },
      },
      HOMO,
    ),
    topicsOf({ [T1]: 2, [T2]: 2 }),
  );
  expect(plain(result)).toEqual({ A: { [T1]: [0], [T2]: [0] }, B: { [T1]: [1], [T2]: [1] }, C: {} });
});

test('a partition added to each topic', () => {
  const result = assignor.assign(
    specOf(
      {
        A: { topics: [T1, T2], assignment: assignmentOf([T1, [0, 1]], [T2, [0, 1]]) },
        B: { topics: [T1, T2], assignment: assignmentOf([T1, [2]], [T2, [2]]) },
      },
      HOMO,
    ),
    topicsOf({ [T1]: 4, [T2]: 4 }),
  );
  expect(plain(result)).toEqual({ A: { [T1]: [0, 1], [T2]: [0, 1] }, B: { [T1]: [2, 3], [T2]: [2, 3] } });
});

test('a member added after the first assignment', () => {
  const result = assignor.assign(
    specOf(
      {
        A: { topics: [T1, T2], assignment: assignmentOf([T1, [0, 1]], [T2, [0, 1]]) },
        B: { topics: [T1, T2], assignment: assignmentOf([T1, [2]], [T2, [2]]) },
        C: { topics: [T1, T2] },
      },
      HOMO,
    ),
    topicsOf({ [T1]: 3, [T2]: 3 }),
  );
  expect(plain(result)).toEqual({ A: { [T1]: [0], [T2]: [0] }, B: { [T1]: [1], [T2]: [1] }, C: { [T1]: [2], [T2]: [2] } });
});

test('a member and a partition added, heterogeneous', () => {
  const result = assignor.assign(
    specOf(
      {
        A: { topics: [T1, T2], assignment: assignmentOf([T1, [0, 1]], [T2, [0, 1]]) },
        B: { topics: [T1, T2], assignment: assignmentOf([T1, [2]], [T2, [2]]) },
        C: { topics: [T1] },
      },
      HETERO,
    ),
    topicsOf({ [T1]: 4, [T2]: 3 }),
  );
  expect(plain(result)).toEqual({ A: { [T1]: [0, 1], [T2]: [0, 1] }, B: { [T1]: [2], [T2]: [2] }, C: { [T1]: [3] } });
});

test('a member removed after the first assignment', () => {
  const result = assignor.assign(
    specOf({ B: { topics: [T1, T2], assignment: assignmentOf([T1, [2]], [T2, [2]]) } }, HOMO),
    topicsOf({ [T1]: 3, [T2]: 3 }),
  );
  expect(plain(result)).toEqual({ B: { [T1]: [0, 1, 2], [T2]: [0, 1, 2] } });
});

test('several subscriptions changed after the first assignment', () => {
  const result = assignor.assign(
    specOf(
      {
        A: { topics: [T1], assignment: assignmentOf([T1, [0, 1, 2]], [T2, [0]]) },
        B: { topics: [T1, T2, T3], assignment: assignmentOf([T2, [1]]) },
        C: { topics: [T2], assignment: assignmentOf([T2, [2]], [T3, [0, 1]]) },
      },
      HETERO,
    ),
    topicsOf({ [T1]: 3, [T2]: 3, [T3]: 2 }),
  );
  expect(plain(result)).toEqual({ A: { [T1]: [0, 1] }, B: { [T1]: [2], [T2]: [0, 1], [T3]: [0, 1] }, C: { [T2]: [2] } });
});

test("the documented example: co-partitioned ranges, reshuffled by new member ids unless instance ids pin them", () => {
  const topics = topicsOf({ [T1]: 3, [T2]: 3 });
  expect(plain(assignor.assign(specOf({ M0: { topics: [T1, T2] }, M1: { topics: [T1, T2] } }, HOMO), topics))).toEqual({
    M0: { [T1]: [0, 1], [T2]: [0, 1] },
    M1: { [T1]: [2], [T2]: [2] },
  });
  // After a rolling bounce M0 -> M3 and M1 -> M2: the order flips, so do the ranges.
  expect(plain(assignor.assign(specOf({ M3: { topics: [T1, T2] }, M2: { topics: [T1, T2] } }, HOMO), topics))).toEqual({
    M2: { [T1]: [0, 1], [T2]: [0, 1] },
    M3: { [T1]: [2], [T2]: [2] },
  });
  // With instance ids I0 (was M0) and I1 (was M1) the ranges follow the instance ids.
  expect(
    plain(assignor.assign(specOf({ M3: { topics: [T1, T2], instanceId: 'I0' }, M2: { topics: [T1, T2], instanceId: 'I1' } }, HOMO), topics)),
  ).toEqual({ M3: { [T1]: [0, 1], [T2]: [0, 1] }, M2: { [T1]: [2], [T2]: [2] } });
});
