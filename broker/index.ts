/**
 * krill's embedding API: start a real broker inside a test suite (or any Node program).
 *
 *   const broker = await startBroker();              // 127.0.0.1, a free port, a temp data dir
 *   broker.bootstrapServers                            // ['127.0.0.1:41233']
 *   await broker.close();                              // clean shutdown; the temp dir is removed
 *
 * It goes through the same startup code as the `krill` command. Also exported: startCluster
 * (cluster.ts, N brokers and a controller in this process), KafkaServer and ControllerServer.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { launch, type LaunchOptions } from './launch';
import type { KafkaServer } from './server';

export interface StartBrokerOptions extends Omit<LaunchOptions, 'host' | 'port' | 'dataDir'> {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: a free port chosen by the OS. */
  port?: number;
  /** Default: a fresh temp directory, removed by close() unless keepDataDir is set. */
  dataDir?: string;
  keepDataDir?: boolean;
}

export interface RunningBroker {
  readonly bootstrapServers: string[];
  readonly host: string;
  readonly port: number;
  readonly nodeId: number;
  readonly clusterId: string;
  readonly dataDir: string;
  /** The server itself, for tests that look inside (partitions, logs, metadata). */
  readonly server: KafkaServer;
  /** Clean shutdown (checkpoints and clean-shutdown marker written). */
  close(): Promise<void>;
}

export async function startBroker(opts: StartBrokerOptions = {}): Promise<RunningBroker> {
  const ownDir = opts.dataDir === undefined;
  const dataDir = opts.dataDir ?? fs.mkdtempSync(path.join(os.tmpdir(), 'krill-'));
  let server: KafkaServer;
  try {
    server = await launch({ ...opts, host: opts.host ?? '127.0.0.1', port: opts.port ?? 0, dataDir });
  } catch (err) {
    if (ownDir && !opts.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  const ep = server.advertisedEndpoints[0];
  let closed = false;
  return {
    bootstrapServers: server.advertisedEndpoints.map((e) => `${e.host}:${e.port}`),
    host: ep.host,
    port: ep.port,
    nodeId: server.nodeId,
    clusterId: server.clusterId,
    dataDir,
    server,
    async close() {
      if (closed) return;
      closed = true;
      await server.shutdown();
      if (ownDir && !opts.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export { KafkaServer } from './server';
export { startCluster, type StartClusterOptions, type RunningCluster } from './cluster';
export { ControllerServer } from './controller/controller-server';
export type { LaunchOptions } from './launch';
