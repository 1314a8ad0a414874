/**
 * A minimal Kafka protocol client for the bench: one connection, pipelined requests matched to
 * responses by correlation id, bodies encoded and decoded by protocol/generated. It exists so the
 * bench does not depend on krill's replication client (being written separately) and so the raw
 * fetch loop measures the broker, not a client's record decoding.
 */
import * as net from 'node:net';
import { APIS, type ApiMessages, type ApiName, responseHeaderVersion } from '../protocol/generated';
import { readResponseHeader, writeRequestHeader } from '../protocol/header';
import type { Input } from '../protocol/primitives/input';
import { Reader } from '../protocol/primitives/reader';
import { Writer } from '../protocol/primitives/writer';
import { FrameSplitter, writeChunks } from './framing';

interface Pending {
  apiKey: number;
  version: number;
  resolve(body: Reader): void;
  reject(err: Error): void;
}

export class WireClient {
  private nextCorrelationId = 1;
  private readonly pending = new Map<number, Pending>();
  private readonly splitter = new FrameSplitter();
  private failure: Error | null = null;

  private constructor(
    private readonly socket: net.Socket,
    private readonly clientId: string,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk) => {
      let frames: Buffer[];
      try {
        frames = this.splitter.push(chunk);
      } catch (err) {
        this.fail(err as Error);
        return;
      }
      for (const f of frames) this.onFrame(f);
    });
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('connection closed')));
  }

  /** Connects once; rejects on ECONNREFUSED and the like (the caller decides whether to retry). */
  static connect(host: string, port: number, clientId = 'krill-bench'): Promise<WireClient> {
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      const onError = (err: Error): void => {
        socket.destroy();
        reject(err);
      };
      socket.once('error', onError);
      socket.once('connect', () => {
        socket.off('error', onError);
        resolve(new WireClient(socket, clientId));
      });
    });
  }

  /** Sends one request; resolves with the decoded response body. */
  async request<K extends ApiName>(api: K, version: number, body: Input<ApiMessages[K]['request']>): Promise<ApiMessages[K]['response']> {
    const info = APIS[api];
    const r = await this.send(info.apiKey, version, (w) => info.writeRequest(w, version, body as never));
    return info.readResponse(r, version) as ApiMessages[K]['response'];
  }

  /** Sends one request; resolves with a Reader positioned at the response body. */
  send(apiKey: number, version: number, writeBody: (w: Writer) => void): Promise<Reader> {
    if (this.failure) return Promise.reject(this.failure);
    const correlationId = this.nextCorrelationId++;
    const w = new Writer(256);
    const size = w.reserveInt32();
    writeRequestHeader(w, apiKey, version, correlationId, this.clientId);
    writeBody(w);
    w.patchInt32(size, w.length - 4);
    return new Promise((resolve, reject) => {
      this.pending.set(correlationId, { apiKey, version, resolve, reject });
      writeChunks(this.socket, w.finish());
    });
  }

  close(): void {
    this.failure ??= new Error('client closed');
    this.socket.destroy();
  }

  private onFrame(frame: Buffer): void {
    const correlationId = frame.readInt32BE(0);
    const p = this.pending.get(correlationId);
    if (!p) {
      this.fail(new Error(`response with unknown correlation id ${correlationId}`));
      return;
    }
    this.pending.delete(correlationId);
    const r = new Reader(frame);
    try {
      readResponseHeader(r, responseHeaderVersion(p.apiKey, p.version));
    } catch (err) {
      p.reject(err as Error);
      return;
    }
    p.resolve(r);
  }

  private fail(err: Error): void {
    this.failure ??= err;
    for (const p of this.pending.values()) p.reject(err);
    this.pending.clear();
    this.socket.destroy();
  }
}
