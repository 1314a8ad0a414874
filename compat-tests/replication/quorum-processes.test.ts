/**
 * The chaos harness's link proxy (quorum-processes.ts) against an echo server: 'open' forwards
 * both ways; 'drop' discards every byte (new connections too) and resets the connections that lost
 * bytes at the heal; 'hold' delivers what it kept, in order, at the heal; a close at one end while
 * the link is cut reaches the other end only at the heal. Events are awaited, never slept on,
 * except where the point is that nothing arrives (a bounded 200 ms window).
 */
import * as net from 'node:net';
import { LinkProxy } from './quorum-processes';

let echo: net.Server;
let echoPort: number;
const serverSockets = new Set<net.Socket>();
let proxy: LinkProxy;

beforeEach(async () => {
  echo = net.createServer((s) => {
    serverSockets.add(s);
    s.on('data', (d) => s.write(d));
    s.on('error', () => undefined);
    s.on('close', () => serverSockets.delete(s));
  });
  await new Promise<void>((r) => echo.listen(0, '127.0.0.1', () => r()));
  echoPort = (echo.address() as net.AddressInfo).port;
  proxy = new LinkProxy(1, 2, echoPort);
  await proxy.listen();
});
afterEach(async () => {
  await proxy.close();
  for (const s of serverSockets) s.destroy();
  await new Promise<void>((r) => echo.close(() => r()));
});

async function dial(): Promise<{ s: net.Socket; got: () => string; closed: Promise<void>; next: (n: number) => Promise<string> }> {
  const s = net.connect(proxy.port, '127.0.0.1');
  await new Promise<void>((r, j) => s.once('connect', () => r()).once('error', j));
  let buf = '';
  const waiters: (() => void)[] = [];
  s.on('data', (d) => {
    buf += d.toString();
    for (const w of waiters.splice(0)) w();
  });
  s.on('error', () => undefined);
  const closed = new Promise<void>((r) => s.once('close', () => r()));
  const next = async (n: number): Promise<string> => {
    while (buf.length < n) await new Promise<void>((r) => waiters.push(r));
    return buf;
  };
  return { s, got: () => buf, closed, next };
}

const quiet = (ms: number) => new Promise((r) => setTimeout(r, ms));

test('open forwards both ways', async () => {
  const c = await dial();
  c.s.write('hello');
  expect(await c.next(5)).toBe('hello');
  c.s.destroy();
});

test('drop discards bytes, and the connections that lost bytes are reset at the heal', async () => {
  const before = await dial();
  proxy.setMode('drop');
  before.s.write('lost');
  const during = await dial(); // accepted, but a black hole
  during.s.write('also lost');
  await quiet(200);
  expect(before.got()).toBe('');
  expect(during.got()).toBe('');
  expect(proxy.bytesDropped).toBeGreaterThan(0);
  proxy.setMode('open');
  await Promise.all([before.closed, during.closed]);
  const after = await dial();
  after.s.write('back');
  expect(await after.next(4)).toBe('back');
  after.s.destroy();
});

test('hold keeps bytes and delivers them in order at the heal', async () => {
  const c = await dial();
  proxy.setMode('hold');
  c.s.write('one,');
  c.s.write('two');
  await quiet(200);
  expect(c.got()).toBe('');
  proxy.setMode('open');
  expect(await c.next(7)).toBe('one,two');
  c.s.destroy();
});

test('a close while the link is cut reaches the other end at the heal', async () => {
  const c = await dial();
  c.s.write('x');
  await c.next(1);
  proxy.setMode('hold');
  const serverClosed = new Promise<void>((r) => [...serverSockets][0].once('close', () => r()));
  for (const s of serverSockets) s.destroy(); // the target goes away during the partition
  await quiet(200);
  expect(c.s.destroyed).toBe(false);
  await serverClosed;
  proxy.setMode('open');
  await c.closed;
});
