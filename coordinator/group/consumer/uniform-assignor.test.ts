/**
 * The uniform assignor against the examples of Kafka's UniformHomogeneousAssignmentBuilder tests
 * (OptimizedUniformAssignmentBuilderTest in the Kafka tree krill follows) and
 * UniformHeterogeneousAssignmentBuilderTest: same inputs, Kafka's expected outputs. Where Kafka's
 * output depends on HashSet iteration order (the homogeneous builder walks the subscribed topics in
 * the order of a HashSet of Uuids), the subscription is listed in the order Kafka's HashSet happens
 * to iterate, which krill follows as given, and the properties are asserted as well; the
 * heterogeneous builder sorts its topics and members, so its examples are exact.
 */
import { PartitionAssignorError, SubscriptionType, assignmentOf, type Assignment } from './assignor';
import { assignmentProblems, keptPartitions, plain, specOf, topicsOf } from './testing';
import { UniformAssignor } from './uniform-assignor';

const T1 = 'T1-A4s3VTwiI5CTbEp6POw';
const T2 = 'T2-B4s3VTwiI5YHbPp6YUe';
const T3 = 'T3-CU8fVTLCz5YMkLoDQsa';
const T4 = 'T4-Tw9fVTLCz5HbPp6YQsa';
const assignor = new UniformAssignor();
const HOMO = SubscriptionType.HOMOGENEOUS;
const HETERO = SubscriptionType.HETEROGENEOUS;

test('name is uniform', () => {
  expect(assignor.name()).toBe('uniform');
});

describe('homogeneous subscriptions', () => {
  test('a member subscribed to nothing gets an empty group assignment', () => {
    const result = assignor.assign(specOf({ A: { topics: [] } }, HOMO), topicsOf({ [T1]: 3 }));
    expect(result.members.size).toBe(0);
  });

  test('a subscription to a topic missing from the metadata throws', () => {
    expect(() => assignor.assign(specOf({ A: { topics: [T2] } }, HOMO), topicsOf({ [T1]: 3 }))).toThrow(PartitionAssignorError);
  });

  test('first assignment, two members, two topics (Kafka iterates T3 before T1)', () => {
    const topics = topicsOf({ [T1]: 3, [T3]: 2 });
    const spec = specOf({ A: { topics: [T3, T1] }, B: { topics: [T3, T1] } }, HOMO);
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T1]: [0], [T3]: [0, 1] }, B: { [T1]: [1, 2] } });
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
  });

  test('the other topic order gives another balanced assignment', () => {
    const topics = topicsOf({ [T1]: 3, [T3]: 2 });
    const spec = specOf({ A: { topics: [T1, T3] }, B: { topics: [T1, T3] } }, HOMO);
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T1]: [0, 1, 2] }, B: { [T3]: [0, 1] } });
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
  });

  test('more members than partitions: the last member gets an empty assignment', () => {
    const topics = topicsOf({ [T3]: 2 });
    const spec = specOf({ A: { topics: [T3] }, B: { topics: [T3] }, C: { topics: [T3] } }, HOMO);
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T3]: [0] }, B: { [T3]: [1] }, C: {} });
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
  });

  test('validity and balance for 99 topics of 3 partitions over 49 members', () => {
    const partitions: Record<string, number> = {};
    const ids: string[] = [];
    for (let i = 1; i < 100; i++) {
      const id = Buffer.alloc(16, i).toString('base64url');
      partitions[id] = 3;
      ids.push(id);
    }
    const topics = topicsOf(partitions);
    const members: Record<string, { topics: string[] }> = {};
    for (let i = 1; i < 50; i++) members[`member${i}`] = { topics: ids };
    const spec = specOf(members, HOMO);
    const result = assignor.assign(spec, topics);
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
    expect(result.members.size).toBe(49);
  });

  test('an unbalanced previous assignment is rebalanced, keeping what fits in each quota', () => {
    const topics = topicsOf({ [T1]: 3, [T2]: 3 });
    const spec = specOf(
      {
        A: { topics: [T1, T2], assignment: assignmentOf([T1, [0, 1]], [T2, [0, 1]]) },
        B: { topics: [T1, T2], assignment: assignmentOf([T1, [2]], [T2, [2]]) },
      },
      HOMO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T1]: [0, 1], [T2]: [0] }, B: { [T1]: [2], [T2]: [1, 2] } });
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
  });

  test('partitions added to both topics (Kafka iterates T2 before T1)', () => {
    const topics = topicsOf({ [T1]: 6, [T2]: 5 });
    const spec = specOf(
      {
        A: { topics: [T2, T1], assignment: assignmentOf([T1, [0, 2]], [T2, [0]]) },
        B: { topics: [T2, T1], assignment: assignmentOf([T1, [1]], [T2, [1, 2]]) },
      },
      HOMO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T1]: [0, 2, 3], [T2]: [0, 3, 4] }, B: { [T1]: [1, 4, 5], [T2]: [1, 2] } });
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
  });

  test('a member added after the first assignment', () => {
    const topics = topicsOf({ [T1]: 3, [T2]: 3 });
    const spec = specOf(
      {
        A: { topics: [T1, T2], assignment: assignmentOf([T1, [0, 2]], [T2, [0]]) },
        B: { topics: [T1, T2], assignment: assignmentOf([T1, [1]], [T2, [1, 2]]) },
        C: { topics: [T1, T2] },
      },
      HOMO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T1]: [0, 2] }, B: { [T1]: [1], [T2]: [1] }, C: { [T2]: [0, 2] } });
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
  });

  test('a member removed after the first assignment (Kafka iterates T2 before T1)', () => {
    const topics = topicsOf({ [T1]: 3, [T2]: 3 });
    const spec = specOf(
      {
        A: { topics: [T2, T1], assignment: assignmentOf([T1, [0]], [T2, [0]]) },
        B: { topics: [T2, T1], assignment: assignmentOf([T1, [1]], [T2, [1]]) },
      },
      HOMO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T1]: [0], [T2]: [0, 2] }, B: { [T1]: [1, 2], [T2]: [1] } });
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
  });

  test('a topic unsubscribed by everyone leaves every assignment', () => {
    const topics = topicsOf({ [T1]: 2, [T2]: 2 });
    const spec = specOf(
      {
        A: { topics: [T2], assignment: assignmentOf([T1, [0]], [T2, [0]]) },
        B: { topics: [T2], assignment: assignmentOf([T1, [1]], [T2, [1]]) },
      },
      HOMO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T2]: [0] }, B: { [T2]: [1] } });
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
  });

  test('sticky: every member keeps its partitions up to its quota, and the input is not changed', () => {
    const topics = topicsOf({ [T1]: 7, [T2]: 5 });
    const a: Assignment = assignmentOf([T1, [0, 1, 2, 3, 4, 5, 6]], [T2, [0, 1]]);
    const b: Assignment = assignmentOf([T2, [2, 3, 4]]);
    const spec = specOf({ A: { topics: [T1, T2], assignment: a }, B: { topics: [T1, T2], assignment: b }, C: { topics: [T1, T2] } }, HOMO);
    const result = assignor.assign(spec, topics);
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
    // 12 partitions over 3 members: a quota of 4 each. A keeps 4 of its 9, B all 3 of its own.
    expect(Object.fromEntries(keptPartitions(spec, result))).toEqual({ A: 4, B: 3, C: 0 });
    expect(plain(new Map([['A', a], ['B', b]]))).toEqual({ A: { [T1]: [0, 1, 2, 3, 4, 5, 6], [T2]: [0, 1] }, B: { [T2]: [2, 3, 4] } });
    // A member whose assignment is unchanged gets the very same object back.
    const again = assignor.assign(specOf({ A: { topics: [T1, T2], assignment: result.members.get('A') }, B: { topics: [T1, T2], assignment: result.members.get('B') }, C: { topics: [T1, T2], assignment: result.members.get('C') } }, HOMO), topics);
    expect(again.members.get('A')).toBe(result.members.get('A'));
    expect(plain(again)).toEqual(plain(result));
  });
});

describe('heterogeneous subscriptions', () => {
  test('members subscribed to nothing get an empty group assignment', () => {
    const result = assignor.assign(specOf({ A: { topics: [] }, B: { topics: [] } }, HETERO), topicsOf({ [T1]: 3 }));
    expect(result.members.size).toBe(0);
  });

  test('subscriptions to topics missing from the metadata throw', () => {
    expect(() => assignor.assign(specOf({ A: { topics: [T3] }, B: { topics: [T2] } }, HETERO), topicsOf({ [T1]: 3 }))).toThrow(PartitionAssignorError);
  });

  test('first assignment, two members, two topics', () => {
    const topics = topicsOf({ [T1]: 3, [T3]: 6 });
    const spec = specOf({ A: { topics: [T1, T3] }, B: { topics: [T3] } }, HETERO);
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T1]: [0, 1, 2], [T3]: [4] }, B: { [T3]: [0, 1, 2, 3, 5] } });
    expect(assignmentProblems(spec, topics, result)).toEqual([]);
  });

  test('more members than partitions', () => {
    const topics = topicsOf({ [T3]: 1, [T1]: 2 });
    const spec = specOf({ A: { topics: [T3] }, B: { topics: [T3] }, C: { topics: [T1] } }, HETERO);
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T3]: [0] }, B: {}, C: { [T1]: [0, 1] } });
  });

  test('two members, three topics, unbalanced previous assignment', () => {
    const topics = topicsOf({ [T1]: 6, [T2]: 4, [T3]: 4 });
    const spec = specOf(
      {
        A: { topics: [T1], assignment: assignmentOf([T1, [0, 1, 2]]) },
        B: { topics: [T1, T2], assignment: assignmentOf([T1, [3]], [T2, [0]]) },
        C: { topics: [T1, T2, T3], assignment: assignmentOf([T1, [4, 5]], [T2, [1, 2, 3]], [T3, [0, 1, 2, 3]]) },
      },
      HETERO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({
      A: { [T1]: [0, 1, 2, 5] },
      B: { [T1]: [3], [T2]: [0, 1, 2, 3] },
      C: { [T1]: [4], [T3]: [0, 1, 2, 3] },
    });
    expect(assignmentProblems(spec, topics, result)).toEqual([]);
  });

  test('partitions added for two members', () => {
    const topics = topicsOf({ [T1]: 6, [T2]: 5, [T3]: 3, [T4]: 3 });
    const spec = specOf(
      {
        A: { topics: [T1, T3], assignment: assignmentOf([T1, [0, 1, 2, 3]], [T3, [0, 1]]) },
        B: { topics: [T1, T2, T3, T4], assignment: assignmentOf([T2, [0, 1, 2]], [T4, [0, 1, 2]]) },
      },
      HETERO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({
      A: { [T1]: [0, 1, 2, 3, 4, 5], [T3]: [0, 1, 2] },
      B: { [T2]: [0, 1, 2, 3, 4], [T4]: [0, 1, 2] },
    });
    expect(assignmentProblems(spec, topics, result)).toEqual([]);
  });

  test('a member added and partitions added', () => {
    const topics = topicsOf({ [T1]: 6, [T2]: 7 });
    const spec = specOf(
      {
        A: { topics: [T1], assignment: assignmentOf([T1, [0, 2]], [T2, [0]]) },
        B: { topics: [T1, T2], assignment: assignmentOf([T1, [1]], [T2, [1, 2]]) },
        C: { topics: [T1, T2] },
      },
      HETERO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({
      A: { [T1]: [0, 2, 3, 4, 5] },
      B: { [T1]: [1], [T2]: [1, 2, 6] },
      C: { [T2]: [0, 3, 4, 5] },
    });
    expect(assignmentProblems(spec, topics, result)).toEqual([]);
  });

  test('a member removed, three topics', () => {
    const topics = topicsOf({ [T1]: 3, [T2]: 8, [T3]: 3 });
    const spec = specOf(
      {
        A: { topics: [T1, T3], assignment: assignmentOf([T1, [0, 1, 2]], [T3, [0, 1]]) },
        B: { topics: [T2], assignment: assignmentOf([T2, [3, 4, 5, 6]]) },
      },
      HETERO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T1]: [0, 1, 2], [T3]: [0, 1, 2] }, B: { [T2]: [0, 1, 2, 3, 4, 5, 6, 7] } });
  });

  test('a subscription removed', () => {
    const topics = topicsOf({ [T1]: 3, [T2]: 5 });
    const spec = specOf(
      {
        A: { topics: [T1], assignment: assignmentOf([T1, [0, 2]], [T2, [1, 3]]) },
        B: { topics: [T1, T2], assignment: assignmentOf([T1, [1]], [T2, [0, 2, 4]]) },
      },
      HETERO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T1]: [0, 1, 2] }, B: { [T2]: [0, 1, 2, 3, 4] } });
    expect(assignmentProblems(spec, topics, result)).toEqual([]);
  });

  test('the topic runs out of partitions before its subscribers are balanced', () => {
    const topics = topicsOf({ [T1]: 2, [T2]: 2, [T3]: 2 });
    const spec = specOf(
      {
        A: { topics: [T1, T2, T3], assignment: assignmentOf([T1, [0, 1]], [T2, [0, 1]], [T3, [0, 1]]) },
        B: { topics: [T1, T2, T3] },
      },
      HETERO,
    );
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T2]: [0], [T3]: [0, 1] }, B: { [T1]: [0, 1], [T2]: [1] } });
    expect(assignmentProblems(spec, topics, result, true)).toEqual([]);
  });

  test('a member without subscriptions next to one with', () => {
    const topics = topicsOf({ [T1]: 3 });
    const spec = specOf({ A: { topics: [T1] }, B: { topics: [] } }, HETERO);
    const result = assignor.assign(spec, topics);
    expect(plain(result)).toEqual({ A: { [T1]: [0, 1, 2] }, B: {} });
  });

  test('ties between topics are broken by Java Uuid order (signed), not by string order', () => {
    // X has a negative most significant long: Java sorts it before Y, string order after.
    const X = Buffer.from('80000000000000000000000000000000', 'hex').toString('base64url');
    const Y = Buffer.from('00000000000000000000000000000001', 'hex').toString('base64url');
    expect(X > Y).toBe(true);
    const topics = topicsOf({ [X]: 1, [Y]: 1, [T3]: 1 });
    const spec = specOf({ A: { topics: [Y, X] }, B: { topics: [Y, X] }, C: { topics: [T3] } }, HETERO);
    const result = assignor.assign(spec, topics);
    // Same partitions per subscriber and subscriber count: X is visited first and goes to A.
    expect(plain(result)).toEqual({ A: { [X]: [0] }, B: { [Y]: [0] }, C: { [T3]: [0] } });
  });

  test('overlapping subscriptions over many members stay valid and balanced per topic, and sticky', () => {
    const counts: Record<string, number> = {};
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const id = Buffer.alloc(16, i + 1).toString('base64url');
      ids.push(id);
      counts[id] = 1 + ((i * 7) % 11);
    }
    const topics = topicsOf(counts);
    const members: Record<string, { topics: string[]; assignment?: Assignment }> = {};
    for (let m = 0; m < 9; m++) members[`m${m}`] = { topics: ids.filter((_, i) => (i + m) % 3 !== 0) };
    const first = assignor.assign(specOf(members, HETERO), topics);
    expect(assignmentProblems(specOf(members, HETERO), topics, first)).toEqual([]);

    // Same group again: nothing moves.
    for (const id of Object.keys(members)) members[id] = { ...members[id], assignment: first.members.get(id) };
    const same = assignor.assign(specOf(members, HETERO), topics);
    expect(plain(same)).toEqual(plain(first));

    // One member leaves: the others keep everything they had.
    delete members.m4;
    const spec = specOf(members, HETERO);
    const after = assignor.assign(spec, topics);
    expect(assignmentProblems(spec, topics, after)).toEqual([]);
    for (const [id, kept] of keptPartitions(spec, after)) {
      const before = first.members.get(id);
      const owned = before === undefined ? 0 : [...before.values()].reduce((n, s) => n + s.size, 0);
      expect(kept).toBeGreaterThanOrEqual(owned - 1);
    }
  });
});
