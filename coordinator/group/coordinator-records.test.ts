import { Writer } from '../../protocol/primitives/writer';
import {
  groupMetadataRecord,
  groupMetadataTombstone,
  offsetCommitRecord,
  offsetCommitTombstone,
  parseCoordinatorRecord,
} from './coordinator-records';

/** Kafka's classic string: int16 length + UTF-8. */
const str = (s: string) => {
  const b = Buffer.from(s);
  const len = Buffer.alloc(2);
  len.writeInt16BE(b.length);
  return Buffer.concat([len, b]);
};
const i16 = (n: number) => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const i32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeInt32BE(n);
  return b;
};
const i64 = (n: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigInt64BE(n);
  return b;
};

describe('__consumer_offsets records (Kafka byte layout)', () => {
  test('offset commit: key v1, value v3 (leader epoch), exactly the bytes Kafka writes', () => {
    const r = offsetCommitRecord('grp', 'orders', 3, {
      committedOffset: 42n,
      leaderEpoch: 7,
      metadata: 'md',
      commitTimestampMs: 1_700_000_000_000,
      expireTimestampMs: null,
    });
    expect(r.key).toEqual(Buffer.concat([i16(1), str('grp'), str('orders'), i32(3)]));
    expect(r.value).toEqual(Buffer.concat([i16(3), i64(42n), i32(7), str('md'), i64(1_700_000_000_000n)]));
    const parsed = parseCoordinatorRecord(r.key, r.value);
    expect(parsed).toEqual({
      type: 'offset',
      key: { group: 'grp', topic: 'orders', partition: 3 },
      value: { committedOffset: 42n, leaderEpoch: 7, metadata: 'md', commitTimestampMs: 1_700_000_000_000, expireTimestampMs: null },
    });
  });

  test('an explicit expire timestamp is written as value v1', () => {
    const r = offsetCommitRecord('g', 't', 0, { committedOffset: 1n, leaderEpoch: -1, metadata: '', commitTimestampMs: 1000, expireTimestampMs: 5000 });
    expect(r.value).toEqual(Buffer.concat([i16(1), i64(1n), str(''), i64(1000n), i64(5000n)]));
    const parsed = parseCoordinatorRecord(r.key, r.value);
    expect(parsed.type === 'offset' && parsed.value).toMatchObject({ leaderEpoch: -1, expireTimestampMs: 5000 });
  });

  test('tombstones have a null value', () => {
    expect(parseCoordinatorRecord(offsetCommitTombstone('g', 't', 1).key, null)).toEqual({ type: 'offset', key: { group: 'g', topic: 't', partition: 1 }, value: null });
    const gt = groupMetadataTombstone('g');
    expect(gt.key).toEqual(Buffer.concat([i16(2), str('g')]));
    expect(parseCoordinatorRecord(gt.key, gt.value)).toEqual({ type: 'group', groupId: 'g', value: null });
  });

  test('group metadata: key v2, value v3 round trip', () => {
    const r = groupMetadataRecord('g', {
      protocolType: 'consumer',
      generation: 4,
      protocol: 'range',
      leader: 'm1',
      currentStateTimestamp: 123n,
      members: [
        {
          memberId: 'm1',
          groupInstanceId: 'i1',
          clientId: 'c',
          clientHost: '/127.0.0.1',
          rebalanceTimeout: 60000,
          sessionTimeout: 10000,
          subscription: Buffer.from([1, 2]),
          assignment: Buffer.from([3]),
        },
      ],
    });
    expect(r.value!.readInt16BE(0)).toBe(3);
    const p = parseCoordinatorRecord(r.key, r.value);
    expect(p.type).toBe('group');
    if (p.type !== 'group') return;
    expect(p.value).toMatchObject({ protocolType: 'consumer', generation: 4, protocol: 'range', leader: 'm1', currentStateTimestamp: 123n });
    expect(p.value!.members[0]).toMatchObject({ memberId: 'm1', groupInstanceId: 'i1', clientHost: '/127.0.0.1', rebalanceTimeout: 60000 });
    expect(Buffer.from(p.value!.members[0].subscription)).toEqual(Buffer.from([1, 2]));
  });

  test('KIP-848 record types are parsed as consumer group records, share group ones skipped; garbage is an error', () => {
    const w = new Writer();
    w.int16(3);
    w.string('g');
    // ConsumerGroupMetadataValue v0: epoch 7, no tagged fields.
    const value = Buffer.from([0, 0, 0, 0, 0, 7, 0]);
    expect(parseCoordinatorRecord(w.toBuffer(), value)).toEqual({ type: 'consumer', record: { type: 'groupEpoch', groupId: 'g', epoch: 7 } });
    expect(parseCoordinatorRecord(w.toBuffer(), null)).toEqual({ type: 'consumer', record: { type: 'tombstone', keyVersion: 3, groupId: 'g', memberId: null } });
    const share = new Writer();
    share.int16(11);
    share.string('g');
    expect(parseCoordinatorRecord(share.toBuffer(), Buffer.alloc(4))).toEqual({ type: 'unsupported', keyVersion: 11 });
    expect(() => parseCoordinatorRecord(Buffer.from([0x7f, 0x00]), null)).toThrow();
    expect(() => parseCoordinatorRecord(null, null)).toThrow();
    expect(() => parseCoordinatorRecord(Buffer.concat([i16(1), str('g')]), null)).toThrow();
  });
});
