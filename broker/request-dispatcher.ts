/**
 * Turns a request frame into a response frame: header -> version gate -> decode -> fault-injection
 * interceptors -> handler -> encode. Owns the mapping from API key to handler (at most one per
 * key), and the version gate: a handler's range, narrowed by version caps and by an emulated Kafka
 * release (krill.kafka.version, broker/kafka-version.ts), is what ApiVersions advertises and what
 * is served. The same dispatcher serves a broker's listeners (HANDLERS) and the controller node's
 * listener (CONTROLLER_HANDLERS).
 *
 * Kafka's rules kept here: an ApiVersions request of a version krill does not support is answered
 * with a v0 body carrying UNSUPPORTED_VERSION and krill's own ranges (KIP-511), always with
 * response header v0; any other unknown API key or unsupported version, and any request whose
 * header or body cannot be decoded, closes the connection (Kafka does the same), with the reason
 * logged. An exception from a handler is logged with the request's context and also closes the
 * connection: the broker's state is never left half-updated by it, because handlers only throw
 * before they change anything or after per-partition work has already been accounted for.
 *
 * SASL (broker/security/sasl/authenticator.ts) on SASL_PLAINTEXT / SASL_SSL listeners: the
 * connection's authenticator sees every frame first. Before authentication completes it admits only
 * ApiVersions, SaslHandshake and SaslAuthenticate (exempt from request quotas), takes raw tokens
 * after a SaslHandshake v0, and turns anything else into a close; an authentication failure closes
 * after connection.failed.authentication.delay.ms, once its answer (if Kafka sends one) is written.
 *
 * Metrics: `requestObserver` (set while metrics are on, broker/metrics/request-metrics.ts) hears of
 * every request the handler answered (or completed without an answer, acks=0), with its time since
 * its header was read and, for Fetch, whether a follower sent it.
 */
import { Reader, DecodeError } from '../protocol/primitives/reader';
import { Writer } from '../protocol/primitives/writer';
import { ErrorCode } from '../protocol/errors';
import { readRequestHeader, writeResponseHeader } from '../protocol/header';
import { ApiKey, apiByKey, responseHeaderVersion } from '../protocol/generated';
import { writeApiVersionsResponse } from '../protocol/generated/api-versions';
import type { ConnectionInfo, FrameProcessor, InFlightRequest, ProcessResult } from './network/connection';
import type { RequestContext } from './network/request-context';
import { CloseConnection, type HandlerSpec } from './handlers/define-handler';
import type { Broker } from './broker';
import type { Logger } from '../common/logger';
import type { ClientQuotaManager } from './quota/client-quota-manager';
import type { SaslGate, SaslRefusal, SaslServerAuthenticator } from './security/sasl/authenticator';

/** 100% of one thread for one second, per nanosecond (Kafka's NanosToPercentagePerSecond). */
const NANOS_TO_PERCENTAGE_PER_SECOND = 100 / 1e9;

/** A fault-injection hook: may answer, delay, drop or close instead of (or before) the handler. */
export interface RequestInterceptor {
  intercept(ctx: RequestContext, request: unknown): Promise<InterceptDecision | undefined> | InterceptDecision | undefined;
}

export type InterceptDecision =
  | { action: 'close'; reason?: string }
  | { action: 'drop' } // swallow the request: no response, connection stays (the client times out)
  | { action: 'respond'; response: unknown }
  // run the handler (its effects happen, e.g. a produce is appended), then close instead of answering:
  // the client sees a lost response and retries (tests of idempotent producers)
  | { action: 'closeAfterHandling'; reason?: string }
  | { action: 'pass' };

/**
 * What limits the versions a dispatcher serves: `versionCaps` (apiKey -> highest version), and
 * `emulatedVersions` when set (krill.kafka.version): only the APIs it lists, within its ranges.
 */
export interface VersionLimits {
  readonly versionCaps: ReadonlyMap<number, number>;
  readonly emulatedVersions?: ReadonlyMap<number, { minVersion: number; maxVersion: number }> | null;
}

/** An answered request: Kafka's API name, version, milliseconds since the frame arrived, and for Fetch whether from a follower. */
export type RequestObserver = (name: string, version: number, totalMs: number, fetchFromFollower: boolean | undefined) => void;

/** A Fetch request's replica id (replica_state from v15): >= 0 for a follower. */
function fetchReplicaId(request: unknown, version: number): number {
  const r = request as { replicaId?: number; replicaState?: { replicaId?: number } };
  return (version >= 15 ? r.replicaState?.replicaId : r.replicaId) ?? -1;
}

/** A broker, or the controller node (its own listener and handler registry). */
export class RequestDispatcher<Ctx extends VersionLimits = Broker> implements FrameProcessor {
  private readonly handlers = new Map<number, HandlerSpec<any, any, Ctx>>();
  readonly interceptors: RequestInterceptor[] = [];
  requestObserver: RequestObserver | undefined;

  constructor(
    private readonly broker: Ctx,
    handlers: readonly HandlerSpec<any, any, Ctx>[],
    private readonly log: Logger,
    /** The request-time quota (`request_percentage`); absent on the controller listener, which brokers use. */
    private readonly requestQuota?: ClientQuotaManager,
    /** The SASL listeners' authenticators; absent when no listener uses SASL. */
    private readonly sasl?: SaslGate,
  ) {
    for (const h of handlers) {
      if (this.handlers.has(h.apiKey)) throw new Error(`two handlers for API key ${h.apiKey}`);
      this.handlers.set(h.apiKey, h);
    }
  }

  /** The range served for a handler after the caps and any emulated release; null if none is left. */
  private rangeOf(h: HandlerSpec<any, any, Ctx>): { minVersion: number; maxVersion: number } | null {
    let min = h.minVersion;
    let max = h.maxVersion;
    const emulated = this.broker.emulatedVersions;
    if (emulated) {
      const r = emulated.get(h.apiKey);
      if (!r) return null;
      min = Math.max(min, r.minVersion);
      max = Math.min(max, r.maxVersion);
    }
    const cap = this.broker.versionCaps.get(h.apiKey);
    if (cap !== undefined) max = Math.min(max, cap);
    return min <= max ? { minVersion: min, maxVersion: max } : null;
  }

  /** The ranges advertised in ApiVersions, after any version caps and emulated release. */
  advertisedVersions(): { apiKey: number; minVersion: number; maxVersion: number }[] {
    const out: { apiKey: number; minVersion: number; maxVersion: number }[] = [];
    for (const h of [...this.handlers.values()].sort((a, b) => a.apiKey - b.apiKey)) {
      const r = this.rangeOf(h);
      if (r) out.push({ apiKey: h.apiKey, ...r });
    }
    return out;
  }

  /** The handlers' own ranges, before caps and emulation (what an emulated release is intersected with). */
  implementedVersions(): { apiKey: number; minVersion: number; maxVersion: number }[] {
    return [...this.handlers.values()].map((h) => ({ apiKey: h.apiKey, minVersion: h.minVersion, maxVersion: h.maxVersion }));
  }

  private supported(apiKey: number, version: number): HandlerSpec<any, any, Ctx> | undefined {
    const h = this.handlers.get(apiKey);
    if (!h) return undefined;
    const r = this.rangeOf(h);
    if (!r || version < r.minVersion || version > r.maxVersion) return undefined;
    return h;
  }

  /** SASL: frames of a connection still authenticating are bounded by sasl.server.max.receive.size. */
  frameLimit(conn: ConnectionInfo): { maxBytes: number; exceeded(size: number): Promise<ProcessResult> } | undefined {
    const sasl = this.sasl?.authenticatorFor(conn);
    const maxBytes = sasl?.receiveLimit();
    if (!sasl || maxBytes === undefined) return undefined;
    return { maxBytes, exceeded: (size) => this.saslOutcome(sasl.invalidReceive(size), sasl, conn) };
  }

  /** SASL: a refusal closes now; an authentication failure closes after the failure delay, after `answer` if any. */
  private async saslOutcome(a: SaslRefusal, sasl: SaslServerAuthenticator, conn: ConnectionInfo, inFlight?: InFlightRequest, answer?: Buffer[]): Promise<ProcessResult> {
    if (a.kind === 'close') return { kind: 'close', reason: a.reason };
    sasl.takeFailure();
    this.log.info(`Failed authentication with /${conn.remoteAddress} (${a.reason})`, { conn: conn.id, listener: conn.listenerName });
    inFlight?.parked();
    const delayMs = sasl.failedAuthenticationDelayMs;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const reason = `SASL authentication failed: ${a.reason}`;
    return answer ? { kind: 'respond', chunks: answer, closeAfterSend: reason } : { kind: 'close', reason };
  }

  async process(frame: Buffer, conn: ConnectionInfo, inFlight?: InFlightRequest): Promise<ProcessResult> {
    const onSent: (() => void)[] = [];
    const res = await this.processRequest(frame, conn, onSent, inFlight);
    if (onSent.length === 0) return res;
    const runAll = (): void => {
      for (const fn of onSent.splice(0)) {
        try {
          fn();
        } catch (err) {
          this.log.error('response-sent callback failed', { conn: conn.id, err });
        }
      }
    };
    if (res.kind === 'respond') return { ...res, onSent: runAll };
    runAll();
    return res;
  }

  private async processRequest(frame: Buffer, conn: ConnectionInfo, onSent: (() => void)[], inFlight?: InFlightRequest): Promise<ProcessResult> {
    const receivedAtMs = Date.now();
    const sasl = this.sasl?.authenticatorFor(conn);
    if (sasl?.expectsRawToken) {
      // After SaslHandshake v0 the frames are raw SASL tokens, answered with raw size-prefixed tokens.
      const res = await sasl.rawToken(frame);
      if (res.kind !== 'respond') return this.saslOutcome(res, sasl, conn, inFlight);
      const out = Buffer.allocUnsafe(4 + res.token.length);
      out.writeInt32BE(res.token.length, 0);
      res.token.copy(out, 4);
      return { kind: 'respond', chunks: [out] };
    }
    const r = new Reader(frame);
    let header;
    try {
      header = readRequestHeader(r);
    } catch (err) {
      if (sasl) return this.saslOutcome(sasl.undecodableHeader((err as Error).message), sasl, conn, inFlight);
      return { kind: 'close', reason: `cannot decode request header: ${(err as Error).message}` };
    }
    const { apiKey, apiVersion, correlationId, clientId } = header;
    // SASL: before authentication completes only the exchange's own requests get through.
    let saslAuthenticating = false;
    if (sasl) {
      const a = sasl.admit(apiKey);
      if (a.kind !== 'serve') return this.saslOutcome(a, sasl, conn, inFlight);
      saslAuthenticating = a.authenticating;
    }
    const startNs = process.hrtime.bigint();
    let parkedNs: bigint | null = null;
    let bandwidthThrottleMs = 0;
    let requestThrottle: number | null = null;
    let exempt = false;
    const principal = conn.principal;
    const ctx: RequestContext = {
      apiKey,
      apiVersion,
      correlationId,
      clientId,
      connection: conn,
      receivedAtMs,
      requestBytes: frame.length,
      onResponseSent: (fn) => onSent.push(fn),
      parked: () => {
        parkedNs ??= process.hrtime.bigint();
        inFlight?.parked();
      },
      principal,
      throttle: (ms) => {
        bandwidthThrottleMs = Math.max(bandwidthThrottleMs, ms);
      },
      requestThrottleMs: () => {
        if (requestThrottle !== null) return requestThrottle;
        if (!this.requestQuota || exempt) return (requestThrottle = 0);
        // Time spent on the request, without the time it waited on purpose.
        const nanos = Number((parkedNs ?? process.hrtime.bigint()) - startNs);
        requestThrottle = this.requestQuota.recordAndGetThrottleTimeMs(principal.name, clientId ?? '', nanos * NANOS_TO_PERCENTAGE_PER_SECOND, Date.now());
        return requestThrottle;
      },
    };
    const handler = this.supported(apiKey, apiVersion);
    if (!handler) {
      if (apiKey === ApiKey.ApiVersions) return this.unsupportedApiVersions(correlationId);
      const known = this.handlers.has(apiKey);
      return {
        kind: 'close',
        reason: known
          ? `unsupported version ${apiVersion} of API ${apiKey} (${this.handlers.get(apiKey)!.name})`
          : `unknown or disabled API key ${apiKey} (version ${apiVersion})`,
      };
    }
    const api = apiByKey(apiKey)!;
    let request: unknown;
    try {
      request = api.readRequest(r, apiVersion);
    } catch (err) {
      const why = err instanceof DecodeError ? err.message : String(err);
      return { kind: 'close', reason: `cannot decode ${handler.name} v${apiVersion} request: ${why}` };
    }
    exempt = saslAuthenticating || (handler.requestQuotaExempt?.(request) ?? false);

    let response: unknown;
    try {
      const decision = await this.runInterceptors(ctx, request);
      if (decision?.action === 'close') return { kind: 'close', reason: decision.reason ?? 'closed by fault injection' };
      if (decision?.action === 'drop') return { kind: 'noResponse' };
      response = decision?.action === 'respond' ? decision.response : await handler.handle(this.broker, ctx, request);
      if (decision?.action === 'closeAfterHandling') return { kind: 'close', reason: decision.reason ?? 'closed after handling by fault injection' };
    } catch (err) {
      if (err instanceof CloseConnection) return { kind: 'close', reason: err.message };
      this.log.error(`${handler.name} handler failed`, { apiVersion, correlationId, clientId, conn: conn.id, err });
      return { kind: 'close', reason: `internal error in ${handler.name}` };
    }
    // Kafka records the request time of every answered request that is not exempt (acks=0 produce
    // is, having no answer); the connection is muted for the larger of that throttle and the
    // handler's byte-rate throttle, and the response says so (KIP-219).
    const throttleMs = Math.max(bandwidthThrottleMs, response === null ? 0 : ctx.requestThrottleMs());
    if (this.requestObserver) {
      const fromFollower = apiKey === ApiKey.Fetch ? fetchReplicaId(request, apiVersion) >= 0 : undefined;
      this.requestObserver(handler.name, apiVersion, Number(process.hrtime.bigint() - startNs) / 1e6, fromFollower);
    }
    if (response === null) return { kind: 'noResponse', throttleMs };
    if (throttleMs > 0 && typeof response === 'object') response = { ...(response as object), throttleTimeMs: throttleMs };

    const w = new Writer();
    const size = w.reserveInt32();
    writeResponseHeader(w, responseHeaderVersion(apiKey, apiVersion), correlationId);
    try {
      api.writeResponse(w, apiVersion, response as never);
    } catch (err) {
      this.log.error(`cannot encode ${handler.name} v${apiVersion} response`, { correlationId, err });
      return { kind: 'close', reason: `internal error encoding ${handler.name}` };
    }
    w.patchInt32(size, w.length - 4);
    if (sasl) {
      if (apiKey === ApiKey.ApiVersions) sasl.apiVersionsAnswered((response as { errorCode?: number }).errorCode ?? ErrorCode.NONE);
      const failure = sasl.takeFailure();
      if (failure !== null) return this.saslOutcome({ kind: 'fail', reason: failure }, sasl, conn, inFlight, w.finish());
    }
    return { kind: 'respond', chunks: w.finish(), throttleMs };
  }

  private async runInterceptors(ctx: RequestContext, request: unknown): Promise<InterceptDecision | undefined> {
    for (const i of this.interceptors) {
      const d = await i.intercept(ctx, request);
      if (d && d.action !== 'pass') return d;
    }
    return undefined;
  }

  /** KIP-511: a v0 body with UNSUPPORTED_VERSION and our ranges, response header v0. */
  private unsupportedApiVersions(correlationId: number): ProcessResult {
    const w = new Writer();
    const size = w.reserveInt32();
    writeResponseHeader(w, 0, correlationId);
    writeApiVersionsResponse(w, 0, {
      errorCode: ErrorCode.UNSUPPORTED_VERSION,
      apiKeys: this.advertisedVersions(),
    });
    w.patchInt32(size, w.length - 4);
    return { kind: 'respond', chunks: w.finish() };
  }
}
