/**
 * The one broker startup path shared by the CLI and the embedding API (and so startCluster's
 * brokers): turns krill's short options (host, port, data dir, version caps by API name or key,
 * the emulated Kafka release) into Kafka config properties (the metrics port into
 * krill.metrics.port), starts a KafkaServer, creates the startup topics (before the caller reports
 * ready) and describes where it listens.
 */
import type { ConfigInput } from '../config/kafka-config';
import { KafkaServer } from './server';
import { KAFKA_VERSION_CONFIG } from './kafka-version';
import type { LogFormat, LogLevel, Logger } from '../common/logger';
import type { StorageFs } from '../storage/fs';
import { ALL_APIS } from '../protocol/generated';
import type { Authorizer } from '../metadata/authorizer/authorizer';
import { createStartupTopics, type StartupTopic } from './startup-topics';

export interface LaunchOptions {
  /** server.properties file. */
  configFile?: string;
  /** Kafka config properties, applied over the file. */
  config?: Readonly<Record<string, ConfigInput>>;
  /** `key=value` overrides, applied last. */
  overrides?: readonly string[];
  /** Shorthands for listeners=PLAINTEXT://host:port (only when given, or when nothing else sets listeners). */
  host?: string;
  port?: number;
  /** Shorthand for log.dirs. */
  dataDir?: string;
  /** Highest version to advertise per API, by name ("Produce") or key ("0"). */
  maxApiVersions?: Readonly<Record<string, number>>;
  /** Shorthand for krill.kafka.version: advertise the API ranges of this Kafka release line ("3.6"). */
  kafkaVersion?: string;
  logLevel?: LogLevel;
  /** text (default) or json: one pino-style JSON object per line (docs/operations.md). */
  logFormat?: LogFormat;
  logger?: Logger;
  /** Shorthand for krill.metrics.port: serve /metrics, /ready and /live there (0: a free port). */
  metricsPort?: number;
  /** Shorthand for krill.metrics.host (default: every interface). */
  metricsHost?: string;
  /** Called once the metrics endpoints are bound, before the logs load. */
  metricsListening?: (address: { host: string; port: number }) => void;
  /** The file system the partition logs use (fault injection: storage/testing/faulty-fs.ts). */
  storageFs?: StorageFs;
  /** The authorizer to use instead of the one `authorizer.class.name` names (tests). */
  authorizer?: Authorizer;
  /**
   * `--add-scram` arguments ('SCRAM-SHA-512=[name=alice,password=alice-secret]', Kafka's
   * `kafka-storage format --add-scram` syntax): written to the metadata log on the first start of a
   * fresh combined node, ignored afterwards (docs/security.md).
   */
  scramCredentials?: readonly string[];
  /**
   * Topics created before the broker reports ready (`--create-topic`, broker/startup-topics.ts):
   * 'name[:partitions[:replication-factor]][:key=value...]' or a StartupTopic.
   */
  topics?: readonly (string | StartupTopic)[];
}

export function parseVersionCaps(caps: Readonly<Record<string, number>> | undefined): Map<number, number> {
  const out = new Map<number, number>();
  if (!caps) return out;
  for (const [k, v] of Object.entries(caps)) {
    const api = /^\d+$/.test(k) ? ALL_APIS.find((a) => a.apiKey === Number(k)) : ALL_APIS.find((a) => a.name.toLowerCase() === k.toLowerCase());
    if (!api) throw new Error(`unknown API '${k}' in a version cap`);
    if (!Number.isInteger(v) || v < 0) throw new Error(`invalid version cap ${k}=${v}`);
    out.set(api.apiKey, v);
  }
  return out;
}

export async function launch(opts: LaunchOptions): Promise<KafkaServer> {
  const props: Record<string, ConfigInput> = { ...(opts.config ?? {}) };
  const listenersSet = props.listeners !== undefined || (opts.overrides ?? []).some((o) => o.startsWith('listeners='));
  if (opts.host !== undefined || opts.port !== undefined || (!listenersSet && !opts.configFile)) {
    props.listeners = `PLAINTEXT://${opts.host ?? '127.0.0.1'}:${opts.port ?? 9092}`;
  }
  if (opts.dataDir !== undefined) props['log.dirs'] = opts.dataDir;
  if (opts.kafkaVersion !== undefined) props[KAFKA_VERSION_CONFIG] = opts.kafkaVersion;
  if (opts.metricsPort !== undefined) props['krill.metrics.port'] = opts.metricsPort;
  if (opts.metricsHost !== undefined) props['krill.metrics.host'] = opts.metricsHost;
  const server = await KafkaServer.start({
    file: opts.configFile,
    props,
    overrides: opts.overrides,
    versionCaps: parseVersionCaps(opts.maxApiVersions),
    logLevel: opts.logLevel,
    logFormat: opts.logFormat,
    logger: opts.logger,
    metricsListening: opts.metricsListening,
    storageFs: opts.storageFs,
    authorizer: opts.authorizer,
    scramCredentials: opts.scramCredentials,
  });
  try {
    await createStartupTopics(server, opts.topics ?? []);
  } catch (err) {
    server.logger.error('startup topics failed; shutting down', { err });
    await server.shutdown();
    throw err;
  }
  return server;
}

export function listenerUrls(server: KafkaServer): string[] {
  return server.advertisedEndpoints.map((e) => `${e.listenerName}://${e.host}:${e.port}`);
}
