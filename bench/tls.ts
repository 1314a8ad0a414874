/**
 * The TLS rows of the bench: produce and fetch over an SSL listener as a ratio to PLAINTEXT on the
 * same broker process, with the broker's CPU per message for each. One krill process has both
 * listeners (certificates from createTestCertificates, PEM stores, no client authentication); the
 * same KafkaJS workloads as the main table run against each listener, interleaved and alternating
 * which goes first, so both see the same machine.
 */
import { createTestCertificates } from '../broker/testing/certificates';
import { cpuSeconds, KRILL_BIN, makeTempDir, removeTempDir, spawnBroker } from './proc';
import { KafkaJsTarget, fetchKafkaJs, highWatermark, produceKafkaJs, type ClientResult } from './workloads';

export const TLS_SIZE = 1024;
export const tlsProduceName = 'produce 1KiB acks=1 tls';
export const tlsFetchName = 'fetch 1KiB kafkajs tls';

export interface TlsSample {
  msgsPerSec: number;
  brokerCpuUsPerMsg: number;
}

export interface TlsRow {
  name: string;
  messages: number;
  plaintext: TlsSample;
  ssl: TlsSample;
  /** median SSL msg/s / median PLAINTEXT msg/s */
  ratio: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

const READY = /krill ready: PLAINTEXT:\/\/([^:\s]+):(\d+), SSL:\/\/[^:\s]+:(\d+)/;

export async function measureTls(
  o: { quick: boolean; runs: number; inFlight: number },
  selected: (name: string) => boolean,
  log: (line: string) => void,
): Promise<TlsRow[]> {
  const wantProduce = selected(tlsProduceName);
  const wantFetch = selected(tlsFetchName);
  if (!wantProduce && !wantFetch) return [];
  const batches = o.quick ? 10 : 60;
  const certs = createTestCertificates();
  const dir = makeTempDir('krill-bench-tls-');
  const ssl = certs.brokerSsl({ listener: 'SSL' });
  const args = [KRILL_BIN, '--data-dir', dir, '--override', 'listeners=PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0'];
  for (const [k, v] of Object.entries(ssl)) args.push('--override', `${k}=${v}`);
  const bp = await spawnBroker({ name: 'krill (tls)', args, readyPattern: READY, timeoutMs: 20000 });
  const targets = {
    plaintext: new KafkaJsTarget(`${bp.host}:${bp.port}`),
    ssl: new KafkaJsTarget(`${bp.host}:${Number(bp.readyMatch[3])}`, { ca: [certs.ca.cert] }),
  };
  const samples: Record<string, Record<'plaintext' | 'ssl', TlsSample[]>> = {
    [tlsProduceName]: { plaintext: [], ssl: [] },
    [tlsFetchName]: { plaintext: [], ssl: [] },
  };
  const timed = async (fn: () => Promise<ClientResult>): Promise<TlsSample> => {
    const cpu0 = cpuSeconds(bp.pid);
    const r = await fn();
    const cpu = cpuSeconds(bp.pid) - cpu0;
    return { msgsPerSec: r.messages / r.seconds, brokerCpuUsPerMsg: (cpu / r.messages) * 1e6 };
  };
  try {
    log('tls: warm-up ...');
    for (const kind of ['plaintext', 'ssl'] as const) {
      const topic = `warmup-tls-${kind}`;
      await targets[kind].createTopic(topic);
      await produceKafkaJs(targets[kind], topic, TLS_SIZE, o.quick ? 3 : 10, 1, o.inFlight);
      await fetchKafkaJs(targets[kind], topic, (o.quick ? 3 : 10) * 1000);
    }
    for (let run = 1; run <= o.runs; run++) {
      const order: ('plaintext' | 'ssl')[] = run % 2 === 1 ? ['plaintext', 'ssl'] : ['ssl', 'plaintext'];
      for (const kind of order) {
        const topic = `bench-tls-${kind}-r${run}`;
        await targets[kind].createTopic(topic);
        const p = await timed(() => produceKafkaJs(targets[kind], topic, TLS_SIZE, batches, 1, o.inFlight));
        const hwm = await highWatermark(bp.host, bp.port, topic);
        if (hwm !== batches * 1000) throw new Error(`tls: ${topic} has high watermark ${hwm} after producing ${batches * 1000} messages`);
        if (wantProduce) samples[tlsProduceName][kind].push(p);
        if (wantFetch) samples[tlsFetchName][kind].push(await timed(() => fetchKafkaJs(targets[kind], topic, batches * 1000)));
        log(`  run ${run} tls ${kind.padEnd(9)} produce ${Math.round(p.msgsPerSec)} msg/s`);
      }
    }
  } catch (err) {
    log(`krill (tls) stderr (tail):\n${bp.stderrTail().slice(-4000)}`);
    throw err;
  } finally {
    await targets.plaintext.close().catch(() => undefined);
    await targets.ssl.close().catch(() => undefined);
    await bp.stop();
    removeTempDir(dir);
    certs.cleanup();
  }
  const rows: TlsRow[] = [];
  for (const name of [tlsProduceName, tlsFetchName]) {
    const s = samples[name];
    if (s.plaintext.length === 0) continue;
    const med = (xs: TlsSample[]): TlsSample => ({
      msgsPerSec: Math.round(median(xs.map((x) => x.msgsPerSec))),
      brokerCpuUsPerMsg: Math.round(median(xs.map((x) => x.brokerCpuUsPerMsg)) * 100) / 100,
    });
    const plaintext = med(s.plaintext);
    const sslMed = med(s.ssl);
    rows.push({ name, messages: batches * 1000, plaintext, ssl: sslMed, ratio: Math.round((sslMed.msgsPerSec / plaintext.msgsPerSec) * 100) / 100 });
  }
  return rows;
}
