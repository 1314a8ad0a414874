/**
 * The `krill` command.
 *
 *   krill [--config server.properties] [--override key=value ...] [--port N] [--host H]
 *         [--data-dir DIR] [--max-api-version API=V ...] [--log-level LEVEL]
 *
 * Starts one broker (127.0.0.1:9092, data under ./data by default), prints one line naming the
 * bound address(es) on stdout once it serves requests, and shuts down cleanly on SIGTERM/SIGINT.
 *
 *   krill dump-log [options] FILE|DIR...     (storage/tools/dump-log.ts)
 */
import { launch, listenerUrls, type LaunchOptions } from './launch';
import type { LogLevel } from './logger';
import { dumpLogMain } from '../storage/tools/dump-log';

const USAGE = `usage: krill [--config FILE] [--override key=value ...] [--port N] [--host H] [--data-dir DIR]
             [--max-api-version API=VERSION ...] [--log-level error|warn|info|debug|trace]
Starts a krill broker (Kafka wire protocol). Config keys are Kafka's (server.properties).
       krill dump-log [--deep-iteration] [--print-data-log] [--index-sanity-check] FILE|DIR...
Prints and checks log segments and indexes (like kafka-dump-log.sh; --help for its options).`;

export function parseArgs(argv: string[]): LaunchOptions & { help?: boolean } {
  const opts: LaunchOptions & { help?: boolean } = {};
  const overrides: string[] = [];
  const caps: Record<string, number> = {};
  const need = (i: number, flag: string): string => {
    const v = argv[i + 1];
    if (v === undefined || v.startsWith('--')) throw new Error(`${flag} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const [flag, inline] = a.includes('=') && a.startsWith('--') ? [a.slice(0, a.indexOf('=')), a.slice(a.indexOf('=') + 1)] : [a, undefined];
    const value = (): string => inline ?? need(i++, flag);
    switch (flag) {
      case '--help':
      case '-h':
        opts.help = true;
        break;
      case '--config':
        opts.configFile = value();
        break;
      case '--override':
        overrides.push(value());
        break;
      case '--port': {
        const v = value();
        const port = Number(v);
        if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`invalid --port ${v}`);
        opts.port = port;
        break;
      }
      case '--host':
        opts.host = value();
        break;
      case '--data-dir':
        opts.dataDir = value();
        break;
      case '--max-api-version': {
        const v = value();
        const m = /^([A-Za-z0-9]+)=(\d+)$/.exec(v);
        if (!m) throw new Error(`invalid --max-api-version ${v} (expected API=VERSION, e.g. Fetch=11)`);
        caps[m[1]] = Number(m[2]);
        break;
      }
      case '--log-level':
        opts.logLevel = value() as LogLevel;
        break;
      default:
        throw new Error(`unknown argument ${a}`);
    }
  }
  if (overrides.length) opts.overrides = overrides;
  if (Object.keys(caps).length) opts.maxApiVersions = caps;
  return opts;
}

export async function main(argv: string[]): Promise<void> {
  if (argv[0] === 'dump-log') {
    process.exitCode = dumpLogMain(argv.slice(1));
    return;
  }
  let opts: ReturnType<typeof parseArgs>;
  try {
    opts = parseArgs(argv);
  } catch (err) {
    process.stderr.write(`krill: ${(err as Error).message}\n${USAGE}\n`);
    process.exit(2);
  }
  if (opts.help) {
    process.stdout.write(USAGE + '\n');
    return;
  }
  if (opts.dataDir === undefined && !opts.configFile && !(opts.overrides ?? []).some((o) => o.startsWith('log.dir'))) {
    opts.dataDir = './data';
  }
  const server = await launch(opts);
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    server.logger.info(`received ${signal}`);
    server.shutdown().then(
      () => process.exit(0),
      (err) => {
        server.logger.error('shutdown failed', { err });
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.stdout.write(`krill ready: ${listenerUrls(server).join(', ')} node ${server.nodeId} data ${server.config.logDirs().join(',')}\n`);
}
