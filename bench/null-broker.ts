/**
 * The null sink: a Kafka endpoint that does as little as a broker possibly can, so that driving it
 * with a client measures that client's own ceiling on this machine. The bench runs it as its own
 * process (like krill) and compares krill's throughput against it.
 *
 *   node dist/bench/null-broker.js [--port N] [--host H]
 *   -> prints "null-broker ready: PLAINTEXT://H:PORT" once listening; exits on SIGTERM/SIGINT or
 *      when its stdin closes (the bench that spawned it is gone).
 *
 * APIs, with the generated codecs: ApiVersions 0-3, Metadata 0-12 (every topic asked for exists,
 * one partition unless CreateTopics said otherwise, led by this node), CreateTopics 0-7 (records the
 * partition count), Produce 3-11 (acks without storing: only the record count of each batch is read
 * from its header to hand out offsets; acks=0 gets no response), Fetch 4-11 (serves copies of the
 * first batch produced to the partition, base offsets patched, up to the high watermark: valid
 * batches of the same shape the client wrote, built from memory; a fetch with nothing to return
 * (every partition at its high watermark) is answered empty after its max wait, as a broker that gets
 * no new data answers it, so that a consumer at the end, such as librdkafka's, does not spin against
 * the null sink; responses still leave each connection in request order), ListOffsets 1-7 (earliest 0, latest = high watermark).
 * For idempotent producers (KafkaJS, librdkafka): InitProducerId 0-4 without a transactional id
 * (always a new producer id from a counter, epoch 0, as Kafka answers a non-transactional one), and the producer id, epoch and sequence of each batch, read from
 * its header, are checked the way a partition leader checks them (sequence 0 for a new producer or
 * epoch, then base sequence = last sequence + 1; else OUT_OF_ORDER_SEQUENCE_NUMBER, a stale epoch
 * INVALID_PRODUCER_EPOCH), keeping one small entry per producer and partition: the last sequence,
 * not the batches. DescribeProducers 0 reports those entries, so the bench can check that a run was
 * idempotent end to end on both targets. No transactions (no FindCoordinator, a transactional id
 * is refused), no duplicate detection (a retried batch is out of order here).
 * Not a broker: no storage, no sessions, no CRC check; batches are assumed to carry the same record
 * count (the bench always sends 1,000 per batch).
 */
import * as net from 'node:net';
import { randomUuid } from '../protocol/primitives/uuid';
import { APIS, apiByKey, responseHeaderVersion } from '../protocol/generated';
import type { FetchRequest, FetchResponsePartitionData } from '../protocol/generated/fetch';
import type { MetadataRequest, MetadataResponseTopic } from '../protocol/generated/metadata';
import type { ProduceRequest, ProduceResponseTopicProduceResponse } from '../protocol/generated/produce';
import type { ListOffsetsRequest } from '../protocol/generated/list-offsets';
import type { CreateTopicsRequest } from '../protocol/generated/create-topics';
import type { InitProducerIdRequest } from '../protocol/generated/init-producer-id';
import type { DescribeProducersRequest } from '../protocol/generated/describe-producers';
import type { Input } from '../protocol/primitives/input';
import { readRequestHeader, writeResponseHeader } from '../protocol/header';
import { Reader } from '../protocol/primitives/reader';
import { Writer } from '../protocol/primitives/writer';
import { FrameSplitter, writeChunks } from './framing';

const NODE_ID = 1;
const EMPTY = Buffer.alloc(0);

/** Advertised ranges: what KafkaJS 2.2.4 sends, and a bit above. */
const SUPPORTED: ReadonlyMap<number, readonly [number, number]> = new Map([
  [APIS.Produce.apiKey, [3, 11]],
  [APIS.Fetch.apiKey, [4, 11]],
  [APIS.ListOffsets.apiKey, [1, 7]],
  [APIS.Metadata.apiKey, [0, 12]],
  [APIS.ApiVersions.apiKey, [0, 3]],
  [APIS.CreateTopics.apiKey, [0, 7]],
  [APIS.InitProducerId.apiKey, [0, 4]],
  [APIS.DescribeProducers.apiKey, [0, 0]],
]);

/** Kafka error codes the null sink answers with. */
const OUT_OF_ORDER_SEQUENCE_NUMBER = 45;
const INVALID_PRODUCER_EPOCH = 47;
const INVALID_REQUEST = 42;

/** Record batch v2 header fields (byte offsets from the batch start). */
const BATCH_LENGTH_AT = 8;
const MAX_TIMESTAMP_AT = 35;
const PRODUCER_ID_AT = 43;
const PRODUCER_EPOCH_AT = 51;
const BASE_SEQUENCE_AT = 53;
const RECORD_COUNT_AT = 57;
const BATCH_HEADER_BYTES = 61;

/** What a partition leader keeps per idempotent producer, minus the batch metadata for deduplication. */
interface ProducerEntry {
  epoch: number;
  lastSequence: number;
  lastTimestamp: bigint;
}

interface PartitionState {
  /** Next offset to hand out (the high watermark: everything "acknowledged" is "committed"). */
  hwm: number;
  /** Copy of the first batch produced here; fetches serve copies of it. */
  template: Buffer | null;
  templateRecords: number;
  /** Idempotent producers seen on this partition, by producer id. */
  producers: Map<bigint, ProducerEntry>;
}

interface TopicState {
  id: string;
  partitions: PartitionState[];
}

export class NullBroker {
  private readonly topics = new Map<string, TopicState>();
  private server: net.Server | null = null;
  private readonly sockets = new Set<net.Socket>();
  private nextProducerId = 1000n;
  host = '127.0.0.1';
  port = 0;

  async listen(host: string, port: number): Promise<void> {
    const server = net.createServer((s) => this.onConnection(s));
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => resolve());
    });
    const addr = server.address() as net.AddressInfo;
    this.host = host;
    this.port = addr.port;
  }

  close(): void {
    this.server?.close();
    for (const s of this.sockets) s.destroy();
  }

  private topic(name: string, partitions = 1): TopicState {
    let t = this.topics.get(name);
    if (!t) {
      t = { id: randomUuid(), partitions: [] };
      for (let i = 0; i < partitions; i++) t.partitions.push({ hwm: 0, template: null, templateRecords: 0, producers: new Map() });
      this.topics.set(name, t);
    }
    return t;
  }

  private onConnection(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.setNoDelay(true);
    const splitter = new FrameSplitter();
    // Responses in request order; an empty Fetch waiting out its max wait holds back the ones after it.
    const queue: { out: Buffer[]; delayMs: number }[] = [];
    let timer: NodeJS.Timeout | null = null;
    const flush = (): void => {
      while (queue.length) {
        const head = queue[0];
        if (head.delayMs > 0) {
          timer = setTimeout(() => {
            timer = null;
            flush();
          }, head.delayMs);
          head.delayMs = 0;
          return;
        }
        queue.shift();
        if (!socket.destroyed && !writeChunks(socket, head.out)) {
          socket.pause();
          socket.once('drain', () => socket.resume());
        }
      }
    };
    socket.on('data', (chunk) => {
      try {
        for (const frame of splitter.push(chunk)) {
          const res = this.handle(frame);
          if (!res) continue;
          queue.push(res);
          if (!timer) flush();
        }
      } catch (err) {
        process.stderr.write(`null-broker: closing connection: ${(err as Error).message}\n`);
        socket.destroy();
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      if (timer) clearTimeout(timer);
      this.sockets.delete(socket);
    });
  }

  /** One request frame -> response chunks (size prefix included) and how long to hold them, or null for no response. */
  private handle(frame: Buffer): { out: Buffer[]; delayMs: number } | null {
    const r = new Reader(frame);
    const h = readRequestHeader(r);
    const api = apiByKey(h.apiKey);
    const range = SUPPORTED.get(h.apiKey);
    if (!api || !range) throw new Error(`unsupported API key ${h.apiKey}`);
    let version = h.apiVersion;
    let body: unknown;
    let delayMs = 0;
    if (version < range[0] || version > range[1]) {
      if (h.apiKey !== APIS.ApiVersions.apiKey) throw new Error(`unsupported ${api.name} v${version}`);
      version = 0;
      body = { errorCode: 35, apiKeys: this.apiKeys() };
    } else {
      const req = api.readRequest(r, version);
      switch (h.apiKey) {
        case APIS.ApiVersions.apiKey:
          body = { errorCode: 0, apiKeys: this.apiKeys() };
          break;
        case APIS.Metadata.apiKey:
          body = this.metadata(req as MetadataRequest);
          break;
        case APIS.CreateTopics.apiKey:
          body = this.createTopics(req as CreateTopicsRequest);
          break;
        case APIS.Produce.apiKey: {
          const p = req as ProduceRequest;
          const res = this.produce(p);
          if (p.acks === 0) return null;
          body = { responses: res };
          break;
        }
        case APIS.Fetch.apiKey: {
          const f = req as FetchRequest;
          const res = this.fetch(f);
          body = res.body;
          if (res.empty) delayMs = Math.max(0, f.maxWaitMs);
          break;
        }
        case APIS.ListOffsets.apiKey:
          body = this.listOffsets(req as ListOffsetsRequest);
          break;
        case APIS.InitProducerId.apiKey:
          body = this.initProducerId(req as InitProducerIdRequest);
          break;
        case APIS.DescribeProducers.apiKey:
          body = this.describeProducers(req as DescribeProducersRequest);
          break;
      }
    }
    const w = new Writer(512);
    const size = w.reserveInt32();
    writeResponseHeader(w, responseHeaderVersion(h.apiKey, version), h.correlationId);
    api.writeResponse(w, version, body as never);
    w.patchInt32(size, w.length - 4);
    return { out: w.finish(), delayMs };
  }

  private apiKeys(): { apiKey: number; minVersion: number; maxVersion: number }[] {
    return [...SUPPORTED].map(([apiKey, [minVersion, maxVersion]]) => ({ apiKey, minVersion, maxVersion }));
  }

  private metadata(req: MetadataRequest): unknown {
    const names = req.topics === null ? [...this.topics.keys()] : req.topics.map((t) => t.name ?? '');
    const topics: Input<MetadataResponseTopic>[] = names.map((name) => {
      const t = this.topic(name);
      return {
        errorCode: 0,
        name,
        topicId: t.id,
        isInternal: false,
        partitions: t.partitions.map((_, i) => ({
          errorCode: 0,
          partitionIndex: i,
          leaderId: NODE_ID,
          leaderEpoch: 0,
          replicaNodes: [NODE_ID],
          isrNodes: [NODE_ID],
          offlineReplicas: [],
        })),
      };
    });
    return {
      brokers: [{ nodeId: NODE_ID, host: this.host, port: this.port, rack: null }],
      clusterId: 'null-sink',
      controllerId: NODE_ID,
      topics,
    };
  }

  private createTopics(req: CreateTopicsRequest): unknown {
    return {
      topics: req.topics.map((t) => {
        const exists = this.topics.has(t.name);
        const n = t.numPartitions > 0 ? t.numPartitions : 1;
        const st = this.topic(t.name, n);
        return {
          name: t.name,
          topicId: st.id,
          errorCode: exists ? 36 : 0, // TOPIC_ALREADY_EXISTS
          errorMessage: null,
          numPartitions: st.partitions.length,
          replicationFactor: 1,
          configs: [],
        };
      }),
    };
  }

  private produce(req: ProduceRequest): Input<ProduceResponseTopicProduceResponse>[] {
    return req.topicData.map((td) => {
      const t = this.topic(td.name);
      return {
        name: td.name,
        partitionResponses: td.partitionData.map((pd) => {
          const p = t.partitions[pd.index];
          if (!p || !pd.records) return { index: pd.index, errorCode: 3, baseOffset: -1n }; // UNKNOWN_TOPIC_OR_PARTITION
          const recs = pd.records;
          // Walk the batch headers only: length, record count, and the producer fields. Checked
          // first, applied after, so that a refused request changes nothing (as on a broker).
          let updates: Map<bigint, ProducerEntry> | null = null;
          for (let pos = 0; pos + BATCH_HEADER_BYTES <= recs.length; ) {
            const len = recs.readInt32BE(pos + BATCH_LENGTH_AT) + 12;
            const producerId = recs.readBigInt64BE(pos + PRODUCER_ID_AT);
            if (producerId >= 0n) {
              const epoch = recs.readInt16BE(pos + PRODUCER_EPOCH_AT);
              const seq = recs.readInt32BE(pos + BASE_SEQUENCE_AT);
              const count = recs.readInt32BE(pos + RECORD_COUNT_AT);
              const known = updates?.get(producerId) ?? p.producers.get(producerId);
              if (known && epoch < known.epoch) return { index: pd.index, errorCode: INVALID_PRODUCER_EPOCH, baseOffset: -1n };
              const expected = known && epoch === known.epoch ? (known.lastSequence + 1) % 0x80000000 : 0;
              if (seq !== expected) return { index: pd.index, errorCode: OUT_OF_ORDER_SEQUENCE_NUMBER, baseOffset: -1n };
              updates ??= new Map();
              updates.set(producerId, { epoch, lastSequence: (seq + count - 1) % 0x80000000, lastTimestamp: recs.readBigInt64BE(pos + MAX_TIMESTAMP_AT) });
            }
            pos += len;
          }
          if (updates) for (const [id, e] of updates) p.producers.set(id, e);
          const base = p.hwm;
          for (let pos = 0; pos + BATCH_HEADER_BYTES <= recs.length; ) {
            const len = recs.readInt32BE(pos + BATCH_LENGTH_AT) + 12;
            const count = recs.readInt32BE(pos + RECORD_COUNT_AT);
            if (p.template === null) {
              p.template = Buffer.from(recs.subarray(pos, pos + len));
              p.templateRecords = count;
            }
            p.hwm += count;
            pos += len;
          }
          return { index: pd.index, errorCode: 0, baseOffset: BigInt(base), logAppendTimeMs: -1n, logStartOffset: 0n };
        }),
      };
    });
  }

  /**
   * A producer id for an idempotent producer: always a fresh one with epoch 0 (what Kafka does for
   * a non-transactional InitProducerId, whatever producer id and epoch it carries). A transactional
   * id is refused with a non-retriable error: the null sink coordinates nothing.
   */
  private initProducerId(req: InitProducerIdRequest): unknown {
    if (req.transactionalId !== null && req.transactionalId !== '') {
      return { throttleTimeMs: 0, errorCode: INVALID_REQUEST, producerId: -1n, producerEpoch: -1 };
    }
    return { throttleTimeMs: 0, errorCode: 0, producerId: this.nextProducerId++, producerEpoch: 0 };
  }

  private describeProducers(req: DescribeProducersRequest): unknown {
    return {
      throttleTimeMs: 0,
      topics: req.topics.map((dt) => {
        const t = this.topics.get(dt.name);
        return {
          name: dt.name,
          partitions: dt.partitionIndexes.map((partitionIndex) => {
            const p = t?.partitions[partitionIndex];
            if (!p) return { partitionIndex, errorCode: 3, errorMessage: null, activeProducers: [] };
            return {
              partitionIndex,
              errorCode: 0,
              errorMessage: null,
              activeProducers: [...p.producers].map(([producerId, e]) => ({
                producerId,
                producerEpoch: e.epoch,
                lastSequence: e.lastSequence,
                lastTimestamp: e.lastTimestamp,
                coordinatorEpoch: -1,
                currentTxnStartOffset: -1n,
              })),
            };
          }),
        };
      }),
    };
  }

  /** The Fetch response, and whether it is empty without an error (nothing at or above any fetch offset). */
  private fetch(req: FetchRequest): { body: unknown; empty: boolean } {
    let budget = req.maxBytes;
    let empty = true;
    const body = {
      errorCode: 0,
      sessionId: 0,
      responses: req.topics.map((ft) => {
        const t = this.topics.get(ft.topic);
        return {
          topic: ft.topic,
          partitions: ft.partitions.map((fp): Input<FetchResponsePartitionData> => {
            const p = t?.partitions[fp.partition];
            if (!p) {
              empty = false;
              return { partitionIndex: fp.partition, errorCode: 3, records: EMPTY };
            }
            let records = EMPTY;
            const offset = Number(fp.fetchOffset);
            if (p.template !== null && offset < p.hwm) {
              const tpl = p.template;
              const per = p.templateRecords;
              const limit = Math.min(fp.partitionMaxBytes, budget);
              const first = Math.floor(offset / per) * per;
              let n = 1;
              while ((n + 1) * tpl.length <= limit && first + n * per < p.hwm) n++;
              records = Buffer.allocUnsafe(n * tpl.length);
              for (let i = 0; i < n; i++) {
                tpl.copy(records, i * tpl.length);
                records.writeBigInt64BE(BigInt(first + i * per), i * tpl.length);
              }
              budget = Math.max(0, budget - records.length);
              empty = false;
            }
            return {
              partitionIndex: fp.partition,
              errorCode: 0,
              highWatermark: BigInt(p.hwm),
              lastStableOffset: BigInt(p.hwm),
              logStartOffset: 0n,
              abortedTransactions: [],
              preferredReadReplica: -1,
              records,
            };
          }),
        };
      }),
    };
    return { body, empty };
  }

  private listOffsets(req: ListOffsetsRequest): unknown {
    return {
      topics: req.topics.map((lt) => {
        const t = this.topics.get(lt.name);
        return {
          name: lt.name,
          partitions: lt.partitions.map((lp) => {
            const p = t?.partitions[lp.partitionIndex];
            if (!p) return { partitionIndex: lp.partitionIndex, errorCode: 3 };
            const offset = lp.timestamp === -2n ? 0 : p.hwm;
            return { partitionIndex: lp.partitionIndex, errorCode: 0, timestamp: -1n, offset: BigInt(offset), leaderEpoch: 0 };
          }),
        };
      }),
    };
  }
}

async function main(argv: string[]): Promise<void> {
  let host = '127.0.0.1';
  let port = 0;
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === '--port') port = Number(argv[++i]);
    else if (argv[i] === '--host') host = argv[++i];
    else throw new Error(`unknown argument ${argv[i]}`);
  }
  const broker = new NullBroker();
  await broker.listen(host, port);
  const stop = (): void => {
    broker.close();
    process.exit(0);
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
  // The bench keeps our stdin open; when it goes away (even killed), so do we.
  process.stdin.on('end', stop);
  process.stdin.on('error', stop);
  process.stdin.resume();
  process.stdout.write(`null-broker ready: PLAINTEXT://${broker.host}:${broker.port}\n`);
}

if (require.main === module) {
  main(process.argv.slice(2)).catch((err) => {
    process.stderr.write(`null-broker: ${(err as Error).stack ?? err}\n`);
    process.exit(1);
  });
}
