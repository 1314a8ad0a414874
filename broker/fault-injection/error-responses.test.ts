/**
 * Error responses: for every API and version that has one, a request filled with two entries at
 * every level (built from the schema descriptors) gets a response that the generated codec encodes
 * at that version and that decodes back with the error on every entry and nothing else failing.
 */
import { ErrorCode } from '../../protocol/errors';
import { ALL_APIS } from '../../protocol/generated';
import { MESSAGE_DESCRIPTORS, type FieldDescriptor, type MessageDescriptor } from '../../protocol/generated/descriptors';
import { Reader } from '../../protocol/primitives/reader';
import { Writer } from '../../protocol/primitives/writer';
import { errorResponse, errorResponseSupported, errorResponseVersions } from './error-responses';

const inRange = (r: readonly [number, number] | undefined, v: number) => r !== undefined && v >= r[0] && v <= r[1];

/** A request of this version with two entries in every array (distinct names and indexes). */
function sample(d: MessageDescriptor, struct: string, v: number, n: { i: number }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of d.structs[struct]) {
    if (!inRange(f.versions, v)) continue;
    out[f.name] = value(d, f, v, n);
  }
  return out;
}

function value(d: MessageDescriptor, f: FieldDescriptor, v: number, n: { i: number }): unknown {
  if (f.type === 'array') return [0, 1].map(() => (f.struct ? sample(d, f.struct, v, n) : scalar(f.elem!, n)));
  if (f.type === 'struct') return sample(d, f.struct!, v, n);
  return scalar(f.type, n);
}

function scalar(type: string, n: { i: number }): unknown {
  const i = ++n.i;
  switch (type) {
    case 'string':
      return `s${i}`;
    case 'int8':
      return 0;
    case 'int16':
    case 'int32':
    case 'uint16':
      return i;
    case 'int64':
      return BigInt(i);
    case 'bool':
      return false;
    case 'uuid':
      return 'AAAAAAAAAAAAAAAAAAAAAA';
    case 'float64':
      return 0;
    case 'bytes':
    case 'records':
      return Buffer.alloc(0);
    default:
      return 0;
  }
}

/** Every errorCode-like value in a decoded response. */
function errorCodes(x: unknown, out: number[] = []): number[] {
  if (Array.isArray(x)) x.forEach((e) => errorCodes(e, out));
  else if (x !== null && typeof x === 'object' && !Buffer.isBuffer(x)) {
    for (const [k, v] of Object.entries(x)) {
      if ((k === 'errorCode' || k === 'partitionErrorCode') && typeof v === 'number') out.push(v);
      else errorCodes(v, out);
    }
  }
  return out;
}

const REQUESTS = new Map(MESSAGE_DESCRIPTORS.filter((d) => d.type === 'request').map((d) => [d.apiKey!, d]));
const cases: [string, number, number][] = [];
for (const api of ALL_APIS) for (const v of errorResponseVersions(api.apiKey)) cases.push([api.name, api.apiKey, v]);

test('the APIs clients use most have error responses at every version', () => {
  for (const name of ['Produce', 'Fetch', 'ListOffsets', 'Metadata', 'OffsetCommit', 'OffsetFetch', 'FindCoordinator', 'JoinGroup', 'Heartbeat', 'SyncGroup', 'LeaveGroup', 'InitProducerId', 'AddPartitionsToTxn', 'EndTxn', 'WriteTxnMarkers', 'TxnOffsetCommit', 'CreateTopics', 'DeleteTopics']) {
    const api = ALL_APIS.find((a) => a.name === name)!;
    for (let v = api.minVersion; v <= api.maxVersion; v++) expect([name, v, errorResponseSupported(api.apiKey, v)]).toEqual([name, v, true]);
  }
});

test('an API whose response has per-entry errors but no builder has no error response', () => {
  // CreateAcls answers per creation and has no top-level error code.
  expect(errorResponseVersions(30)).toEqual([]);
  expect(() => errorResponse(30, 0, {}, ErrorCode.NONE)).toThrow('no error response for API key 30');
});

test.each(cases)('%s (key %i) v%i: encodes, and every entry carries the error', (_name, apiKey, v) => {
  const api = ALL_APIS.find((a) => a.apiKey === apiKey)!;
  const reqD = REQUESTS.get(apiKey)!;
  // Through the wire, so the request is exactly what the dispatcher would hand over.
  const w = new Writer();
  api.writeRequest(w, v, sample(reqD, reqD.name, v, { i: 0 }) as never);
  const request = api.readRequest(new Reader(Buffer.concat(w.finish())), v);
  const error = apiKey === 1 ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
  const res = errorResponse(apiKey, v, request, error);
  const out = new Writer();
  api.writeResponse(out, v, res as never);
  const decoded = api.readResponse(new Reader(Buffer.concat(out.finish())), v);
  const codes = errorCodes(decoded);
  expect(codes.length).toBeGreaterThan(0);
  // Fetch's top-level code stays NONE for a partition-level error; everything else carries it.
  const expected = codes.filter((c) => c !== ErrorCode.NONE);
  expect(expected.length).toBeGreaterThan(0);
  expect(new Set(expected)).toEqual(new Set([error]));
});

test('Produce: one entry per requested partition, offsets unknown', () => {
  const req = { transactionalId: null, acks: -1, timeoutMs: 1000, topicData: [{ name: 't', partitionData: [{ index: 0, records: null }, { index: 3, records: null }] }, { name: 'u', partitionData: [{ index: 1, records: null }] }] };
  expect(errorResponse(0, 9, req, ErrorCode.NOT_LEADER_OR_FOLLOWER)).toEqual({
    responses: [
      { name: 't', partitionResponses: [0, 3].map((index) => ({ index, errorCode: 6, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n })) },
      { name: 'u', partitionResponses: [{ index: 1, errorCode: 6, baseOffset: -1n, logAppendTimeMs: -1n, logStartOffset: -1n }] },
    ],
  });
});

test('Fetch: a session error is top-level with no partitions from v13, on every partition before', () => {
  const topics = [{ topic: 't', topicId: 'AAAAAAAAAAAAAAAAAAAAAA', partitions: [{ partition: 0 }] }];
  const v13 = errorResponse(1, 13, { topics }, ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  expect(v13).toMatchObject({ errorCode: ErrorCode.FETCH_SESSION_ID_NOT_FOUND, responses: [] });
  const v12 = errorResponse(1, 12, { topics }, ErrorCode.FETCH_SESSION_ID_NOT_FOUND) as { errorCode: number; responses: { partitions: { errorCode: number }[] }[] };
  expect(v12.errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  expect(v12.responses[0].partitions[0].errorCode).toBe(ErrorCode.FETCH_SESSION_ID_NOT_FOUND);
  // v12 names topics, v13 ids them: fields a version lacks are dropped.
  expect(v12.responses[0]).not.toHaveProperty('topicId');
  const nl = errorResponse(1, 13, { topics }, ErrorCode.NOT_LEADER_OR_FOLLOWER) as { errorCode: number; responses: { topic?: string; partitions: { errorCode: number }[] }[] };
  expect(nl.errorCode).toBe(ErrorCode.NONE);
  expect(nl.responses[0]).not.toHaveProperty('topic');
  expect(nl.responses[0].partitions[0].errorCode).toBe(ErrorCode.NOT_LEADER_OR_FOLLOWER);
});

test('Metadata: REBOOTSTRAP_REQUIRED is the top-level error with no topics from v13 (KIP-1102), per topic before', () => {
  const topics = [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 't' }];
  const v13 = errorResponse(3, 13, { topics }, ErrorCode.REBOOTSTRAP_REQUIRED);
  expect(v13).toMatchObject({ errorCode: ErrorCode.REBOOTSTRAP_REQUIRED, topics: [] });
  const w = new Writer();
  ALL_APIS.find((a) => a.apiKey === 3)!.writeResponse(w, 13, v13 as never);
  const decoded = ALL_APIS.find((a) => a.apiKey === 3)!.readResponse(new Reader(Buffer.concat(w.finish())), 13) as { errorCode: number };
  expect(decoded.errorCode).toBe(129);
  const v12 = errorResponse(3, 12, { topics }, ErrorCode.REBOOTSTRAP_REQUIRED) as { topics: { errorCode: number }[] };
  expect(v12).not.toHaveProperty('errorCode');
  expect(v12.topics.map((t) => t.errorCode)).toEqual([ErrorCode.REBOOTSTRAP_REQUIRED]);
  // Any other error stays per topic at v13, the top level NONE.
  const other = errorResponse(3, 13, { topics }, ErrorCode.LEADER_NOT_AVAILABLE) as { errorCode: number; topics: { errorCode: number }[] };
  expect(other.errorCode).toBe(ErrorCode.NONE);
  expect(other.topics.map((t) => t.errorCode)).toEqual([ErrorCode.LEADER_NOT_AVAILABLE]);
});
