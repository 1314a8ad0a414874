/**
 * The `krill` command.
 *
 *   krill [--config server.properties] [--override key=value ...] [--port N] [--host H]
 *         [--data-dir DIR] [--max-api-version API=V ...] [--kafka-version X.Y] [--log-level LEVEL]
 *         [--log-format text|json] [--metrics-port N]
 *         [--add-scram 'SCRAM-SHA-256=[name=alice,password=alice-secret]' ...]
 *         [--create-topic name[:partitions[:replication-factor]][:key=value...] ...]
 *
 * Starts one broker (127.0.0.1:9092, data under ./data by default), prints one line naming the
 * bound address(es) on stdout once it serves requests, and shuts down cleanly on SIGTERM/SIGINT.
 * `--add-scram` (repeatable, `-S`) is `kafka-storage format --add-scram`: SCRAM credentials written
 * to the metadata log on the first start of a fresh node (broker/security/sasl/scram-parser.ts).
 * `--create-topic` (repeatable) creates a topic before the ready line (broker/startup-topics.ts).
 * `--kafka-version X.Y` is krill.kafka.version: the brokers advertise exactly the API ranges of
 * that Apache Kafka release line that krill implements (broker/kafka-version.ts).
 * `--metrics-port N` (krill.metrics.port) serves /metrics, /ready and /live on N (with --brokers,
 * broker i on N+i; with --process-roles controller, the controller's); `--log-format json` writes pino-style JSON lines (docs/operations.md).
 *
 * Clusters (docs/replication.md):
 *   krill --brokers N [--port P]           N brokers (node ids 0..N-1, ports P..P+N-1) and a
 *                                           controller (port P+N) in this process
 *   krill --brokers N --controllers K      the same with a KRaft quorum of K controllers (node ids
 *                                           3000..3000+K-1, ports P+N..P+N+K-1) the brokers follow
 *   krill --process-roles controller [--node-id 3000] [--port 9093]
 *                                           a controller alone (brokers of other processes join it)
 *   krill --node-id N --controller HOST:PORT [--port P]
 *                                           a broker of the cluster whose controller is HOST:PORT
 *
 *   krill dump-log [options] FILE|DIR...     (storage/tools/dump-log.ts)
 *   krill topics|groups|configs|acls|quorum --bootstrap-server H:P ...
 *                                           admin tools over the Kafka protocol (admin-cli/)
 */
import { launch, listenerUrls, type LaunchOptions } from './launch';
import { loadPropertiesFile } from '../config/properties';
import type { LogFormat, LogLevel } from '../common/logger';
import { LOG_FORMATS } from '../common/log-format';
import { parseScramArgument } from './security/sasl/scram-parser';
import { parseStartupTopic } from './startup-topics';
import { KAFKA_VERSION_CONFIG } from './kafka-version';
import { KAFKA_RELEASES } from '../protocol/kafka-release-deltas';

const USAGE = `usage: krill [--config FILE] [--override key=value ...] [--port N] [--host H] [--data-dir DIR]
             [--max-api-version API=VERSION ...] [--kafka-version X.Y] [--log-level error|warn|info|debug|trace]
             [--log-format text|json] [--metrics-port N]
             [--add-scram 'SCRAM-SHA-512=[name=NAME,password=PASSWORD]' ...]
             [--create-topic NAME[:PARTITIONS[:REPLICATION-FACTOR]][:KEY=VALUE...] ...]
             [--brokers N [--controllers K] | --process-roles controller | --node-id N --controller HOST:PORT]
Starts a krill broker (Kafka wire protocol). Config keys are Kafka's (server.properties).
--brokers N runs an N-broker cluster (and its controller) in this process on ports P..P+N;
--controllers K (with --brokers) runs K controllers on one KRaft quorum instead of one;
--process-roles controller runs a cluster's controller; --node-id N --controller HOST:PORT runs
one broker of that cluster (separate processes, or machines). --add-scram (repeatable; also
MECH=[name=N,iterations=I,salt=B64,saltedpassword=B64]) adds a SCRAM credential to the metadata
log when the node starts with an empty one, as kafka-storage format --add-scram does.
--create-topic (repeatable) creates a topic before the ready line; an existing one is kept.
--kafka-version X.Y (2.8, 3.0 ... 3.9, 4.0, 4.1) advertises the API versions of that Apache Kafka release
that krill implements, and refuses the others (config key krill.kafka.version).
--metrics-port N serves Prometheus /metrics and the /ready and /live probes over HTTP on port N.
       krill dump-log [--deep-iteration] [--print-data-log] [--index-sanity-check] FILE|DIR...
Prints and checks log segments and indexes (like kafka-dump-log.sh; --help for its options).
       krill topics|groups|configs|acls|quorum --bootstrap-server HOST:PORT ...
Admin tools over the Kafka protocol, as kafka-topics.sh, kafka-consumer-groups.sh, kafka-configs.sh,
kafka-acls.sh and kafka-metadata-quorum.sh (--help for each).`;

export type CliOptions = LaunchOptions & {
  help?: boolean;
  /** --brokers N: an in-process cluster. */
  brokers?: number;
  /** --controllers K (with --brokers): a KRaft quorum of K controllers. */
  controllers?: number;
  /** --process-roles controller: a controller alone. */
  controllerOnly?: boolean;
};

export function parseArgs(argv: string[]): CliOptions {
  const opts: CliOptions = {};
  const overrides: string[] = [];
  const caps: Record<string, number> = {};
  const scram: string[] = [];
  const topics: string[] = [];
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
      case '--add-scram':
      case '-S': {
        const v = value();
        try {
          parseScramArgument(v);
        } catch (err) {
          throw new Error(`--add-scram: ${(err as Error).message}`);
        }
        scram.push(v);
        break;
      }
      case '--create-topic': {
        const v = value();
        try {
          parseStartupTopic(v);
        } catch (err) {
          throw new Error(`--create-topic: ${(err as Error).message}`);
        }
        topics.push(v);
        break;
      }
      case '--kafka-version': {
        const v = value();
        if (!(v in KAFKA_RELEASES)) throw new Error(`invalid --kafka-version ${v} (one of ${Object.keys(KAFKA_RELEASES).join(', ')})`);
        overrides.unshift(`${KAFKA_VERSION_CONFIG}=${v}`);
        break;
      }
      case '--log-level':
        opts.logLevel = value() as LogLevel;
        break;
      case '--log-format': {
        const v = value();
        if (!(LOG_FORMATS as readonly string[]).includes(v)) throw new Error(`invalid --log-format ${v} (expected ${LOG_FORMATS.join(' or ')})`);
        opts.logFormat = v as LogFormat;
        break;
      }
      case '--metrics-port': {
        const v = value();
        const port = Number(v);
        if (!/^\d+$/.test(v) || port > 65535) throw new Error(`invalid --metrics-port ${v}`);
        opts.metricsPort = port;
        break;
      }
      case '--brokers': {
        const v = value();
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1 || n > 100) throw new Error(`invalid --brokers ${v}`);
        opts.brokers = n;
        break;
      }
      case '--controllers': {
        const v = value();
        const n = Number(v);
        if (!Number.isInteger(n) || n < 1 || n > 9) throw new Error(`invalid --controllers ${v} (1 to 9)`);
        opts.controllers = n;
        break;
      }
      case '--node-id': {
        const v = value();
        if (!/^\d+$/.test(v)) throw new Error(`invalid --node-id ${v}`);
        overrides.unshift(`node.id=${v}`);
        break;
      }
      case '--controller': {
        const v = value();
        if (!/^[^\s,]+:\d+$/.test(v)) throw new Error(`invalid --controller ${v} (expected HOST:PORT)`);
        overrides.unshift('process.roles=broker', `controller.quorum.bootstrap.servers=${v}`);
        break;
      }
      case '--process-roles': {
        const v = value();
        if (v === 'controller') opts.controllerOnly = true;
        else if (v !== 'broker,controller' && v !== 'controller,broker') {
          throw new Error(`--process-roles ${v}: use controller here, or --controller HOST:PORT for a broker`);
        }
        break;
      }
      default:
        throw new Error(`unknown argument ${a}`);
    }
  }
  if (overrides.length) opts.overrides = overrides;
  if (Object.keys(caps).length) opts.maxApiVersions = caps;
  if (scram.length) opts.scramCredentials = scram;
  if (topics.length) opts.topics = topics;
  if (opts.controllerOnly && topics.length) throw new Error('--create-topic: a controller alone has no brokers to create topics on');
  if (opts.controllers !== undefined && opts.brokers === undefined) throw new Error('--controllers goes with --brokers N (an in-process cluster)');
  return opts;
}

export async function main(argv: string[]): Promise<void> {
  // The tools are loaded only when asked for, so a broker's start-up does not load them.
  if (argv[0] === 'dump-log') {
    const { dumpLogMain } = require('../storage/tools/dump-log') as typeof import('../storage/tools/dump-log');
    process.exitCode = dumpLogMain(argv.slice(1));
    return;
  }
  if (argv[0] !== undefined && !argv[0].startsWith('-')) {
    const { adminMain, isAdminCommand } = require('./admin-cli/admin-main') as typeof import('./admin-cli/admin-main');
    if (isAdminCommand(argv[0])) {
      process.exitCode = await adminMain(argv[0], argv.slice(1));
      return;
    }
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
  // A Kafka controller's server.properties (process.roles=controller) starts a controller node.
  if (opts.brokers === undefined && !opts.controllerOnly && opts.configFile !== undefined && configuredRoles(opts) === 'controller') opts.controllerOnly = true;
  if (opts.brokers !== undefined || opts.controllerOnly) {
    await runClusterNode(opts);
    return;
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

/** The properties the config file, --config-style settings and overrides set, in that order (later wins). */
function givenProperties(opts: CliOptions): Map<string, string> {
  const given = new Map<string, string>(opts.configFile ? loadPropertiesFile(opts.configFile) : []);
  for (const [k, v] of Object.entries(opts.config ?? {})) given.set(k, String(v));
  for (const o of opts.overrides ?? []) given.set(o.slice(0, o.indexOf('=')), o.slice(o.indexOf('=') + 1));
  return given;
}

/** Whether process.roles, as given, is `controller` alone. */
function configuredRoles(opts: CliOptions): 'controller' | 'other' {
  let roles: string[];
  try {
    roles = (givenProperties(opts).get('process.roles') ?? '').split(',').map((r) => r.trim()).filter((r) => r !== '');
  } catch {
    return 'other'; // the broker's start-up reports what is wrong with the config
  }
  return roles.length === 1 && roles[0] === 'controller' ? 'controller' : 'other';
}

/** `--brokers N` (a whole cluster in this process) and `--process-roles controller`. */
async function runClusterNode(opts: CliOptions): Promise<void> {
  let close: () => Promise<void>;
  let line: string;
  if (opts.controllerOnly) {
    // A config file's own node.id, listeners and controller.listener.names are kept; the flags'
    // defaults fill in what it (and the overrides) leave out.
    const given = givenProperties(opts);
    const listenerFlags = opts.port !== undefined || opts.host !== undefined || !given.has('listeners');
    const port = opts.port ?? 9093;
    const host = opts.host ?? '127.0.0.1';
    // Loaded only for this mode, so a broker's start-up does not load the controller node's modules.
    const { ControllerServer } = require('./controller/controller-server') as typeof import('./controller/controller-server');
    const controller = await ControllerServer.start({
      file: opts.configFile,
      overrides: opts.overrides,
      props: {
        ...(opts.config ?? {}),
        ...(given.has('node.id') ? {} : { 'node.id': '3000' }),
        'process.roles': 'controller',
        ...(listenerFlags ? { listeners: `CONTROLLER://${host}:${port}`, 'controller.listener.names': 'CONTROLLER' } : {}),
        ...(opts.dataDir !== undefined ? { 'log.dirs': opts.dataDir } : {}),
        ...(opts.metricsPort !== undefined ? { 'krill.metrics.port': opts.metricsPort } : {}),
      },
      logLevel: opts.logLevel,
      logFormat: opts.logFormat,
      scramCredentials: opts.scramCredentials,
    });
    close = () => controller.shutdown();
    line = `krill controller ready: CONTROLLER://${controller.endpoint.host}:${controller.endpoint.port} node ${controller.nodeId} cluster ${controller.clusterId} data ${controller.config.metadataLogDir()}\n`;
  } else {
    const { startCluster } = require('./cluster') as typeof import('./cluster');
    const cluster = await startCluster({
      brokers: opts.brokers!,
      controllers: opts.controllers,
      configFile: opts.configFile,
      overrides: opts.overrides,
      config: opts.config,
      host: opts.host ?? '127.0.0.1',
      port: opts.port ?? 9092,
      dataDir: opts.dataDir,
      keepDataDir: true,
      maxApiVersions: opts.maxApiVersions,
      logLevel: opts.logLevel,
      logFormat: opts.logFormat,
      metricsPort: opts.metricsPort,
      scramCredentials: opts.scramCredentials,
      topics: opts.topics,
    });
    close = () => cluster.close();
    const controllerWord = cluster.controllers.size > 1 || (opts.controllers ?? 1) > 1 ? 'controllers' : 'controller';
    line = `krill ready: ${cluster.bootstrapServers.map((b) => `PLAINTEXT://${b}`).join(', ')} nodes ${[...cluster.brokers.keys()].join(',')} ${controllerWord} ${cluster.controllerAddress} data ${cluster.dataDir}\n`;
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    process.stderr.write(`krill: received ${signal}, shutting down\n`);
    close().then(
      () => process.exit(0),
      (err) => {
        process.stderr.write(`krill: shutdown failed: ${(err as Error).message}\n`);
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
  process.stdout.write(line);
}
