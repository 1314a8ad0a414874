/**
 * Connection limits over the wire, each against a broker configured for it: max.connections.per.ip
 * and its overrides (the extra connections are closed at once, the allowed ones are served),
 * max.connections and listener.name.<l>.max.connections (an extra connection waits unread until
 * another closes, then is served), max.connection.creation.rate (accepting slows to the rate),
 * connections.max.idle.ms (an idle connection is closed, a busy one is not), queued.max.requests
 * (with every slot taken by a request in progress, nothing more is read until one finishes) and
 * queued.max.request.bytes (a frame that does not fit the budget waits for it).
 */
import { ApiKey } from '../../protocol/generated';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { RawSocket, requestFrame } from '../helpers/raw-socket';

const brokers: TestBroker[] = [];
const sockets: RawSocket[] = [];

afterEach(async () => {
  for (const s of sockets.splice(0)) s.destroy();
  for (const b of brokers.splice(0)) await b.close();
});

async function broker(config: Record<string, string | number>): Promise<TestBroker> {
  const b = await startTestBroker('embedded', { config });
  brokers.push(b);
  return b;
}

async function open(b: TestBroker): Promise<RawSocket> {
  const s = await RawSocket.connect(b.host, b.port);
  sockets.push(s);
  return s;
}

let corr = 0;
function apiVersions(): Buffer {
  return requestFrame(ApiKey.ApiVersions, 3, ++corr, { clientSoftwareName: 'limits', clientSoftwareVersion: '1' });
}

/** Sends ApiVersions; 'answered' or 'closed' by the broker, or 'silent' when neither happens within `ms`. */
async function probe(s: RawSocket, ms = 2000): Promise<'answered' | 'closed' | 'silent'> {
  await s.write(apiVersions()).catch(() => undefined);
  try {
    await s.nextFrame(ms);
    return 'answered';
  } catch (e) {
    if (s.closed) return 'closed';
    if (/timed out/.test((e as Error).message)) return 'silent';
    throw e;
  }
}

describe('max.connections.per.ip', () => {
  test('20 connections from one address with a limit of 5: 5 are served, 15 are closed', async () => {
    const b = await broker({ 'max.connections.per.ip': 5 });
    const conns = [];
    for (let i = 0; i < 20; i++) conns.push(await open(b));
    const results = await Promise.all(conns.map((c) => probe(c)));
    expect(results.filter((r) => r === 'answered')).toHaveLength(5);
    expect(results.filter((r) => r === 'closed')).toHaveLength(15);
    // Closing one frees a place for a new connection.
    conns[results.indexOf('answered')].destroy();
    let served = false;
    for (let i = 0; i < 50 && !served; i++) served = (await probe(await open(b))) === 'answered';
    expect(served).toBe(true);
  });

  test('an override for the address wins over the default (0 with an override is allowed)', async () => {
    const b = await broker({ 'max.connections.per.ip': 0, 'max.connections.per.ip.overrides': '127.0.0.1:2,localhost:2' });
    const conns = [await open(b), await open(b), await open(b)];
    const results = await Promise.all(conns.map((c) => probe(c)));
    expect(results.sort()).toEqual(['answered', 'answered', 'closed']);
  });

  test('max.connections.per.ip=0 without overrides, and malformed overrides, stop startup', async () => {
    await expect(startTestBroker('embedded', { config: { 'max.connections.per.ip': 0 } })).rejects.toThrow(
      /max.connections.per.ip can be set to zero only if max.connections.per.ip.overrides property is set/,
    );
    await expect(startTestBroker('embedded', { config: { 'max.connections.per.ip.overrides': '127.0.0.1' } })).rejects.toThrow(
      /max.connections.per.ip.overrides/,
    );
    await expect(startTestBroker('embedded', { config: { 'max.connections.per.ip.overrides': 'bad host!:3' } })).rejects.toThrow(
      /contains invalid addresses : bad host!/,
    );
  });
});

describe('max.connections', () => {
  test('the connection past the limit waits unread, and is served once another closes', async () => {
    const b = await broker({ 'max.connections': 3 });
    const first = [await open(b), await open(b), await open(b)];
    expect(await Promise.all(first.map((c) => probe(c)))).toEqual(['answered', 'answered', 'answered']);
    const fourth = await open(b);
    const answered = fourth.nextFrame(10_000);
    await fourth.write(apiVersions());
    expect(await Promise.race([answered.then(() => 'answered'), new Promise((r) => setTimeout(() => r('silent'), 500))])).toBe('silent');
    first[0].destroy();
    await answered; // served as soon as a slot frees
    expect(fourth.closed).toBe(false);
  });

  test('listener.name.<listener>.max.connections limits that listener', async () => {
    const b = await broker({ 'listener.name.plaintext.max.connections': 2 });
    const a = [await open(b), await open(b)];
    expect(await Promise.all(a.map((c) => probe(c)))).toEqual(['answered', 'answered']);
    expect(await probe(await open(b), 500)).toBe('silent');
  });
});

describe('max.connection.creation.rate', () => {
  test('accepting slows to the rate, and every connection is served in the end', async () => {
    // One-second samples, two of them: the rate is measured over at least one second.
    const b = await broker({ 'max.connection.creation.rate': 5, 'quota.window.num': 2, 'quota.window.size.seconds': 1 });
    const t0 = Date.now();
    const conns = [];
    for (let i = 0; i < 12; i++) conns.push(await open(b));
    const results = await Promise.all(conns.map((c) => probe(c, 10_000)));
    expect(results.every((r) => r === 'answered')).toBe(true);
    // 12 connections at 5 per second cannot all be taken within the first second.
    expect(Date.now() - t0).toBeGreaterThanOrEqual(1000);
  });
});

describe('connections.max.idle.ms', () => {
  test('an idle connection is closed; one that keeps talking is not', async () => {
    const b = await broker({ 'connections.max.idle.ms': 600, 'connection.failed.authentication.delay.ms': 100 });
    const idle = await open(b);
    const busy = await open(b);
    const closed = idle.waitForClose(5000);
    const t0 = Date.now();
    while (Date.now() - t0 < 1500) expect(await probe(busy)).toBe('answered');
    await closed;
    expect(busy.closed).toBe(false);
  });
});

describe('queued.max.requests and queued.max.request.bytes', () => {
  test('with every request slot taken, a new request is not read until one finishes', async () => {
    const b = await broker({ 'queued.max.requests': 2 });
    // Hold Metadata requests in the dispatcher until released.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    b.embedded!.server.dispatcher.interceptors.push({
      intercept: async (ctx) => {
        if (ctx.apiKey === ApiKey.Metadata) await gate;
        return undefined;
      },
    });
    const holders = [await open(b), await open(b)];
    const held = holders.map((h) => h.nextFrame(10_000));
    for (const h of holders) await h.write(requestFrame(ApiKey.Metadata, 1, ++corr, { topics: [] }));
    const third = await open(b);
    const answered = third.nextFrame(10_000);
    await third.write(apiVersions());
    expect(await Promise.race([answered.then(() => 'answered'), new Promise((r) => setTimeout(() => r('silent'), 500))])).toBe('silent');
    release();
    await Promise.all(held);
    await answered;
  });

  test('a frame that does not fit the request-bytes budget waits for it', async () => {
    const max = 1024 * 1024;
    const b = await broker({ 'socket.request.max.bytes': max, 'queued.max.request.bytes': max });
    const big = await open(b);
    // A frame announcing the whole budget, only partly sent: its size is reserved at once.
    const head = Buffer.alloc(4 + 1000);
    head.writeInt32BE(max, 0);
    await big.write(head);
    const small = await open(b);
    const answered = small.nextFrame(10_000);
    await small.write(apiVersions());
    expect(await Promise.race([answered.then(() => 'answered'), new Promise((r) => setTimeout(() => r('silent'), 500))])).toBe('silent');
    big.destroy(); // the budget comes back with the connection
    await answered;
  });

  test('queued.max.request.bytes below socket.request.max.bytes stops startup', async () => {
    await expect(startTestBroker('embedded', { config: { 'queued.max.request.bytes': 1000 } })).rejects.toThrow(
      /queued.max.request.bytes must be larger or equal to socket.request.max.bytes/,
    );
  });
});
