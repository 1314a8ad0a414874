import * as net from 'node:net';
import { Logger } from '../../common/logger';
import { MetricsServer } from './metrics-server';
import { httpStatus } from './testing/scrape';

test('/live, /ready (503 until ready), /metrics, 404 and 405; port 0; nothing listens after close', async () => {
  let ready = false;
  let fail = false;
  const lines: string[] = [];
  const server = new MetricsServer(
    {
      isReady: () => ready,
      scrape: async () => {
        if (fail) throw new Error('collector broke');
        return { contentType: 'text/plain; version=0.0.4; charset=utf-8', body: 'up 1\n' };
      },
    },
    Logger.root('test', { level: 'error', sink: (l) => lines.push(l) }),
  );
  expect(server.address).toBeNull();
  const address = await server.listen('127.0.0.1', 0);
  expect(address.port).toBeGreaterThan(0);
  expect(server.address).toEqual(address);
  expect(await httpStatus(address, '/live')).toBe(200);
  expect(await httpStatus(address, '/ready')).toBe(503);
  ready = true;
  expect(await httpStatus(address, '/ready')).toBe(200);
  expect(await httpStatus(address, '/ready', 'HEAD')).toBe(200);
  const res = await fetch(`http://127.0.0.1:${address.port}/metrics?x=1`);
  expect(res.status).toBe(200);
  expect(await res.text()).toBe('up 1\n');
  expect(await httpStatus(address, '/nope')).toBe(404);
  expect(await httpStatus(address, '/metrics', 'POST')).toBe(405);
  fail = true;
  expect(await httpStatus(address, '/metrics')).toBe(500);
  expect(lines.some((l) => l.includes('metrics scrape failed') && l.includes('collector broke'))).toBe(true);
  await server.close();
  expect(server.address).toBeNull();
  const refused = await new Promise<boolean>((resolve) => {
    const s = net.connect(address.port, '127.0.0.1');
    s.once('connect', () => {
      s.destroy();
      resolve(false);
    });
    s.once('error', () => resolve(true));
  });
  expect(refused).toBe(true);
});

test('a port in use fails listen with the error', async () => {
  const blocker = net.createServer();
  await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
  const port = (blocker.address() as net.AddressInfo).port;
  const server = new MetricsServer({ isReady: () => true, scrape: async () => ({ contentType: 'text/plain', body: '' }) }, Logger.silent());
  await expect(server.listen('127.0.0.1', port)).rejects.toThrow(/EADDRINUSE/);
  await new Promise<void>((r) => blocker.close(() => r()));
});
