/**
 * The request side of the control API for one node (a broker's or the controller's dispatcher):
 * one RequestInterceptor that, for every decoded request, in this order
 *   1. refuses it by closing the connection when it comes from a node cut off from this one
 *      (`refusePeer`; the sending node is read from krill's inter-node client ids, see peerNodeOf),
 *   2. adds it to every active recording whose match it meets,
 *   3. holds it while the node is paused, then waits the node's added latency (`slow`); a held or
 *      delayed request is parked (RequestContext.parked: it stops counting against
 *      queued.max.requests, and the wait is not request time for the quota),
 *   4. applies the first armed rule it meets: answer with an error (a real response of that API
 *      and version, error-responses.ts), answer with a response the test builds (kfake's Control;
 *      a builder returning undefined passes), delay, drop (no answer, the client times out), close
 *      the connection, or run the handler and close instead of answering (a lost response).
 *
 * Rules: `times` counts the requests a rule applies to (after its probability draw); a rule with
 * neither `times` nor `probability` applies until removed. A rule that is used up removes itself.
 * Rules persist across restarts of the node (the control re-installs this interceptor).
 * An unknown API name, an error name Kafka does not have or an API without an error response is
 * refused when the rule is armed, with an Error saying which.
 */
import { ErrorCode, errorName } from '../../protocol/errors';
import { ALL_APIS, apiByKey } from '../../protocol/generated';
import { principalToString } from '../../common/kafka-principal';
import type { Logger } from '../../common/logger';
import type { RequestContext } from '../network/request-context';
import type { InterceptDecision, RequestInterceptor } from '../request-dispatcher';
import type * as ErrorResponses from './error-responses';

let errorResponsesModule: typeof ErrorResponses | undefined;
/**
 * error-responses.ts, loaded when a rule first needs it: it pulls in every message's schema
 * descriptors (~300 KB of code), which a broker that never arms a rule has no use for.
 */
function errorResponses(): typeof ErrorResponses {
  return (errorResponsesModule ??= require('./error-responses') as typeof ErrorResponses);
}
import { requestTopics, type RequestTopicPartition } from './request-topics';

/** A request as the control API shows it to matchers and recordings. */
export interface ObservedRequest {
  readonly apiKey: number;
  /** Kafka's name of the API: 'Produce', 'Fetch', ... */
  readonly apiName: string;
  readonly apiVersion: number;
  readonly correlationId: number;
  readonly clientId: string | null;
  /** 'User:ANONYMOUS', 'User:alice', ... */
  readonly principal: string;
  readonly listenerName: string;
  readonly securityProtocol: string;
  readonly remoteAddress: string;
  readonly receivedAtMs: number;
  /** The topics (and partitions) the request names. */
  readonly topics: readonly RequestTopicPartition[];
  /** The decoded request body (the generated request type of the API); undefined in a recording made with `bodies: false`. */
  readonly body: unknown;
}

/** Which requests a rule or recording applies to; every given condition must hold. */
export interface RequestMatch {
  /** API name ('Produce', case-insensitive) or key (0). */
  api?: string | number;
  /** One version, or an inclusive [min, max] range. */
  versions?: number | readonly [number, number];
  /** The request names this topic ... */
  topic?: string;
  /** ... and this partition of it (requires `topic`). */
  partition?: number;
  clientId?: string | RegExp;
  /** Any further condition. */
  when?: (request: ObservedRequest) => boolean;
}

export type RequestFault =
  /** Answer with this error (a Kafka error name such as 'NOT_LEADER_OR_FOLLOWER', or its code). */
  | { error: string | number }
  /** Wait this long, then serve the request normally. */
  | { delayMs: number }
  /** No answer at all: the connection stays open and the client's request times out. */
  | 'drop'
  /** Close the connection instead of serving the request. */
  | 'close'
  /** Serve the request (its effects happen), then close the connection instead of answering. */
  | 'closeAfterHandling'
  /**
   * Answer with this response body (kfake's Control): an object of the API's generated response
   * type, encoded at the request's version like a handler's answer, after dropping the fields that
   * version lacks. Returning undefined passes the request on (to later rules and the handler)
   * without counting a hit.
   */
  | { respond: (request: ObservedRequest) => object | undefined };

export interface FaultOptions {
  /** How many requests the rule applies to (default: until removed). */
  times?: number;
  /** Chance (0 < p <= 1) that a matching request is affected (default 1). */
  probability?: number;
}

export interface InterceptRule {
  /** Requests the rule has been applied to. */
  readonly hits: number;
  /** False once removed or used up. */
  readonly active: boolean;
  /** Resolves when the rule has been applied `times` times (or is removed). */
  readonly done: Promise<void>;
  remove(): void;
}

export interface RecordOptions {
  /**
   * Keep each request's decoded body (default true). A body references the request's frame
   * (Produce records included), so a long recording of busy traffic should drop them.
   */
  bodies?: boolean;
}

export interface RequestRecording {
  /** Every matching request so far, in arrival order. */
  readonly requests: readonly ObservedRequest[];
  /** Stops recording (the requests stay). */
  stop(): void;
}

interface Rule {
  match: CompiledMatch;
  fault: CompiledFault;
  remaining: number;
  probability: number;
  hits: number;
  active: boolean;
  resolve: () => void;
  label: string;
}

type CompiledMatch = (r: ObservedRequest) => boolean;
type CompiledFault =
  | { kind: 'error'; code: number }
  | { kind: 'delay'; ms: number }
  | { kind: 'drop' | 'close' | 'closeAfterHandling' }
  | { kind: 'respond'; fn: (request: ObservedRequest) => object | undefined };

/** The node a request comes from, when it is one of krill's own inter-node clients (else undefined). */
export function peerNodeOf(clientId: string | null): number | undefined {
  // krill-broker-<id>-<purpose> (controller link, transaction markers and verification),
  // krill-replica-fetcher-<id>-<leader> (follower fetching).
  const m = clientId === null ? null : /^krill-(?:broker|replica-fetcher)-(\d+)-/.exec(clientId);
  return m ? Number(m[1]) : undefined;
}

export function resolveApiKey(api: string | number): number {
  const info = typeof api === 'number' ? apiByKey(api) : ALL_APIS.find((a) => a.name.toLowerCase() === api.toLowerCase());
  if (!info) throw new Error(`unknown Kafka API ${JSON.stringify(api)}`);
  return info.apiKey;
}

export function resolveErrorCode(error: string | number): number {
  if (typeof error === 'number') {
    if (!Number.isInteger(error) || errorName(error).startsWith('UNKNOWN_ERROR_CODE')) throw new Error(`unknown Kafka error code ${error}`);
    return error;
  }
  const code = (ErrorCode as Record<string, number>)[error];
  if (code === undefined) throw new Error(`unknown Kafka error ${JSON.stringify(error)}`);
  return code;
}

function compileMatch(m: RequestMatch): { test: CompiledMatch; apiKey?: number; versions?: readonly [number, number] } {
  const apiKey = m.api === undefined ? undefined : resolveApiKey(m.api);
  const versions = m.versions === undefined ? undefined : typeof m.versions === 'number' ? ([m.versions, m.versions] as const) : m.versions;
  if (m.partition !== undefined && m.topic === undefined) throw new Error('a partition match needs a topic');
  const test: CompiledMatch = (r) => {
    if (apiKey !== undefined && r.apiKey !== apiKey) return false;
    if (versions && (r.apiVersion < versions[0] || r.apiVersion > versions[1])) return false;
    if (m.clientId !== undefined && (r.clientId === null || (typeof m.clientId === 'string' ? r.clientId !== m.clientId : !m.clientId.test(r.clientId)))) return false;
    if (m.topic !== undefined && !r.topics.some((t) => t.topic === m.topic && (m.partition === undefined || t.partition === m.partition))) return false;
    return m.when === undefined || m.when(r);
  };
  return { test, apiKey, versions };
}

export class RequestFaults {
  private readonly rules: Rule[] = [];
  private readonly recordings = new Set<{ match: CompiledMatch; requests: ObservedRequest[]; bodies: boolean }>();
  private readonly refused = new Set<number>();
  private pauseGate: { promise: Promise<void>; release: () => void } | null = null;
  private slowMs = 0;

  /** Where rule changes and injections are logged (the node's logger once attached). */
  log: Logger;
  /** A topic id to its name (the node's current metadata). */
  topicName: (id: string) => string | undefined = () => undefined;

  constructor(log: Logger, private readonly random: () => number = Math.random) {
    this.log = log;
  }

  /** What the node's dispatcher runs for every request (installed by the control). */
  readonly interceptor: RequestInterceptor = { intercept: (ctx, request) => this.decide(ctx, request) };

  /** Arms a rule; see the header for the order and the options. */
  intercept(match: RequestMatch, fault: RequestFault, opts: FaultOptions = {}): InterceptRule {
    return this.arm(match, fault, opts);
  }

  private arm(match: RequestMatch, fault: RequestFault, opts: FaultOptions): InterceptRule {
    const m = compileMatch(match);
    const compiled = compileFault(fault);
    if (compiled.kind === 'error') {
      if (m.apiKey === undefined) throw new Error('an error answer needs the API it answers (match.api)');
      const supported = errorResponses().errorResponseVersions(m.apiKey);
      const wanted = m.versions ?? [-Infinity, Infinity];
      if (!supported.some((v) => v >= wanted[0] && v <= wanted[1])) {
        throw new Error(`API ${apiByKey(m.apiKey)!.name} has no error response at the matched versions; use 'close', 'drop' or a delay`);
      }
    }
    const times = opts.times ?? Infinity;
    if (!(times === Infinity || (Number.isInteger(times) && times > 0))) throw new Error(`invalid times ${opts.times}: a positive integer`);
    const probability = opts.probability ?? 1;
    if (!(probability > 0 && probability <= 1)) throw new Error(`invalid probability ${opts.probability}: 0 < p <= 1`);
    let resolve!: () => void;
    const done = new Promise<void>((r) => (resolve = r));
    const label = `${match.api ?? 'any API'}${match.topic !== undefined ? ` ${match.topic}${match.partition !== undefined ? `-${match.partition}` : ''}` : ''} -> ${describeFault(compiled)}`;
    const rule: Rule = { match: m.test, fault: compiled, remaining: times, probability, hits: 0, active: true, resolve, label };
    this.rules.push(rule);
    this.log.info(`fault injection: rule armed (${label}${times !== Infinity ? `, ${times} time(s)` : ''}${probability < 1 ? `, p=${probability}` : ''})`);
    const remove = () => this.removeRule(rule);
    return {
      get hits() {
        return rule.hits;
      },
      get active() {
        return rule.active;
      },
      done,
      remove,
    };
  }

  private removeRule(rule: Rule): void {
    if (!rule.active) return;
    rule.active = false;
    const i = this.rules.indexOf(rule);
    if (i >= 0) this.rules.splice(i, 1);
    rule.resolve();
  }

  record(match: RequestMatch = {}, opts: RecordOptions = {}): RequestRecording {
    const entry = { match: compileMatch(match).test, requests: [] as ObservedRequest[], bodies: opts.bodies ?? true };
    this.recordings.add(entry);
    return { requests: entry.requests, stop: () => void this.recordings.delete(entry) };
  }

  /** Requests from krill's clients on node `peer` are refused (connection closed) until `acceptPeer`. */
  refusePeer(peer: number): void {
    this.refused.add(peer);
  }

  acceptPeer(peer: number): void {
    this.refused.delete(peer);
  }

  get refusedPeers(): ReadonlySet<number> {
    return this.refused;
  }

  /** Holds every request (after recording) until resume(). */
  pause(): void {
    if (this.pauseGate) return;
    let release!: () => void;
    const promise = new Promise<void>((r) => (release = r));
    this.pauseGate = { promise, release };
    this.log.info('fault injection: paused (requests are held)');
  }

  resume(): void {
    const g = this.pauseGate;
    if (!g) return;
    this.pauseGate = null;
    g.release();
    this.log.info('fault injection: resumed');
  }

  get paused(): boolean {
    return this.pauseGate !== null;
  }

  /** Adds `ms` of latency to every request (0: none). */
  slow(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new Error(`invalid latency ${ms} ms`);
    this.slowMs = ms;
    this.log.info(`fault injection: added latency ${ms} ms`);
  }

  /** Removes every rule, releases a pause and ends the added latency and refusals; recordings stay. */
  clear(): void {
    for (const r of [...this.rules]) this.removeRule(r);
    this.resume();
    this.slowMs = 0;
    this.refused.clear();
  }

  private async decide(ctx: RequestContext, body: unknown): Promise<InterceptDecision | undefined> {
    const peer = peerNodeOf(ctx.clientId);
    if (peer !== undefined && this.refused.has(peer)) return { action: 'close', reason: `fault injection: network cut from node ${peer}` };
    if (this.rules.length === 0 && this.recordings.size === 0 && this.pauseGate === null && this.slowMs === 0) return undefined;
    const observed = this.observe(ctx, body);
    for (const rec of this.recordings) if (rec.match(observed)) rec.requests.push(rec.bodies ? observed : { ...observed, body: undefined });
    // Held or delayed on purpose: not counted against queued.max.requests or the request-time quota.
    if (this.pauseGate || this.slowMs > 0) ctx.parked();
    while (this.pauseGate) await this.pauseGate.promise;
    if (this.slowMs > 0) await delay(this.slowMs);
    for (const rule of this.rules) {
      if (!rule.active || !rule.match(observed)) continue;
      if (rule.fault.kind === 'error' && !errorResponses().errorResponseSupported(observed.apiKey, observed.apiVersion)) continue;
      if (rule.probability < 1 && this.random() >= rule.probability) continue;
      let custom: object | undefined;
      if (rule.fault.kind === 'respond') {
        custom = rule.fault.fn(observed);
        if (custom === undefined) continue;
      }
      rule.hits++;
      if (--rule.remaining <= 0) this.removeRule(rule);
      this.log.debug(`fault injection: ${rule.label}`, { apiVersion: observed.apiVersion, correlationId: observed.correlationId, clientId: observed.clientId });
      if (rule.fault.kind === 'delay') ctx.parked();
      if (custom !== undefined) return { action: 'respond', response: errorResponses().fitResponseToVersion(observed.apiKey, observed.apiVersion, custom) };
      return this.apply(rule.fault, observed);
    }
    return undefined;
  }

  private async apply(f: CompiledFault, r: ObservedRequest): Promise<InterceptDecision | undefined> {
    switch (f.kind) {
      case 'error':
        return { action: 'respond', response: errorResponses().errorResponse(r.apiKey, r.apiVersion, r.body, f.code) };
      case 'delay':
        await delay(f.ms);
        return undefined;
      case 'drop':
        return { action: 'drop' };
      case 'close':
        return { action: 'close', reason: 'fault injection: connection closed' };
      case 'closeAfterHandling':
        return { action: 'closeAfterHandling', reason: 'fault injection: response lost' };
      case 'respond':
        return undefined; // answered in decide()
    }
  }

  private observe(ctx: RequestContext, body: unknown): ObservedRequest {
    return {
      apiKey: ctx.apiKey,
      apiName: apiByKey(ctx.apiKey)?.name ?? String(ctx.apiKey),
      apiVersion: ctx.apiVersion,
      correlationId: ctx.correlationId,
      clientId: ctx.clientId,
      principal: principalToString(ctx.principal),
      listenerName: ctx.connection.listenerName,
      securityProtocol: ctx.connection.securityProtocol,
      remoteAddress: ctx.connection.remoteAddress,
      receivedAtMs: ctx.receivedAtMs,
      topics: requestTopics(ctx.apiKey, body, this.topicName),
      body,
    };
  }
}

function compileFault(f: RequestFault): CompiledFault {
  if (f === 'drop' || f === 'close' || f === 'closeAfterHandling') return { kind: f };
  if (typeof f === 'object' && f !== null && 'error' in f) return { kind: 'error', code: resolveErrorCode(f.error) };
  if (typeof f === 'object' && f !== null && 'respond' in f) {
    if (typeof f.respond !== 'function') throw new Error('respond must be a function of the request returning a response body');
    return { kind: 'respond', fn: f.respond };
  }
  if (typeof f === 'object' && f !== null && 'delayMs' in f) {
    if (!Number.isFinite(f.delayMs) || f.delayMs < 0) throw new Error(`invalid delay ${f.delayMs} ms`);
    return { kind: 'delay', ms: f.delayMs };
  }
  throw new Error(`unknown fault ${JSON.stringify(f)}: { error }, { delayMs }, { respond }, 'drop', 'close' or 'closeAfterHandling'`);
}

function describeFault(f: CompiledFault): string {
  return f.kind === 'error' ? errorName(f.code) : f.kind === 'delay' ? `delay ${f.ms} ms` : f.kind === 'respond' ? 'custom response' : f.kind;
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
