/**
 * krill's own Kafka client (network-client.ts) against a scripted fake broker: ApiVersions negotiation and
 * KIP-511 retry, framing, timeouts, connection loss, correlation ids, size limits, undecodable bodies, acks=0.
 */
import * as net from 'node:net';
import { APIS, ApiKey, ALL_APIS } from '../protocol/generated';
import { writeResponseHeader } from '../protocol/header';
import { Writer } from '../protocol/primitives/writer';
import { ErrorCode } from '../protocol/errors';
import {
  BrokerConnection,
  ClientError,
  ConnectionError,
  ProtocolError,
  RequestTimeoutError,
  UnsupportedVersionError,
  connect,
} from './network-client';

// ---- a scriptable fake broker --------------------------------------------------------------

interface FakeRequest {
  apiKey: number;
  apiVersion: number;
  correlationId: number;
  socket: net.Socket;
}

type FakeHandler = (req: FakeRequest, fake: FakeBroker) => void;

const DEFAULT_RANGES: { apiKey: number; minVersion: number; maxVersion: number }[] = [
  { apiKey: ApiKey.Produce, minVersion: 3, maxVersion: 11 },
  { apiKey: ApiKey.Fetch, minVersion: 4, maxVersion: 17 },
  { apiKey: ApiKey.Metadata, minVersion: 0, maxVersion: 12 },
  { apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: 4 },
];

class FakeBroker {
  readonly requests: FakeRequest[] = [];
  private readonly sockets = new Set<net.Socket>();
  private constructor(
    readonly server: net.Server,
    readonly port: number,
  ) {}

  static async start(handler: FakeHandler): Promise<FakeBroker> {
    const server = net.createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const fake = new FakeBroker(server, (server.address() as net.AddressInfo).port);
    server.on('connection', (socket) => {
      fake.sockets.add(socket);
      socket.on('close', () => fake.sockets.delete(socket));
      socket.on('error', () => undefined);
      let buf = Buffer.alloc(0);
      socket.on('data', (chunk) => {
        buf = Buffer.concat([buf, chunk]);
        while (buf.length >= 4 && buf.length >= 4 + buf.readInt32BE(0)) {
          const frame = buf.subarray(4, 4 + buf.readInt32BE(0));
          buf = buf.subarray(4 + frame.length);
          const req = { apiKey: frame.readInt16BE(0), apiVersion: frame.readInt16BE(2), correlationId: frame.readInt32BE(4), socket };
          fake.requests.push(req);
          handler(req, fake);
        }
      });
    });
    return fake;
  }

  /** A response frame for `req` with a body encoded by the generated codec (or raw bytes). */
  static frame(req: FakeRequest, body: unknown, opts: { version?: number; correlationId?: number } = {}): Buffer {
    const w = new Writer();
    const size = w.reserveInt32();
    const api = ALL_APIS.find((a) => a.apiKey === req.apiKey)!;
    const v = opts.version ?? req.apiVersion;
    const flexible = req.apiKey !== ApiKey.ApiVersions && v >= api.firstFlexibleVersion;
    writeResponseHeader(w, flexible ? 1 : 0, opts.correlationId ?? req.correlationId);
    if (Buffer.isBuffer(body)) w.raw(body);
    else api.writeResponse(w, v, body as never);
    w.patchInt32(size, w.length - 4);
    return w.toBuffer();
  }

  static apiVersions(req: FakeRequest, apiKeys = DEFAULT_RANGES): Buffer {
    return FakeBroker.frame(req, { errorCode: 0, apiKeys });
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

/** Answers ApiVersions with DEFAULT_RANGES, then hands other requests to `rest`. */
function negotiating(rest: FakeHandler, ranges = DEFAULT_RANGES): FakeHandler {
  return (req, fake) => {
    if (req.apiKey === ApiKey.ApiVersions) req.socket.write(FakeBroker.apiVersions(req, ranges));
    else rest(req, fake);
  };
}

const EMPTY_METADATA = { brokers: [], clusterId: 'c', controllerId: 1, topics: [] };

describe('BrokerConnection against a scripted broker', () => {
  let fake: FakeBroker | undefined;
  let conn: BrokerConnection | undefined;
  afterEach(async () => {
    if (conn) await conn.close();
    if (fake) await fake.close();
    conn = undefined;
    fake = undefined;
  });

  test('negotiates ApiVersions and picks min(our newest, broker newest) per API', async () => {
    const ranges = [
      { apiKey: ApiKey.ApiVersions, minVersion: 0, maxVersion: 3 },
      { apiKey: ApiKey.Metadata, minVersion: 0, maxVersion: 5 },
      { apiKey: ApiKey.Fetch, minVersion: 4, maxVersion: 99 },
      { apiKey: ApiKey.Produce, minVersion: 3, maxVersion: 11 },
      { apiKey: ApiKey.CreateTopics, minVersion: 50, maxVersion: 60 },
    ];
    fake = await FakeBroker.start(negotiating(() => undefined, ranges));
    conn = await connect('127.0.0.1', fake.port, { maxVersions: { Produce: 7 } });
    expect(fake.requests[0]).toMatchObject({ apiKey: ApiKey.ApiVersions, apiVersion: APIS.ApiVersions.maxVersion });
    expect(conn.versionFor('Metadata')).toBe(5);
    expect(conn.versionFor('Fetch')).toBe(APIS.Fetch.maxVersion);
    expect(conn.versionFor(ApiKey.ApiVersions)).toBe(3);
    expect(conn.versionFor('Produce')).toBe(7); // capped by maxVersions
    expect(() => conn!.versionFor('CreateTopics')).toThrow(UnsupportedVersionError);
    expect(() => conn!.versionFor('FindCoordinator')).toThrow(UnsupportedVersionError);
    await expect(conn.send('FindCoordinator', undefined, { key: 'g' })).rejects.toThrow(UnsupportedVersionError);
  });

  test('retries ApiVersions at the broker version after an UNSUPPORTED_VERSION v0 answer (KIP-511)', async () => {
    fake = await FakeBroker.start((req) => {
      if (req.apiKey !== ApiKey.ApiVersions) return;
      if (req.apiVersion > 2) {
        const v0 = FakeBroker.frame(req, { errorCode: ErrorCode.UNSUPPORTED_VERSION, apiKeys: [{ apiKey: 18, minVersion: 0, maxVersion: 2 }] }, { version: 0 });
        req.socket.write(v0);
      } else {
        req.socket.write(FakeBroker.apiVersions(req, [{ apiKey: 18, minVersion: 0, maxVersion: 2 }, { apiKey: 3, minVersion: 0, maxVersion: 9 }]));
      }
    });
    conn = await connect('127.0.0.1', fake.port);
    expect(fake.requests.map((r) => r.apiVersion)).toEqual([APIS.ApiVersions.maxVersion, 2]);
    expect(conn.versionFor('Metadata')).toBe(9);
  });

  test('reassembles a response delivered one byte at a time, and several responses in one chunk', async () => {
    const held: Buffer[] = [];
    fake = await FakeBroker.start(
      negotiating((req) => {
        const frame = FakeBroker.frame(req, { ...EMPTY_METADATA, clusterId: `c${req.correlationId}` });
        if (held.length === 0 && fake!.requests.length === 2) {
          for (const byte of frame) req.socket.write(Buffer.from([byte]));
          return;
        }
        held.push(frame);
        if (held.length === 3) req.socket.write(Buffer.concat(held));
      }),
    );
    conn = await connect('127.0.0.1', fake.port);
    const first = await conn.send('Metadata', 1, { topics: null });
    expect(first.controllerId).toBe(1);
    const [a, b, c] = await Promise.all([1, 2, 3].map(() => conn!.send('Metadata', 2, { topics: null })));
    expect([a.clusterId, b.clusterId, c.clusterId]).toEqual(['c3', 'c4', 'c5']);
  });

  test('a request timeout fails that request, closes the connection, and later sends fail at once', async () => {
    fake = await FakeBroker.start(negotiating(() => undefined));
    conn = await connect('127.0.0.1', fake.port, { requestTimeoutMs: 150 });
    const t0 = Date.now();
    const other = conn.send('Metadata', 1, { topics: null }, { timeoutMs: 10_000 });
    await expect(conn.send('Metadata', 1, { topics: null })).rejects.toThrow(RequestTimeoutError);
    expect(Date.now() - t0).toBeLessThan(5_000);
    await expect(other).rejects.toThrow(ConnectionError);
    expect(conn.isClosed).toBe(true);
    await expect(conn.send('Metadata', 1, { topics: null })).rejects.toThrow(ConnectionError);
  });

  test('connect fails within its timeout when ApiVersions is never answered', async () => {
    fake = await FakeBroker.start(() => undefined);
    const t0 = Date.now();
    await expect(connect('127.0.0.1', fake.port, { timeoutMs: 200 })).rejects.toThrow(ClientError);
    expect(Date.now() - t0).toBeLessThan(5_000);
  });

  test('a refused connection is a ConnectionError', async () => {
    const s = net.createServer();
    await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
    const port = (s.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => s.close(() => resolve()));
    await expect(connect('127.0.0.1', port, { timeoutMs: 2_000 })).rejects.toThrow(ConnectionError);
  });

  test('the broker closing the connection fails every pending request', async () => {
    fake = await FakeBroker.start(negotiating((req) => req.socket.destroy()));
    conn = await connect('127.0.0.1', fake.port);
    const results = await Promise.allSettled([1, 2, 3].map(() => conn!.send('Metadata', 1, { topics: null })));
    for (const r of results) {
      expect(r.status).toBe('rejected');
      expect((r as PromiseRejectedResult).reason).toBeInstanceOf(ConnectionError);
    }
    await conn.closed;
    expect(conn.isClosed).toBe(true);
  });

  test('a response out of order (wrong correlation id) fails everything with ProtocolError', async () => {
    fake = await FakeBroker.start(negotiating((req) => req.socket.write(FakeBroker.frame(req, EMPTY_METADATA, { correlationId: req.correlationId + 1 }))));
    conn = await connect('127.0.0.1', fake.port);
    const [a, b] = await Promise.allSettled([conn.send('Metadata', 1, { topics: null }), conn.send('Metadata', 1, { topics: null })]);
    expect((a as PromiseRejectedResult).reason).toBeInstanceOf(ProtocolError);
    expect((b as PromiseRejectedResult).reason).toBeInstanceOf(ProtocolError);
    expect(conn.isClosed).toBe(true);
  });

  test('a response frame above maxResponseBytes or with a negative size is a ProtocolError', async () => {
    for (const size of [1_000_000, -5]) {
      fake = await FakeBroker.start(
        negotiating((req) => {
          const b = Buffer.alloc(8);
          b.writeInt32BE(size, 0);
          b.writeInt32BE(req.correlationId, 4);
          req.socket.write(b);
        }),
      );
      conn = await connect('127.0.0.1', fake.port, { maxResponseBytes: 1024 });
      await expect(conn.send('Metadata', 1, { topics: null })).rejects.toThrow(ProtocolError);
      expect(conn.isClosed).toBe(true);
      await conn.close();
      await fake.close();
    }
    conn = undefined;
    fake = undefined;
  });

  test('an undecodable body (short, or with bytes left over) fails only that request', async () => {
    fake = await FakeBroker.start(
      negotiating((req) => {
        const n = fake!.requests.length;
        const full = FakeBroker.frame(req, EMPTY_METADATA);
        if (n === 2) {
          // Truncated body, frame size adjusted so that the framing stays intact.
          const cut = full.subarray(0, full.length - 3);
          cut.writeInt32BE(cut.length - 4, 0);
          req.socket.write(cut);
        } else if (n === 3) {
          const longer = Buffer.concat([full, Buffer.from([1, 2])]);
          longer.writeInt32BE(longer.length - 4, 0);
          req.socket.write(longer);
        } else {
          req.socket.write(full);
        }
      }),
    );
    conn = await connect('127.0.0.1', fake.port);
    await expect(conn.send('Metadata', 1, { topics: null })).rejects.toThrow(ProtocolError);
    await expect(conn.send('Metadata', 1, { topics: null })).rejects.toThrow(/bytes left/);
    await expect(conn.send('Metadata', 1, { topics: null })).resolves.toMatchObject({ controllerId: 1 });
    expect(conn.isClosed).toBe(false);
  });

  test('close() fails pending requests, is idempotent, and later sends are rejected', async () => {
    fake = await FakeBroker.start(negotiating(() => undefined));
    conn = await connect('127.0.0.1', fake.port);
    const pending = expect(conn.send('Metadata', 1, { topics: null })).rejects.toThrow(ConnectionError);
    await conn.close();
    await pending;
    await conn.close();
    await expect(conn.send('Metadata', 1, { topics: null })).rejects.toThrow(ConnectionError);
    await expect(conn.sendNoResponse('Produce', 3, { acks: 0, topicData: [] })).rejects.toThrow(ConnectionError);
  });

  test('acks=0 produce must go through sendNoResponse, and only it', async () => {
    fake = await FakeBroker.start(negotiating(() => undefined));
    conn = await connect('127.0.0.1', fake.port);
    await expect(conn.send('Produce', undefined, { acks: 0, topicData: [] })).rejects.toThrow(/sendNoResponse/);
    await expect(conn.sendNoResponse('Produce', undefined, { acks: 1, topicData: [] })).rejects.toThrow(TypeError);
    await expect(conn.sendNoResponse('Metadata', undefined, {})).rejects.toThrow(TypeError);
    await conn.sendNoResponse('Produce', undefined, { acks: 0, timeoutMs: 100, topicData: [] });
    expect(conn.pendingRequests).toBe(0);
  });
});
