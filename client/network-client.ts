/**
 * krill's own Kafka protocol client: one TCP connection to one broker (node:net, or node:tls when
 * the listener is SSL / SASL_SSL: `tls` in the options), speaking the generated codecs. Every
 * inter-broker request goes through it (via NodeChannel): follower fetches, a broker's link to its
 * controller, WriteTxnMarkers and verify-only AddPartitionsToTxn. The compatibility tests use it
 * directly.
 *
 *   const conn = await connect('127.0.0.1', 9092, { clientId: 'me' });   // ApiVersions negotiated
 *   const md = await conn.send('Metadata', undefined, { topics: null });  // version picked for us
 *   await conn.close();
 *
 * A BrokerConnection owns its socket, the 4-byte size framing of both directions and the queue of
 * requests in flight. Invariants:
 * - Requests may be pipelined; a broker answers them in order, so a response must carry the
 *   correlation id of the oldest request in flight. Anything else (or a frame size that is negative
 *   or above maxResponseBytes) means the byte stream can no longer be trusted: every pending request
 *   fails with ProtocolError and the connection is closed.
 * - Every request is bounded by a timeout. A timed-out request fails with RequestTimeoutError and
 *   closes the connection (as Kafka's own NetworkClient does): a late response could otherwise be
 *   mistaken for the answer to a later request.
 * - Once closed (by us, by the peer, by an error), every pending and every later request fails
 *   with ConnectionError; nothing waits forever.
 * - A request the broker never answers (Produce with acks=0) is sent with sendNoResponse(), which
 *   resolves when the bytes are handed to the kernel; send() refuses it, since it would never settle
 *   (short of its timeout).
 * - A response whose body does not decode, or decodes with bytes left over, fails that request with
 *   ProtocolError; the framing is intact, so the connection stays usable.
 *
 * SASL (the `sasl` option, for SASL_PLAINTEXT / SASL_SSL listeners): after ApiVersions, connect()
 * runs SaslHandshake v1 and SaslAuthenticate with the mechanism's client (broker/security/sasl/
 * builds them; this layer only carries tokens). A session lifetime from the broker (KIP-368) makes
 * the connection re-authenticate before its next request once 85-95% of it is spent; requests sent
 * meanwhile wait behind the exchange, in order.
 *
 * Version negotiation: connect() sends ApiVersions at our newest version; a broker that does not
 * support it answers UNSUPPORTED_VERSION with a v0 body listing its ranges (KIP-511), and we retry
 * at the newest version it offers. send() with version `undefined` then uses, per API,
 * min(our newest, broker's newest), provided that is not below either side's oldest.
 *
 * The helpers at the end (metadata, produce, listOffset, fetchAll, decodeRecordSet) turn per-partition
 * error codes into KafkaError exceptions and keep callers away from the request shapes.
 */
import * as net from 'node:net';
import type * as Tls from 'node:tls';
import { APIS, ApiKey, apiByKey, responseHeaderVersion, type ApiInfo, type ApiMessages, type ApiName } from '../protocol/generated';
import type { ApiVersionsResponse } from '../protocol/generated/api-versions';
import type { SaslAuthenticateResponse } from '../protocol/generated/sasl-authenticate';
import type { FetchResponsePartitionData } from '../protocol/generated/fetch';
import type { MetadataResponse } from '../protocol/generated/metadata';
import type { ProduceResponsePartitionProduceResponse } from '../protocol/generated/produce';
import { readResponseHeader, writeRequestHeader } from '../protocol/header';
import { ErrorCode, KafkaError, errorName } from '../protocol/errors';
import type { Input } from '../protocol/primitives/input';
import { Reader } from '../protocol/primitives/reader';
import { Writer } from '../protocol/primitives/writer';
import { ZERO_UUID } from '../protocol/primitives/uuid';
import { buildRecordBatch, type BatchOptions, type SimpleRecord } from '../protocol/records/memory-records-builder';
import { checkBatch, LOG_OVERHEAD, BATCH_LENGTH_OFFSET, type RecordBatch, TimestampType } from '../protocol/records/record-batch';
import { readRecords, type Record as KafkaRecord } from '../protocol/records/record';

let tlsModule: typeof Tls | undefined;
/** node:tls, loaded on first use: only TLS connections need it. */
const tls = (): typeof Tls => (tlsModule ??= require('node:tls') as typeof Tls);

// ---------------------------------------------------------------------------------------------
// Errors

/** Base class of every failure the client reports (besides KafkaError for broker error codes). */
export class ClientError extends Error {
  constructor(message: string) {
    super(message);
    this.name = new.target.name;
  }
}

/** Could not connect, or the connection is (or got) closed. */
export class ConnectionError extends ClientError {}

/** No response within the request's timeout (the connection is closed as a consequence). */
export class RequestTimeoutError extends ClientError {}

/** The broker sent bytes that are not a valid response to what we asked. */
export class ProtocolError extends ClientError {}

/** No version of the API that both sides support. */
export class UnsupportedVersionError extends ClientError {}

// ---------------------------------------------------------------------------------------------
// Connection

export interface ConnectOptions {
  /** Client id in every request header; default 'krill'. */
  clientId?: string | null;
  /** Bound on connecting plus the ApiVersions exchange; default 10 s. */
  timeoutMs?: number;
  /**
   * Default timeout of each request; default 30 s. Fetch and Produce get their own wait
   * (max_wait_ms, timeout_ms) on top, as a long poll is not a stalled broker.
   */
  requestTimeoutMs?: number;
  /** Send ApiVersions on connect and pick versions from the answer; default true. */
  negotiate?: boolean;
  /** Never pick a version above these (to emulate an older client). */
  maxVersions?: Partial<Record<ApiName, number>>;
  /** Largest response frame accepted; default 1 GiB. */
  maxResponseBytes?: number;
  /** Connect with TLS (a listener whose security protocol is SSL or SASL_SSL); plain TCP when absent. */
  tls?: ClientTlsOptions;
  /**
   * Authenticate with SASL after ApiVersions (a SASL_PLAINTEXT or SASL_SSL listener): SaslHandshake
   * v1, then SaslAuthenticate until the mechanism is done; re-authenticated before a request once
   * the session lifetime the broker gave is 85-95% spent (KIP-368). Needs `negotiate`.
   */
  sasl?: ClientSaslOptions;
}

/**
 * A SASL mechanism's client side, as broker/security/sasl/ builds it (its SaslClient): the first
 * token, then the answer to each server token (null when there is nothing more to send).
 */
export interface ClientSaslExchange {
  initialResponse(): Buffer;
  evaluateChallenge(challenge: Buffer): Buffer | null;
  readonly complete: boolean;
}

export interface ClientSaslOptions {
  /** The mechanism named in SaslHandshake ('PLAIN', 'SCRAM-SHA-512', ...). */
  readonly mechanism: string;
  /** A fresh exchange (one per authentication and re-authentication). */
  newClient(): ClientSaslExchange;
}

/**
 * How krill's client speaks TLS to a broker: the secure context built from the ssl.* settings (the
 * trust store the server certificate must chain to, the key store of a client certificate, the
 * protocol versions and cipher suites; broker/security/ssl builds it), and whether the server
 * certificate must name the host connected to (`ssl.endpoint.identification.algorithm=https`). The
 * chain is always verified.
 */
export interface ClientTlsOptions {
  secureContext: Tls.SecureContext;
  verifyHostname: boolean;
}

/**
 * How krill's own connections to one listener are secured, as the broker wiring hands it to the
 * components that open them (replica fetchers, the marker transport, transaction verification, the
 * controller link), which spread it into their ConnectOptions.
 */
export type ClientSecurity = Pick<ConnectOptions, 'tls' | 'sasl'>;

export interface SendOptions {
  /** Overrides the request's default timeout. */
  timeoutMs?: number;
}

export interface VersionRange {
  minVersion: number;
  maxVersion: number;
}

type RequestOf<K extends ApiName> = ApiMessages[K]['request'];
type ResponseOf<K extends ApiName> = ApiMessages[K]['response'];

interface InFlight {
  correlationId: number;
  apiKey: number;
  apiVersion: number;
  /** Decodes the body (reader positioned after the response header); undefined = raw bytes. */
  decode: ((r: Reader) => unknown) | undefined;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

const DEFAULT_CLIENT_ID = 'krill';
const SOFTWARE_NAME = 'krill';
const SOFTWARE_VERSION = '0.1.0';
const DEFAULT_CONNECT_TIMEOUT_MS = 10_000;
const DEFAULT_REQUEST_TIMEOUT_MS = 30_000;
const DEFAULT_MAX_RESPONSE_BYTES = 1 << 30;
const CLOSE_GRACE_MS = 2_000;
const INT32_MAX = 0x7fffffff;

function apiInfo(api: ApiName | number): ApiInfo {
  const info = typeof api === 'number' ? apiByKey(api) : (APIS[api] as ApiInfo | undefined);
  if (!info) throw new TypeError(`unknown API ${String(api)}`);
  return info;
}

/** Opens a connection and (unless negotiate is false) learns the broker's API versions. */
export async function connect(host: string, port: number, opts: ConnectOptions = {}): Promise<BrokerConnection> {
  const timeoutMs = opts.timeoutMs ?? DEFAULT_CONNECT_TIMEOUT_MS;
  const deadline = Date.now() + timeoutMs;
  const socket = await new Promise<net.Socket>((resolve, reject) => {
    const t = opts.tls;
    const s = t
      ? tls().connect({
          host,
          port,
          secureContext: t.secureContext,
          // SNI takes a host name only (RFC 6066); the identity check below still sees the address.
          servername: net.isIP(host) ? undefined : host,
          rejectUnauthorized: true,
          checkServerIdentity: t.verifyHostname ? tls().checkServerIdentity : () => undefined,
        })
      : net.connect({ host, port });
    const timer = setTimeout(() => {
      s.destroy();
      reject(new ConnectionError(`connect to ${host}:${port} timed out after ${timeoutMs} ms`));
    }, timeoutMs);
    // A TLS peer may close without an error (a refused handshake): that too ends the attempt.
    const closedEarly = () => {
      clearTimeout(timer);
      reject(new ConnectionError(`connection to ${host}:${port} closed before it was established`));
    };
    s.once('close', closedEarly);
    s.once(t ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      s.removeAllListeners('error');
      s.off('close', closedEarly);
      resolve(s);
    });
    s.once('error', (err) => {
      clearTimeout(timer);
      s.destroy();
      reject(new ConnectionError(`${t ? 'TLS connection' : 'connect'} to ${host}:${port} failed: ${err.message}`));
    });
  });
  const conn = new BrokerConnection(socket, host, port, opts);
  if (opts.negotiate === false) return conn;
  try {
    await conn.negotiate(Math.max(1, deadline - Date.now()));
    // SASL after ApiVersions, as Kafka's SaslClientAuthenticator does.
    if (opts.sasl) await conn.authenticate(Math.max(1, deadline - Date.now()));
  } catch (err) {
    await conn.close();
    throw err;
  }
  return conn;
}

export class BrokerConnection {
  readonly clientId: string | null;
  private readonly requestTimeoutMs: number;
  private readonly maxResponseBytes: number;
  private readonly maxVersions: Partial<Record<ApiName, number>>;
  private readonly inFlight: InFlight[] = [];
  private nextCorrelationId = 1;
  private chunks: Buffer[] = [];
  private buffered = 0;
  private closeReason: string | null = null;
  private readonly closedPromise: Promise<void>;
  private brokerVersions: Map<number, VersionRange> | null = null;
  private readonly sasl: ClientSaslOptions | undefined;
  /** KIP-368: when the SASL session is due for re-authentication (null: never). */
  private reauthAtMs: number | null = null;
  /** A re-authentication in progress: requests sent meanwhile wait for it, in order. */
  private reauthenticating: Promise<void> | null = null;

  /** Use connect(); the constructor takes an already connected socket. */
  constructor(
    private readonly socket: net.Socket,
    readonly host: string,
    readonly port: number,
    opts: ConnectOptions = {},
  ) {
    this.clientId = opts.clientId === undefined ? DEFAULT_CLIENT_ID : opts.clientId;
    this.requestTimeoutMs = opts.requestTimeoutMs ?? DEFAULT_REQUEST_TIMEOUT_MS;
    this.maxResponseBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
    this.maxVersions = opts.maxVersions ?? {};
    this.sasl = opts.sasl;
    socket.setNoDelay(true);
    this.closedPromise = new Promise((resolve) => socket.once('close', () => resolve()));
    socket.on('data', (chunk: Buffer) => this.onData(chunk));
    socket.on('error', (err) => this.fail(new ConnectionError(`connection to ${this.address} failed: ${err.message}`)));
    socket.on('close', () => this.fail(new ConnectionError(`connection to ${this.address} closed by the broker`)));
    // The peer half-closing means no more responses will come.
    socket.on('end', () => this.fail(new ConnectionError(`connection to ${this.address} closed by the broker`)));
  }

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  /** True once the connection can no longer carry requests. */
  get isClosed(): boolean {
    return this.closeReason !== null;
  }

  /** Why it closed (null while open). */
  get closedBecause(): string | null {
    return this.closeReason;
  }

  /** Resolves when the socket has fully closed (whoever closed it). */
  get closed(): Promise<void> {
    return this.closedPromise;
  }

  /** Requests sent and not yet answered. */
  get pendingRequests(): number {
    return this.inFlight.length;
  }

  /** The broker's advertised ranges (after negotiation), by API key. */
  get apiVersions(): ReadonlyMap<number, VersionRange> {
    if (!this.brokerVersions) throw new UnsupportedVersionError('API versions were not negotiated on this connection');
    return this.brokerVersions;
  }

  /** The version send() uses for an API: min(our newest, broker's newest), within both ranges. */
  versionFor(api: ApiName | number): number {
    const ours = apiInfo(api);
    const theirs = this.apiVersions.get(ours.apiKey);
    if (!theirs) throw new UnsupportedVersionError(`broker ${this.address} does not support ${ours.name} (${ours.apiKey})`);
    const cap = this.maxVersions[ours.name as ApiName];
    const max = Math.min(ours.maxVersion, theirs.maxVersion, cap ?? Infinity);
    const min = Math.max(ours.minVersion, theirs.minVersion);
    if (max < min) {
      throw new UnsupportedVersionError(
        `no common version of ${ours.name}: ours ${ours.minVersion}-${Math.min(ours.maxVersion, cap ?? Infinity)}, broker ${theirs.minVersion}-${theirs.maxVersion}`,
      );
    }
    return max;
  }

  /** Runs the ApiVersions exchange (connect() does this); usable again to refresh. */
  async negotiate(timeoutMs = this.requestTimeoutMs): Promise<ReadonlyMap<number, VersionRange>> {
    const ours = Math.min(APIS.ApiVersions.maxVersion, this.maxVersions.ApiVersions ?? Infinity);
    let res = await this.sendApiVersions(ours, timeoutMs);
    if (res.errorCode === ErrorCode.UNSUPPORTED_VERSION) {
      const theirs = res.apiKeys.find((k) => k.apiKey === ApiKey.ApiVersions);
      const retry = Math.min(ours, theirs?.maxVersion ?? 0);
      res = await this.sendApiVersions(retry, timeoutMs);
    }
    if (res.errorCode !== ErrorCode.NONE) {
      throw new KafkaError(res.errorCode, `ApiVersions failed: ${errorName(res.errorCode)}`);
    }
    const map = new Map<number, VersionRange>();
    for (const k of res.apiKeys) map.set(k.apiKey, { minVersion: k.minVersion, maxVersion: k.maxVersion });
    this.brokerVersions = map;
    return map;
  }

  /**
   * The SASL exchange (connect() runs it when `sasl` is set): SaslHandshake v1, then SaslAuthenticate
   * tokens until the mechanism is complete. Failures: KafkaError with the broker's code and message
   * (UNSUPPORTED_SASL_MECHANISM, SASL_AUTHENTICATION_FAILED, ...); the broker then closes the connection.
   */
  async authenticate(timeoutMs = this.requestTimeoutMs): Promise<void> {
    const sasl = this.sasl;
    if (!sasl) throw new TypeError('authenticate() needs the sasl connect option');
    const mechanism = sasl.mechanism;
    const hs = await this.sendNow('SaslHandshake', 1, { mechanism }, { timeoutMs });
    if (hs.errorCode !== ErrorCode.NONE) {
      const enabled = `[${hs.mechanisms.join(', ')}]`;
      const message =
        hs.errorCode === ErrorCode.UNSUPPORTED_SASL_MECHANISM
          ? `Client SASL mechanism '${mechanism}' not enabled in the server, enabled mechanisms are ${enabled}`
          : hs.errorCode === ErrorCode.ILLEGAL_SASL_STATE
            ? `Unexpected handshake request with client mechanism ${mechanism}, enabled mechanisms are ${enabled}`
            : `SaslHandshake failed: ${errorName(hs.errorCode)}`;
      throw new KafkaError(hs.errorCode, message);
    }
    const version = this.versionFor('SaslAuthenticate');
    const client = sasl.newClient();
    let token: Buffer | null = client.initialResponse();
    let lifetimeMs = 0n;
    while (token !== null) {
      const res: SaslAuthenticateResponse = await this.sendNow('SaslAuthenticate', version, { authBytes: token }, { timeoutMs });
      if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, res.errorMessage || `SASL authentication failed: ${errorName(res.errorCode)}`);
      lifetimeMs = res.sessionLifetimeMs;
      token = client.complete ? null : client.evaluateChallenge(res.authBytes);
    }
    if (!client.complete) throw new ProtocolError(`SASL ${mechanism} exchange with ${this.address} ended before the client completed it`);
    // Kafka's client re-authenticates after a random 85-95% of the session lifetime.
    this.reauthAtMs = lifetimeMs > 0n ? Date.now() + Math.floor(Number(lifetimeMs) * (0.85 + 0.1 * Math.random())) : null;
  }

  /** Runs `fn` once the SASL session is fresh: a due re-authentication goes first, and requests queue behind it. */
  private afterReauthentication<T>(fn: () => Promise<T>): Promise<T> {
    if (this.reauthenticating === null && this.reauthAtMs !== null && Date.now() >= this.reauthAtMs && this.closeReason === null) {
      this.reauthAtMs = null;
      this.reauthenticating = this.authenticate().then(
        () => {
          this.reauthenticating = null;
        },
        (err: Error) => {
          this.reauthenticating = null;
          this.fail(new ConnectionError(`re-authentication with ${this.address} failed: ${err.message}`));
          this.socket.destroy();
        },
      );
    }
    return this.reauthenticating === null ? fn() : this.reauthenticating.then(fn);
  }

  private sendApiVersions(version: number, timeoutMs: number): Promise<ApiVersionsResponse> {
    return this.send(
      'ApiVersions',
      version,
      { clientSoftwareName: SOFTWARE_NAME, clientSoftwareVersion: SOFTWARE_VERSION },
      { timeoutMs },
    );
  }

  /**
   * Sends a request and resolves with its decoded response. `version` undefined = the negotiated
   * version. Rejects with KafkaError never (error codes stay in the body), ConnectionError,
   * RequestTimeoutError, ProtocolError or an encoding error.
   */
  send<K extends ApiName>(api: K, version: number | undefined, body: Input<RequestOf<K>>, opts?: SendOptions): Promise<ResponseOf<K>>;
  send(api: number, version: number | undefined, body: unknown, opts?: SendOptions): Promise<unknown>;
  send(api: ApiName | number, version: number | undefined, body: unknown, opts: SendOptions = {}): Promise<unknown> {
    if (this.reauthAtMs === null && this.reauthenticating === null) return this.sendNow(api, version, body, opts);
    return this.afterReauthentication(() => this.sendNow(api, version, body, opts));
  }

  private sendNow<K extends ApiName>(api: K, version: number | undefined, body: Input<RequestOf<K>>, opts?: SendOptions): Promise<ResponseOf<K>>;
  private sendNow(api: ApiName | number, version: number | undefined, body: unknown, opts?: SendOptions): Promise<unknown>;
  private sendNow(api: ApiName | number, version: number | undefined, body: unknown, opts: SendOptions = {}): Promise<unknown> {
    let info: ApiInfo;
    let v: number;
    try {
      info = apiInfo(api);
      v = version ?? this.versionFor(info.apiKey);
      if (info.apiKey === ApiKey.Produce && (body as { acks?: number }).acks === 0) {
        throw new TypeError('a Produce request with acks=0 gets no response: use sendNoResponse()');
      }
    } catch (err) {
      return Promise.reject(err);
    }
    const timeoutMs = opts.timeoutMs ?? this.requestTimeoutMs + extraWaitMs(info.apiKey, body);
    return this.enqueue(
      info.apiKey,
      v,
      (w) => info.writeRequest(w, v, body as never),
      (r) => {
        if (info.apiKey !== ApiKey.ApiVersions) return info.readResponse(r, v);
        return readApiVersionsBody(r, v);
      },
      timeoutMs,
    );
  }

  /**
   * Sends a request the broker does not answer (Produce with acks=0); resolves once the bytes are
   * written to the socket. The next request on this connection is still answered in order.
   */
  sendNoResponse<K extends ApiName>(api: K, version: number | undefined, body: Input<RequestOf<K>>): Promise<void> {
    if (this.reauthAtMs !== null || this.reauthenticating !== null) return this.afterReauthentication(() => this.sendNoResponseNow(api, version, body));
    return this.sendNoResponseNow(api, version, body);
  }

  private sendNoResponseNow<K extends ApiName>(api: K, version: number | undefined, body: Input<RequestOf<K>>): Promise<void> {
    let info: ApiInfo;
    let v: number;
    let frame: Buffer[];
    try {
      info = apiInfo(api);
      v = version ?? this.versionFor(info.apiKey);
      if (info.apiKey !== ApiKey.Produce || (body as { acks?: number }).acks !== 0) {
        throw new TypeError(`only a Produce request with acks=0 goes unanswered, not ${info.name}`);
      }
      if (this.closeReason !== null) throw new ConnectionError(this.closeReason);
      frame = this.encode(info.apiKey, v, this.takeCorrelationId(), (w) => info.writeRequest(w, v, body as never));
    } catch (err) {
      return Promise.reject(err);
    }
    return this.write(frame);
  }

  /**
   * Sends a request whose body the caller encoded itself (tests of versions and bodies the codecs
   * refuse to write) and resolves with the response body bytes, header removed. The header versions
   * are those the API key and version call for; an unknown key uses request header v1.
   * expectResponse false: resolves when written, with null.
   */
  sendRaw(apiKey: number, apiVersion: number, body: Buffer, opts: SendOptions & { expectResponse?: boolean } = {}): Promise<Buffer | null> {
    if (opts.expectResponse === false) {
      let frame: Buffer[];
      try {
        if (this.closeReason !== null) throw new ConnectionError(this.closeReason);
        frame = this.encode(apiKey, apiVersion, this.takeCorrelationId(), (w) => w.raw(body));
      } catch (err) {
        return Promise.reject(err);
      }
      return this.write(frame).then(() => null);
    }
    return this.enqueue(
      apiKey,
      apiVersion,
      (w) => w.raw(body),
      undefined,
      opts.timeoutMs ?? this.requestTimeoutMs,
    ) as Promise<Buffer>;
  }

  /** Closes the connection; pending requests fail with ConnectionError. Idempotent. */
  async close(): Promise<void> {
    this.fail(new ConnectionError(`connection to ${this.address} closed by the client`));
    if (this.socket.destroyed) return;
    this.socket.end();
    const timer = setTimeout(() => this.socket.destroy(), CLOSE_GRACE_MS);
    await this.closedPromise;
    clearTimeout(timer);
  }

  /** Drops the connection at once (no FIN handshake); pending requests fail. */
  destroy(): void {
    this.fail(new ConnectionError(`connection to ${this.address} destroyed by the client`));
    this.socket.destroy();
  }

  // ---- internals ------------------------------------------------------------------------------

  private takeCorrelationId(): number {
    const id = this.nextCorrelationId;
    this.nextCorrelationId = id === INT32_MAX ? 1 : id + 1;
    return id;
  }

  private encode(apiKey: number, apiVersion: number, correlationId: number, writeBody: (w: Writer) => void): Buffer[] {
    const w = new Writer();
    const size = w.reserveInt32();
    const known = apiByKey(apiKey) !== undefined;
    writeRequestHeader(w, apiKey, apiVersion, correlationId, this.clientId, known ? undefined : 1);
    writeBody(w);
    w.patchInt32(size, w.length - 4);
    return w.finish();
  }

  private write(chunks: Buffer[]): Promise<void> {
    return new Promise((resolve, reject) => {
      if (this.closeReason !== null) {
        reject(new ConnectionError(this.closeReason));
        return;
      }
      const done = (err?: Error | null) => (err ? reject(new ConnectionError(`write to ${this.address} failed: ${err.message}`)) : resolve());
      if (chunks.length === 1) {
        this.socket.write(chunks[0], done);
        return;
      }
      this.socket.cork();
      for (let i = 0; i < chunks.length - 1; i++) this.socket.write(chunks[i]);
      this.socket.write(chunks[chunks.length - 1], done);
      this.socket.uncork();
    });
  }

  private enqueue(
    apiKey: number,
    apiVersion: number,
    writeBody: (w: Writer) => void,
    decode: ((r: Reader) => unknown) | undefined,
    timeoutMs: number,
  ): Promise<unknown> {
    if (this.closeReason !== null) return Promise.reject(new ConnectionError(this.closeReason));
    const correlationId = this.takeCorrelationId();
    let frame: Buffer[];
    try {
      frame = this.encode(apiKey, apiVersion, correlationId, writeBody);
    } catch (err) {
      return Promise.reject(err);
    }
    return new Promise((resolve, reject) => {
      const entry: InFlight = {
        correlationId,
        apiKey,
        apiVersion,
        decode,
        resolve,
        reject,
        timer: setTimeout(() => this.onTimeout(entry, timeoutMs), timeoutMs),
      };
      this.inFlight.push(entry);
      this.write(frame).catch((err: Error) => this.fail(err));
    });
  }

  private onTimeout(entry: InFlight, timeoutMs: number): void {
    const i = this.inFlight.indexOf(entry);
    if (i < 0) return;
    this.inFlight.splice(i, 1);
    const name = apiByKey(entry.apiKey)?.name ?? `API ${entry.apiKey}`;
    entry.reject(new RequestTimeoutError(`${name} v${entry.apiVersion} (correlation id ${entry.correlationId}) got no response from ${this.address} within ${timeoutMs} ms`));
    this.fail(new ConnectionError(`connection to ${this.address} closed after a request timed out`));
    this.socket.destroy();
  }

  /** Fails every pending request with `err` and marks the connection closed (first reason wins). */
  private fail(err: Error): void {
    if (this.closeReason === null) this.closeReason = err.message;
    const pending = this.inFlight.splice(0);
    for (const p of pending) {
      clearTimeout(p.timer);
      p.reject(err);
    }
    this.chunks = [];
    this.buffered = 0;
  }

  private protocolFailure(message: string): void {
    this.fail(new ProtocolError(`${message} (from ${this.address}); connection closed`));
    this.socket.destroy();
  }

  private onData(chunk: Buffer): void {
    if (this.closeReason !== null) return;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    while (this.buffered >= 4) {
      const size = this.peekSize();
      if (size < 0 || size > this.maxResponseBytes) {
        this.protocolFailure(`response frame size ${size} outside 0..${this.maxResponseBytes}`);
        return;
      }
      if (this.buffered < 4 + size) return;
      const frame = this.take(4 + size).subarray(4);
      this.onFrame(frame);
      if (this.closeReason !== null) return;
    }
  }

  private peekSize(): number {
    if (this.chunks[0].length >= 4) return this.chunks[0].readInt32BE(0);
    return Buffer.concat(this.chunks).readInt32BE(0);
  }

  private take(n: number): Buffer {
    const first = this.chunks[0];
    let out: Buffer;
    if (first.length >= n) {
      out = first.subarray(0, n);
      if (first.length === n) this.chunks.shift();
      else this.chunks[0] = first.subarray(n);
    } else {
      out = Buffer.allocUnsafe(n);
      let filled = 0;
      while (filled < n) {
        const c = this.chunks[0];
        const m = Math.min(c.length, n - filled);
        c.copy(out, filled, 0, m);
        filled += m;
        if (m === c.length) this.chunks.shift();
        else this.chunks[0] = c.subarray(m);
      }
    }
    this.buffered -= n;
    return out;
  }

  private onFrame(frame: Buffer): void {
    if (frame.length < 4) {
      this.protocolFailure(`response frame of ${frame.length} bytes has no correlation id`);
      return;
    }
    const correlationId = frame.readInt32BE(0);
    const head = this.inFlight[0];
    if (!head) {
      this.protocolFailure(`unsolicited response with correlation id ${correlationId}`);
      return;
    }
    if (head.correlationId !== correlationId) {
      this.protocolFailure(`response with correlation id ${correlationId} while ${head.correlationId} is the oldest request in flight`);
      return;
    }
    this.inFlight.shift();
    clearTimeout(head.timer);
    const name = apiByKey(head.apiKey)?.name ?? `API ${head.apiKey}`;
    let result: unknown;
    try {
      const r = new Reader(frame);
      readResponseHeader(r, responseHeaderVersion(head.apiKey, head.apiVersion));
      if (head.decode === undefined) {
        result = frame.subarray(r.pos);
      } else {
        result = head.decode(r);
        if (r.remaining !== 0) throw new Error(`${r.remaining} bytes left after the body`);
      }
    } catch (err) {
      head.reject(new ProtocolError(`cannot decode ${name} v${head.apiVersion} response: ${(err as Error).message}`));
      return;
    }
    head.resolve(result);
  }
}

/** Extra time a request may legitimately take on the broker before its timeout starts to count. */
function extraWaitMs(apiKey: number, body: unknown): number {
  const b = body as { maxWaitMs?: number; timeoutMs?: number };
  if (apiKey === ApiKey.Fetch) return Math.max(0, b.maxWaitMs ?? 0);
  if (apiKey === ApiKey.Produce || apiKey === ApiKey.CreateTopics || apiKey === ApiKey.DeleteTopics || apiKey === ApiKey.DeleteRecords || apiKey === ApiKey.CreatePartitions) {
    return Math.max(0, b.timeoutMs ?? 0);
  }
  return 0;
}

/**
 * ApiVersions body at `version`; a broker that does not support that version answers with a v0
 * body (KIP-511), so an UNSUPPORTED_VERSION answer, or a body that does not parse at `version`, is
 * read again as v0 (as Kafka's own client does).
 */
function readApiVersionsBody(r: Reader, version: number): ApiVersionsResponse {
  const start = r.pos;
  if (version > 0) {
    if (r.remaining >= 2 && r.buf.readInt16BE(r.pos) === ErrorCode.UNSUPPORTED_VERSION) {
      return APIS.ApiVersions.readResponse(r, 0);
    }
    try {
      const res = APIS.ApiVersions.readResponse(r, version);
      if (r.remaining === 0) return res;
    } catch {
      // fall through to v0
    }
    r.pos = start;
  }
  return APIS.ApiVersions.readResponse(r, 0);
}

// ---------------------------------------------------------------------------------------------
// Typed helpers

/**
 * Metadata for the named topics (null = all), without creating any from v4 on (before v4 the
 * request cannot say so: the broker's auto.create.topics.enable decides).
 */
export function metadata(conn: BrokerConnection, topics: string[] | null, opts: { allowAutoTopicCreation?: boolean; version?: number } = {}): Promise<MetadataResponse> {
  let version: number;
  try {
    version = opts.version ?? conn.versionFor('Metadata');
  } catch (err) {
    return Promise.reject(err);
  }
  return conn.send('Metadata', version, {
    topics: topics === null ? null : topics.map((name) => ({ name, topicId: ZERO_UUID })),
    ...(version >= 4 ? { allowAutoTopicCreation: opts.allowAutoTopicCreation ?? false } : {}),
  });
}

/** A topic's id and partition count; throws KafkaError with the topic's error code. */
export async function describeTopic(conn: BrokerConnection, topic: string): Promise<{ topicId: string; partitions: number }> {
  const md = await metadata(conn, [topic]);
  const t = md.topics.find((x) => x.name === topic);
  if (!t) throw new ProtocolError(`Metadata response does not mention topic ${topic}`);
  if (t.errorCode !== ErrorCode.NONE) throw new KafkaError(t.errorCode, `topic ${topic}: ${errorName(t.errorCode)}`);
  return { topicId: t.topicId, partitions: t.partitions.length };
}

export interface ProduceOptions {
  /** -1 (default), 1 or 0. */
  acks?: -1 | 0 | 1;
  timeoutMs?: number;
  version?: number;
  /** Options of the batch built from `records` (compression, producer id, ...). */
  batch?: BatchOptions;
}

export interface ProduceResult {
  baseOffset: bigint;
  logAppendTimeMs: bigint;
  logStartOffset: bigint;
}

/**
 * Produces one batch to one partition: `records` are built into a v2 batch, or sent as given when
 * already encoded. Resolves with the partition's result, or null for acks=0; throws KafkaError
 * with the partition's error code.
 */
export async function produce(
  conn: BrokerConnection,
  topic: string,
  partition: number,
  records: readonly SimpleRecord[] | Buffer,
  opts: ProduceOptions = {},
): Promise<ProduceResult | null> {
  const batch = Buffer.isBuffer(records) ? records : buildRecordBatch(records, opts.batch);
  const acks = opts.acks ?? -1;
  const body = {
    transactionalId: null,
    acks,
    timeoutMs: opts.timeoutMs ?? 30_000,
    topicData: [{ name: topic, partitionData: [{ index: partition, records: batch }] }],
  };
  if (acks === 0) {
    await conn.sendNoResponse('Produce', opts.version, body);
    return null;
  }
  const res = await conn.send('Produce', opts.version, body);
  const p: ProduceResponsePartitionProduceResponse | undefined = res.responses
    .find((t) => t.name === topic)
    ?.partitionResponses.find((x) => x.index === partition);
  if (!p) throw new ProtocolError(`Produce response does not mention ${topic}-${partition}`);
  if (p.errorCode !== ErrorCode.NONE) {
    throw new KafkaError(p.errorCode, `produce to ${topic}-${partition}: ${errorName(p.errorCode)}${p.errorMessage ? `: ${p.errorMessage}` : ''}`);
  }
  return { baseOffset: p.baseOffset, logAppendTimeMs: p.logAppendTimeMs, logStartOffset: p.logStartOffset };
}

/** ListOffsets special timestamps. */
export const OffsetSpec = { LATEST: -1n, EARLIEST: -2n, MAX_TIMESTAMP: -3n } as const;

/** One partition's ListOffsets answer; throws KafkaError with its error code. */
export async function listOffset(
  conn: BrokerConnection,
  topic: string,
  partition: number,
  timestamp: bigint,
  opts: { isolationLevel?: 0 | 1; version?: number } = {},
): Promise<{ offset: bigint; timestamp: bigint; leaderEpoch: number }> {
  const res = await conn.send('ListOffsets', opts.version, {
    replicaId: -1,
    isolationLevel: opts.isolationLevel ?? 0,
    topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp, maxNumOffsets: 1 }] }],
  });
  const p = res.topics.find((t) => t.name === topic)?.partitions.find((x) => x.partitionIndex === partition);
  if (!p) throw new ProtocolError(`ListOffsets response does not mention ${topic}-${partition}`);
  if (p.errorCode !== ErrorCode.NONE) throw new KafkaError(p.errorCode, `list offsets of ${topic}-${partition}: ${errorName(p.errorCode)}`);
  return { offset: p.offset, timestamp: p.timestamp, leaderEpoch: p.leaderEpoch };
}

/** A record read back, with what its batch says about it. */
export interface FetchedRecord extends KafkaRecord {
  timestampType: TimestampType;
  batchBaseOffset: bigint;
}

export interface DecodedRecordSet {
  /** Complete batches, checked (length, magic, CRC, offsets). */
  batches: RecordBatch[];
  /** Bytes of a trailing partial batch (a fetch may end with one), ignored. */
  partialBytes: number;
}

/**
 * Splits a fetched record set into batches. A fetch response may end with a truncated batch
 * (max_bytes reached), which is reported, not decoded; a complete batch that fails its checks
 * throws KafkaError (CORRUPT_MESSAGE...).
 */
export function decodeRecordSet(records: Buffer | null): DecodedRecordSet {
  const batches: RecordBatch[] = [];
  if (!records) return { batches, partialBytes: 0 };
  let pos = 0;
  while (pos < records.length) {
    const left = records.length - pos;
    if (left < LOG_OVERHEAD || records.readInt32BE(pos + BATCH_LENGTH_OFFSET) + LOG_OVERHEAD > left) {
      return { batches, partialBytes: left };
    }
    const b = checkBatch(records, pos);
    batches.push(b);
    pos += b.sizeInBytes;
  }
  return { batches, partialBytes: 0 };
}

/** The data records of a record set at or after `fromOffset` (control batches skipped). */
export function recordsOf(records: Buffer | null, fromOffset = 0n): FetchedRecord[] {
  const out: FetchedRecord[] = [];
  for (const b of decodeRecordSet(records).batches) {
    if (b.isControlBatch || b.lastOffset < fromOffset) continue;
    for (const r of readRecords(b)) {
      if (r.offset < fromOffset) continue;
      out.push(Object.assign(r, { timestampType: b.timestampType, batchBaseOffset: b.baseOffset }));
    }
  }
  return out;
}

export interface FetchAllOptions {
  version?: number;
  /** 0 = read_uncommitted (default), 1 = read_committed. */
  isolationLevel?: 0 | 1;
  partitionMaxBytes?: number;
  maxBytes?: number;
  /** Stop once this offset is reached (default: the high watermark seen by the first fetch, followed as it grows). */
  untilOffset?: bigint;
}

export interface FetchAllResult {
  records: FetchedRecord[];
  highWatermark: bigint;
  lastStableOffset: bigint;
  logStartOffset: bigint;
  /** Offset after the last batch read (where the next fetch would start). */
  nextOffset: bigint;
  /** Number of Fetch requests it took. */
  fetches: number;
}

/**
 * Reads every record of a partition from `fromOffset` up to its high watermark (or last stable
 * offset for read_committed) with sessionless fetches that do not wait. A fetch offset inside a
 * batch gets the whole batch; records before `fromOffset` are dropped, as clients do.
 * Throws KafkaError with the partition's error code (OFFSET_OUT_OF_RANGE...).
 */
export async function fetchAll(
  conn: BrokerConnection,
  topic: string,
  partition: number,
  fromOffset = 0n,
  opts: FetchAllOptions = {},
): Promise<FetchAllResult> {
  const version = opts.version ?? conn.versionFor('Fetch');
  const topicId = version >= 13 ? (await describeTopic(conn, topic)).topicId : ZERO_UUID;
  const records: FetchedRecord[] = [];
  let next = fromOffset;
  let fetches = 0;
  for (;;) {
    const res = await conn.send('Fetch', version, {
      replicaId: -1,
      replicaState: { replicaId: -1, replicaEpoch: -1n },
      maxWaitMs: 0,
      minBytes: 0,
      maxBytes: opts.maxBytes ?? 64 * 1024 * 1024,
      isolationLevel: opts.isolationLevel ?? 0,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [
        {
          topic,
          topicId,
          partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset: next, lastFetchedEpoch: -1, logStartOffset: -1n, partitionMaxBytes: opts.partitionMaxBytes ?? 8 * 1024 * 1024 }],
        },
      ],
      forgottenTopicsData: [],
      rackId: '',
    });
    fetches++;
    if (res.errorCode !== ErrorCode.NONE) throw new KafkaError(res.errorCode, `fetch from ${topic}-${partition}: ${errorName(res.errorCode)}`);
    const p: FetchResponsePartitionData | undefined = res.responses
      .find((t) => (version >= 13 ? t.topicId === topicId : t.topic === topic))
      ?.partitions.find((x) => x.partitionIndex === partition);
    if (!p) throw new ProtocolError(`Fetch response does not mention ${topic}-${partition}`);
    if (p.errorCode !== ErrorCode.NONE) {
      throw new KafkaError(p.errorCode, `fetch from ${topic}-${partition} at offset ${next}: ${errorName(p.errorCode)}`);
    }
    const end = opts.untilOffset ?? (opts.isolationLevel === 1 ? p.lastStableOffset : p.highWatermark);
    const { batches } = decodeRecordSet(p.records);
    const before = next;
    for (const b of batches) {
      if (b.nextOffset <= next) continue;
      if (!b.isControlBatch) {
        for (const r of readRecords(b)) {
          if (r.offset >= next && r.offset < end) records.push(Object.assign(r, { timestampType: b.timestampType, batchBaseOffset: b.baseOffset }));
        }
      }
      next = b.nextOffset;
    }
    if (next >= end) {
      return { records, highWatermark: p.highWatermark, lastStableOffset: p.lastStableOffset, logStartOffset: p.logStartOffset, nextOffset: next, fetches };
    }
    if (next === before) {
      throw new ProtocolError(`fetch from ${topic}-${partition} at offset ${next} returned no complete batch below the high watermark ${p.highWatermark}`);
    }
  }
}
