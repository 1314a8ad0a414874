import * as os from 'node:os';
import { Logger } from './logger';
import { LogLevels } from './log-levels';

function capture(level: 'info' | 'debug' | 'warn' = 'info', format: 'text' | 'json' = 'text') {
  const lines: string[] = [];
  const root = Logger.root('krill[1]', { level, format, sink: (l) => lines.push(l) });
  return { root, lines };
}

describe('log levels by log4j logger name', () => {
  test('a child answers to its Kafka logger name and inherits the nearest ancestor level', () => {
    const { root, lines } = capture('info');
    const rm = root.child('replica-manager');
    const fetcher = root.child('replica-fetcher');
    expect(rm.category).toBe('kafka.server.ReplicaManager');
    expect(fetcher.category).toBe('kafka.server.ReplicaFetcherThread');
    rm.debug('hidden');
    root.levels.set('kafka.server', 'debug');
    rm.debug('shown 1');
    fetcher.debug('shown 2');
    root.child('storage').debug('storage stays at info'); // kafka.log.LogManager is not under kafka.server
    root.levels.set('kafka.server.ReplicaManager', 'error');
    rm.warn('hidden again');
    fetcher.debug('shown 3');
    root.levels.unset('kafka.server.ReplicaManager');
    rm.debug('shown 4');
    expect(lines.map((l) => l.replace(/^\[[^\]]+\] /, ''))).toEqual([
      'DEBUG krill[1].replica-manager: shown 1',
      'DEBUG krill[1].replica-fetcher: shown 2',
      'DEBUG krill[1].replica-fetcher: shown 3',
      'DEBUG krill[1].replica-manager: shown 4',
    ]);
  });

  test('unknown children are krill.<name>, names with dots are log4j names, prefixes share the category', () => {
    const { root } = capture();
    expect(root.category).toBe('root');
    expect(root.child('thing').category).toBe('krill.thing');
    expect(root.child('thing').child('sub').category).toBe('krill.thing.sub');
    expect(root.child('kafka.authorizer.logger').category).toBe('kafka.authorizer.logger');
    expect(root.child('storage').withPrefix('[x] ').category).toBe('kafka.log.LogManager');
    expect(root.levels.exists('krill.thing.sub')).toBe(true);
    expect(root.levels.exists('no.such.logger')).toBe(false);
    // Kafka's loggers exist before their component made one.
    expect(root.levels.exists('kafka.log.LogCleaner')).toBe(true);
  });

  test('setLevel sets the category (so every logger of it); root keeps a level', () => {
    const { root, lines } = capture('warn');
    const a = root.child('network');
    const b = root.child('network');
    a.setLevel('debug');
    b.debug('via b');
    expect(lines).toHaveLength(1);
    expect(b.level).toBe('debug');
    const levels = new LogLevels('info');
    levels.unset('root');
    expect(levels.effective('root')).toBe('info');
    expect(levels.effective('a.b.c')).toBe('info');
    expect(levels.all()[0]).toEqual({ name: 'root', level: 'info' });
  });

  test('withOwnLevels: a new tree over the same sink; changes in one do not reach the other', () => {
    const { root, lines } = capture('info');
    const broker0 = root.child('broker-0').withOwnLevels();
    const broker1 = root.child('broker-1').withOwnLevels();
    broker0.levels.set('kafka.log.LogManager', 'debug');
    broker0.child('storage').debug('broker 0 debug');
    broker1.child('storage').debug('broker 1 debug');
    root.child('storage').debug('root tree debug');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('krill[1].broker-0.storage: broker 0 debug');
    expect(broker1.level).toBe('info');
  });
});

describe('log formats', () => {
  test('text: [time] LEVEL name: prefix message {context}', () => {
    const { root, lines } = capture();
    root.child('storage').withPrefix('[Log t-0] ').info('loaded', { segments: 2, offset: 10n });
    expect(lines[0]).toMatch(/^\[\d{4}-\d\d-\d\dT[^\]]+Z\] INFO krill\[1\]\.storage: \[Log t-0\] loaded \{"segments":2,"offset":"10"\}$/);
  });

  test('json: one object per line with pino fields, context merged, errors serialised', () => {
    const { root, lines } = capture('debug', 'json');
    const before = Date.now();
    root.child('replica-manager').warn('two\nlines', { topic: 't', offset: 5n, err: new TypeError('boom'), level: 'mine' });
    root.debug('plain');
    root.trace('not enabled');
    expect(lines).toHaveLength(2);
    expect(lines.every((l) => !l.includes('\n'))).toBe(true);
    const a = JSON.parse(lines[0]);
    expect(a).toMatchObject({
      level: 40,
      pid: process.pid,
      hostname: os.hostname(),
      name: 'krill[1].replica-manager',
      logger: 'kafka.server.ReplicaManager',
      msg: 'two\nlines',
      topic: 't',
      offset: '5',
      'ctx.level': 'mine',
      err: { type: 'TypeError', message: 'boom' },
    });
    expect(a.time).toBeGreaterThanOrEqual(before);
    expect(a.err.stack).toContain('TypeError: boom');
    expect(JSON.parse(lines[1])).toMatchObject({ level: 20, msg: 'plain', logger: 'root', name: 'krill[1]' });
    expect(root.format).toBe('json');
    expect(root.child('x').withOwnLevels().format).toBe('json');
  });

  test('json: an unserialisable context keeps the line', () => {
    const { root, lines } = capture('info', 'json');
    const cyclic: Record<string, unknown> = {};
    cyclic.self = cyclic;
    root.info('cycle', { cyclic });
    expect(JSON.parse(lines[0])).toMatchObject({ msg: 'cycle', ctx: '[unserialisable context]' });
  });
});
