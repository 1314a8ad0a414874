/**
 * Exact byte layouts derived by hand from the wire rules (../shared/kafka-protocol/README.md), not
 * from our encoder: classic vs compact lengths, tagged-field sections, header versions, nullable
 * structs, and the encoders' version rules on concrete messages.
 */
import {
  APIS,
  ApiKey,
  ALL_APIS,
  apiByKey,
  requestHeaderVersion,
  responseHeaderVersion,
} from './generated';
import { readApiVersionsResponse, writeApiVersionsRequest, writeApiVersionsResponse } from './generated/api-versions';
import { readMetadataRequest, writeMetadataRequest } from './generated/metadata';
import { readProduceRequest, writeProduceRequest } from './generated/produce';
import { readRequestHeader as readRequestHeaderSchema } from './generated/request-header';
import {
  CONSUMER_OFFSETS_RECORDS,
  METADATA_RECORDS,
  REMOTE_LOG_METADATA_RECORDS,
  TOPIC_RECORD_TYPE,
  consumerOffsetsRecordByKeyVersion,
  metadataRecordByType,
  readConsumerGroupMemberMetadataValue,
  readTopicRecord,
  transactionLogRecordByKeyVersion,
  writeConsumerGroupMemberMetadataValue,
  writeTopicRecord,
} from './generated/records';
import { readRequestHeader, readResponseHeader, writeRequestHeader, writeResponseHeader } from './header';
import { UnsupportedVersionError } from './primitives/codec-support';
import { DecodeError, Reader } from './primitives/reader';
import { Writer } from './primitives/writer';

const hex = (s: string): Buffer => Buffer.from(s.replace(/[\s|]/g, ''), 'hex');

function bytes(f: (w: Writer) => void): string {
  const w = new Writer(8);
  f(w);
  return w.toBuffer().toString('hex');
}

describe('headers', () => {
  test('request header v1 (ApiVersions v0): int16 key, int16 version, int32 correlation id, int16-length client id', () => {
    const b = hex('0012 | 0000 | 00000007 | 0003 6b6166');
    const h = readRequestHeader(new Reader(b));
    expect(h).toEqual({ apiKey: 18, apiVersion: 0, correlationId: 7, clientId: 'kaf', headerVersion: 1 });
    expect(bytes((w) => writeRequestHeader(w, 18, 0, 7, 'kaf'))).toBe(b.toString('hex'));
  });

  test('request header v2 (Metadata v9): client id keeps its int16 length, then a tagged-field section', () => {
    const b = hex('0003 | 0009 | 01020304 | 0003 636c69 | 00');
    const r = new Reader(b);
    expect(readRequestHeader(r)).toEqual({ apiKey: 3, apiVersion: 9, correlationId: 0x01020304, clientId: 'cli', headerVersion: 2 });
    expect(r.remaining).toBe(0);
    expect(bytes((w) => writeRequestHeader(w, 3, 9, 0x01020304, 'cli'))).toBe(b.toString('hex'));
    // The generated schema codec agrees (its ClientId has flexibleVersions "none").
    expect(readRequestHeaderSchema(new Reader(b), 2)).toEqual({ requestApiKey: 3, requestApiVersion: 9, correlationId: 0x01020304, clientId: 'cli' });
  });

  test('request header v2 with a null client id and an unknown tagged field', () => {
    const b = hex('0003 0009 00000001 ffff | 01 05 02 abcd');
    const h = readRequestHeader(new Reader(b));
    expect(h).toEqual({
      apiKey: 3,
      apiVersion: 9,
      correlationId: 1,
      clientId: null,
      headerVersion: 2,
      _unknownTaggedFields: [{ tag: 5, data: hex('abcd') }],
    });
    expect(bytes((w) => writeRequestHeader(w, 3, 9, 1, null, 2, h._unknownTaggedFields))).toBe(b.toString('hex'));
  });

  test('request header v0: ControlledShutdown v0 has no client id', () => {
    const r = new Reader(hex('0007 0000 00000009 | 00000001'));
    expect(readRequestHeader(r)).toEqual({ apiKey: 7, apiVersion: 0, correlationId: 9, clientId: '', headerVersion: 0 });
    expect(r.int32()).toBe(1); // the body's broker id
    expect(requestHeaderVersion(7, 0)).toBe(0);
    expect(requestHeaderVersion(7, 1)).toBe(1);
    expect(requestHeaderVersion(7, 3)).toBe(2);
  });

  test('ApiVersions at a version newer than ours: header v2 (flexible from v3), body left unread', () => {
    const r = new Reader(hex('0012 0063 0000002a 0001 63 | 00 | 0a6b61666b612d6a617661'));
    const h = readRequestHeader(r);
    expect(h).toEqual({ apiKey: 18, apiVersion: 99, correlationId: 42, clientId: 'c', headerVersion: 2 });
    expect(r.remaining).toBe(11);
  });

  test('unknown API key: at least the v1 header is read', () => {
    const r = new Reader(hex('1234 0005 00000003 0002 6869 | ff'));
    expect(readRequestHeader(r)).toEqual({ apiKey: 0x1234, apiVersion: 5, correlationId: 3, clientId: 'hi', headerVersion: 1 });
    expect(r.remaining).toBe(1);
  });

  test('short header throws DecodeError', () => {
    expect(() => readRequestHeader(new Reader(hex('0003 0009 0000')))).toThrow(DecodeError);
    expect(() => readRequestHeader(new Reader(hex('0003 0001 00000001 0005 6162')))).toThrow(DecodeError);
  });

  test('response headers: v0 = correlation id, v1 adds an empty tagged-field section', () => {
    expect(bytes((w) => writeResponseHeader(w, 0, 42))).toBe('0000002a');
    expect(bytes((w) => writeResponseHeader(w, 1, 42))).toBe('0000002a00');
    expect(readResponseHeader(new Reader(hex('0000002a')), 0)).toEqual({ correlationId: 42 });
    expect(readResponseHeader(new Reader(hex('0000002a 01 0001 ff')), 1)).toEqual({
      correlationId: 42,
      _unknownTaggedFields: [{ tag: 0, data: hex('ff') }],
    });
  });

  test('header version rules', () => {
    expect(requestHeaderVersion(ApiKey.Produce, 8)).toBe(1);
    expect(requestHeaderVersion(ApiKey.Produce, 9)).toBe(2);
    expect(responseHeaderVersion(ApiKey.Produce, 8)).toBe(0);
    expect(responseHeaderVersion(ApiKey.Produce, 9)).toBe(1);
    expect(requestHeaderVersion(ApiKey.ApiVersions, 3)).toBe(2);
    for (let v = 0; v <= 4; v++) expect(responseHeaderVersion(ApiKey.ApiVersions, v)).toBe(0);
    expect(requestHeaderVersion(ApiKey.SaslHandshake, 1)).toBe(1); // never flexible
    expect(responseHeaderVersion(ApiKey.SaslHandshake, 1)).toBe(0);
  });
});

describe('registry', () => {
  test('88 APIs, looked up by key, with versions from the schemas', () => {
    expect(ALL_APIS).toHaveLength(88);
    expect(ALL_APIS.map((a) => a.apiKey)).toEqual([...ALL_APIS.map((a) => a.apiKey)].sort((a, b) => a - b));
    const produce = apiByKey(0)!;
    expect(produce).toBe(APIS.Produce);
    expect(produce).toMatchObject({
      apiKey: 0,
      name: 'Produce',
      minVersion: 0,
      maxVersion: 12, // v12 from protocol/codegen/schema-updates.ts (Kafka 4.0, KIP-890)
      firstFlexibleVersion: 9,
      latestVersionUnstable: false,
      deprecatedVersions: { min: 0, max: 6 },
      listeners: ['zkBroker', 'broker'],
    });
    expect(APIS.SaslHandshake.firstFlexibleVersion).toBe(Infinity);
    expect(APIS.EndTxn.latestVersionUnstable).toBe(false); // stable since Kafka 4.0 (schema-updates.ts)
    expect(APIS.ShareGroupHeartbeat.latestVersionUnstable).toBe(true);
    expect(apiByKey(-1)).toBeUndefined();
    expect(apiByKey(9999)).toBeUndefined();
    for (const a of ALL_APIS) expect(ApiKey[a.name as keyof typeof ApiKey]).toBe(a.apiKey);
  });

  test('record registries', () => {
    expect(TOPIC_RECORD_TYPE).toBe(2);
    expect(metadataRecordByType(2)!.name).toBe('TopicRecord');
    expect(METADATA_RECORDS.length).toBe(25);
    expect(REMOTE_LOG_METADATA_RECORDS.map((r) => r.type)).toEqual([0, 1, 2, 3]);
    expect(consumerOffsetsRecordByKeyVersion(0)!.value.name).toBe('OffsetCommitValue');
    expect(consumerOffsetsRecordByKeyVersion(1)!.key.name).toBe('OffsetCommitKey');
    expect(consumerOffsetsRecordByKeyVersion(2)!.value.name).toBe('GroupMetadataValue');
    expect(consumerOffsetsRecordByKeyVersion(3)!.key.name).toBe('ConsumerGroupMetadataKey');
    expect(CONSUMER_OFFSETS_RECORDS.map((r) => r.recordType)).toEqual([...Array(16).keys()]);
    expect(transactionLogRecordByKeyVersion(0)!.value.name).toBe('TransactionLogValue');
  });
});

describe('ApiVersions', () => {
  test('v0 request is empty; v3 request has compact strings and a tagged section', () => {
    expect(bytes((w) => writeApiVersionsRequest(w, 0, {}))).toBe('');
    expect(bytes((w) => writeApiVersionsRequest(w, 3, { clientSoftwareName: 'krill', clientSoftwareVersion: '0.1' }))).toBe(
      hex('06 6b72696c6c | 04 302e31 | 00').toString('hex'),
    );
    // Ignorable: dropped below v3.
    expect(bytes((w) => writeApiVersionsRequest(w, 2, { clientSoftwareName: 'krill' }))).toBe('');
  });

  test('v0 response: int16 error, int32 count, (int16, int16, int16) each', () => {
    const b = hex('0000 | 00000002 | 0000 0000 000b | 0012 0000 0004');
    const m = { errorCode: 0, apiKeys: [{ apiKey: 0, minVersion: 0, maxVersion: 11 }, { apiKey: 18, minVersion: 0, maxVersion: 4 }] };
    expect(bytes((w) => writeApiVersionsResponse(w, 0, m))).toBe(b.toString('hex'));
    expect(readApiVersionsResponse(new Reader(b), 0)).toEqual({
      ...m,
      throttleTimeMs: 0,
      supportedFeatures: [],
      finalizedFeaturesEpoch: -1n,
      finalizedFeatures: [],
      zkMigrationReady: false,
    });
    // The UNSUPPORTED_VERSION answer (KIP-511) is a v0 body too.
    expect(bytes((w) => writeApiVersionsResponse(w, 0, { errorCode: 35, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }] }))).toBe(
      '0023000000010012' + '00000004',
    );
  });

  test('v3 response: compact array, element tagged sections, known tagged fields in tag order', () => {
    const b = hex(
      '0000 | 02 | 0012 0000 0004 00 | 00000000 |' +
        ' 03 |' + // three tagged fields
        ' 00 08 | 02 0278 0001 0002 00 |' + // tag 0 supportedFeatures [{name 'x', 1, 2}], 8 bytes
        ' 01 08 | 0000000000000005 |' + // tag 1 finalizedFeaturesEpoch = 5
        ' 03 01 | 01', // tag 3 zkMigrationReady = true
    );
    const m = {
      errorCode: 0,
      apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 4 }],
      throttleTimeMs: 0,
      supportedFeatures: [{ name: 'x', minVersion: 1, maxVersion: 2 }],
      finalizedFeaturesEpoch: 5n,
      finalizedFeatures: [],
      zkMigrationReady: true,
    };
    expect(bytes((w) => writeApiVersionsResponse(w, 3, m))).toBe(b.toString('hex'));
    expect(readApiVersionsResponse(new Reader(b), 3)).toEqual(m);
    // Defaults are not written: an empty tagged section.
    expect(bytes((w) => writeApiVersionsResponse(w, 3, { apiKeys: [] }))).toBe('0000' + '01' + '00000000' + '00');
  });
});

describe('Metadata', () => {
  test('v9 request (flexible): compact array/strings, bools, tagged sections, unknown tag kept', () => {
    const b = hex('02 | 04 666f6f 00 | 01 | 00 | 01 | 01 05 02 abcd');
    const m = readMetadataRequest(new Reader(b), 9);
    expect(m).toEqual({
      topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAA', name: 'foo' }],
      allowAutoTopicCreation: true,
      includeClusterAuthorizedOperations: false,
      includeTopicAuthorizedOperations: true,
      _unknownTaggedFields: [{ tag: 5, data: hex('abcd') }],
    });
    expect(bytes((w) => writeMetadataRequest(w, 9, m))).toBe(b.toString('hex'));
  });

  test('null topics: compact 0 in v9, int32 -1 in v1; not nullable in v0', () => {
    expect(readMetadataRequest(new Reader(hex('00 01 00 00 00')), 9).topics).toBeNull();
    expect(bytes((w) => writeMetadataRequest(w, 9, { topics: null }))).toBe('0001000000');
    expect(readMetadataRequest(new Reader(hex('ffffffff')), 1).topics).toBeNull();
    expect(() => readMetadataRequest(new Reader(hex('ffffffff')), 0)).toThrow(DecodeError);
    expect(() => writeMetadataRequest(new Writer(), 0, { topics: null })).toThrow(/not nullable/);
    // Empty is not null.
    expect(bytes((w) => writeMetadataRequest(w, 1, { topics: [] }))).toBe('00000000');
  });

  test('v10 topic id; a non-ignorable field at a version without it throws', () => {
    expect(bytes((w) => writeMetadataRequest(w, 10, { topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', name: null }] }))).toBe(
      hex('02 | 00000000000000000000000000000001 00 00 | 01 00 00 00').toString('hex'),
    );
    // topicId is ignorable: dropped at v9. allowAutoTopicCreation (4+, not ignorable) at v3: error.
    expect(bytes((w) => writeMetadataRequest(w, 9, { topics: [{ topicId: 'AAAAAAAAAAAAAAAAAAAAAQ', name: 'a' }] }))).toBe(
      hex('02 | 02 61 00 | 01 00 00 00').toString('hex'),
    );
    expect(() => writeMetadataRequest(new Writer(), 3, { allowAutoTopicCreation: false })).toThrow(UnsupportedVersionError);
    expect(() => writeMetadataRequest(new Writer(), 3, { allowAutoTopicCreation: false })).toThrow(/allowAutoTopicCreation.*version 3/);
    expect(() => writeMetadataRequest(new Writer(), 3, { allowAutoTopicCreation: true })).not.toThrow();
    // Field versions 8-10: gone again at 11.
    expect(() => writeMetadataRequest(new Writer(), 11, { includeClusterAuthorizedOperations: true })).toThrow(UnsupportedVersionError);
  });

  test('a version outside validVersions throws', () => {
    expect(() => writeMetadataRequest(new Writer(), 14, {})).toThrow(UnsupportedVersionError);
    expect(() => readMetadataRequest(new Reader(Buffer.alloc(8)), -1)).toThrow(UnsupportedVersionError);
  });
});

describe('Produce', () => {
  test('v3 request: nullable transactional id, int32-length records', () => {
    const b = hex('ffff | ffff | 00007530 | 00000001 | 0001 74 | 00000001 | 00000000 | 00000003 010203');
    const m = readProduceRequest(new Reader(b), 3);
    expect(m).toEqual({
      transactionalId: null,
      acks: -1,
      timeoutMs: 30000,
      topicData: [{ name: 't', partitionData: [{ index: 0, records: hex('010203') }] }],
    });
    expect(bytes((w) => writeProduceRequest(w, 3, m))).toBe(b.toString('hex'));
  });

  test('v9 request: compact records; null records', () => {
    const b = hex('00 | 0001 | 00000064 | 02 | 02 74 | 03 | 00000000 04 010203 00 | 00000001 00 00 | 00 | 00');
    const m = readProduceRequest(new Reader(b), 9);
    expect(m.topicData[0].partitionData).toEqual([
      { index: 0, records: hex('010203') },
      { index: 1, records: null },
    ]);
    expect(bytes((w) => writeProduceRequest(w, 9, m))).toBe(b.toString('hex'));
  });

  test('transactionalId at v2 throws; large record sets are not copied', () => {
    expect(() => writeProduceRequest(new Writer(), 2, { transactionalId: 'tx' })).toThrow(UnsupportedVersionError);
    const big = Buffer.alloc(64 * 1024, 7);
    const w = new Writer();
    writeProduceRequest(w, 3, { topicData: [{ name: 't', partitionData: [{ index: 0, records: big }] }] });
    expect(w.finish()).toContain(big);
  });
});

describe('records', () => {
  test('TopicRecord v0 (flexible from 0): compact string, uuid, tagged section', () => {
    const b = hex('04 666f6f | 00000000000000000000000000000002 | 00');
    const m = readTopicRecord(new Reader(b), 0);
    expect(m).toEqual({ name: 'foo', topicId: 'AAAAAAAAAAAAAAAAAAAAAg' });
    expect(bytes((w) => writeTopicRecord(w, 0, m))).toBe(b.toString('hex'));
  });

  test('nullable tagged struct: marker byte inside the tagged size', () => {
    const b = hex(
      '00 | 00 | 02 63 | 02 68 | 02 02 74 | 00 | 00000005 | 00 |' + // regular fields
        ' 01 | 00 0c | 01 0000000a 02 0270 02aa 00 00', // tag 0: marker 1, sessionTimeoutMs 10, [{name 'p', metadata aa}]
    );
    const m = readConsumerGroupMemberMetadataValue(new Reader(b), 0);
    expect(m).toEqual({
      instanceId: null,
      rackId: null,
      clientId: 'c',
      clientHost: 'h',
      subscribedTopicNames: ['t'],
      subscribedTopicRegex: null,
      rebalanceTimeoutMs: 5,
      serverAssignor: null,
      classicMemberMetadata: { sessionTimeoutMs: 10, supportedProtocols: [{ name: 'p', metadata: hex('aa') }] },
    });
    expect(bytes((w) => writeConsumerGroupMemberMetadataValue(w, 0, m))).toBe(b.toString('hex'));
    // null (the default) is not written at all
    expect(bytes((w) => writeConsumerGroupMemberMetadataValue(w, 0, { ...m, classicMemberMetadata: null }))).toBe(
      b.subarray(0, 15).toString('hex') + '00',
    );
  });

  test('a known tagged field whose size does not match its content is rejected', () => {
    // tag 0 claims 13 bytes but the struct inside is 12
    const b = hex('00 00 0263 0268 020274 00 00000005 00 | 01 00 0d 01 0000000a 02 0270 02aa 00 00 ff');
    expect(() => readConsumerGroupMemberMetadataValue(new Reader(b), 0)).toThrow(DecodeError);
  });

  test('hostile array counts fail fast', () => {
    expect(() => readMetadataRequest(new Reader(hex('7fffffff 00')), 1)).toThrow(DecodeError);
    expect(() => readMetadataRequest(new Reader(hex('ffffffff0f 00')), 9)).toThrow(DecodeError);
  });
});
