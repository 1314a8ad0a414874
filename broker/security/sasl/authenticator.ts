/**
 * The server side of SASL on one connection of a SASL_PLAINTEXT or SASL_SSL listener: Kafka's
 * SaslServerAuthenticator state machine, plus the parts of KafkaChannel, Selector and SocketServer
 * that decide what happens to a request before, during and after authentication.
 *
 * States (Kafka's names):
 *   INITIAL_REQUEST -> HANDSHAKE_OR_VERSIONS_REQUEST -(ApiVersions)-> HANDSHAKE_REQUEST
 *     -(SaslHandshake)-> AUTHENTICATE -(SaslAuthenticate ... or raw tokens after SaslHandshake v0)-> COMPLETE
 *   COMPLETE -(SaslHandshake on a connection with a session lifetime, KIP-368)-> REAUTH_PROCESS_HANDSHAKE
 *     -> AUTHENTICATE (same mechanism) | REAUTH_BAD_MECHANISM (another one) -> COMPLETE | FAILED
 *
 * Invariants:
 * - Until COMPLETE, only ApiVersions (before the handshake), SaslHandshake and SaslAuthenticate
 *   (after a v1 handshake) are served; the connection's principal stays ANONYMOUS (or, during
 *   re-authentication, the one it had). Any other request fails the authentication
 *   ("Unexpected Kafka request of type METADATA during SASL handshake.") and the connection is closed
 *   without an answer, after connection.failed.authentication.delay.ms as every authentication
 *   failure is (KIP-306). Out-of-protocol mistakes Kafka does not treat as authentication failures
 *   (a second ApiVersions, an unknown API key after the first request, an undecodable request)
 *   close at once.
 * - Every frame read while not COMPLETE is bounded by sasl.server.max.receive.size; a larger one
 *   fails the authentication ("Failing SASL authentication due to invalid receive size").
 * - After SaslHandshake v0 the client's frames are raw SASL tokens, answered with raw size-prefixed
 *   tokens (KIP-43's original flow); after v1 they are SaslAuthenticate requests.
 * - A failed exchange answers first when Kafka does (UNSUPPORTED_SASL_MECHANISM with the enabled
 *   mechanisms; SASL_AUTHENTICATION_FAILED with the mechanism's message, or Kafka's fixed text for a
 *   SaslException), and that answer too waits for the delay, then the connection closes.
 * - On success the principal becomes User:<authorization id>; the session lifetime is the earlier
 *   of the credential's expiry (OAUTHBEARER's `exp`) and connections.max.reauth.ms of the mechanism
 *   (0 for neither), reported in SaslAuthenticate v1+. Once the session has expired, any request but a
 *   SaslHandshake that starts re-authentication closes the connection at once (SocketServer's
 *   "Disconnecting expired channel"). Re-authentication needs a session lifetime and at least one
 *   second since the previous one started; otherwise SaslHandshake is answered ILLEGAL_SASL_STATE
 *   (KafkaApis), as is SaslAuthenticate after success. The principal may not change
 *   ("Cannot change principals during re-authentication from User.a: User.b").
 */
import { ErrorCode } from '../../../protocol/errors';
import { apiByKey, ApiKey } from '../../../protocol/generated';
import type { SaslAuthenticateResponse } from '../../../protocol/generated/sasl-authenticate';
import type { SaslHandshakeResponse } from '../../../protocol/generated/sasl-handshake';
import type { Input } from '../../../protocol/primitives/input';
import { type KafkaPrincipal, userPrincipal } from '../../../common/kafka-principal';
import type { Logger } from '../../../common/logger';
import { SystemTime, type Time } from '../../../common/time';
import type { KafkaConfig } from '../../../config/kafka-config';
import type { ConnectionInfo } from '../../network/connection';
import { SaslAuthenticationError, SaslException, type SaslServer } from './mechanism';
import { listenerSaslSettings, type ListenerSaslSettings, type SaslMechanismDeps } from './registry';

export type SaslState =
  | 'INITIAL_REQUEST'
  | 'HANDSHAKE_OR_VERSIONS_REQUEST'
  | 'HANDSHAKE_REQUEST'
  | 'AUTHENTICATE'
  | 'COMPLETE'
  | 'FAILED'
  | 'REAUTH_PROCESS_HANDSHAKE'
  | 'REAUTH_BAD_MECHANISM';

/** What to do with a request whose header was read (or with a frame that has none). */
export type SaslAdmission =
  /** Run it; `authenticating`: part of the exchange (exempt from quotas, as Kafka's authenticator serves it). */
  | { kind: 'serve'; authenticating: boolean }
  /** Close now, without an answer. */
  | { kind: 'close'; reason: string }
  /** The authentication failed: close after connection.failed.authentication.delay.ms, without an answer. */
  | { kind: 'fail'; reason: string };

/** A request or frame that is not served. */
export type SaslRefusal = Exclude<SaslAdmission, { kind: 'serve' }>;

/** The outcome of a raw token (SaslHandshake v0 flow). */
export type RawTokenResult = { kind: 'respond'; token: Buffer } | SaslRefusal;

/** Where handlers find a connection's authenticator. */
export const SASL_AUTHENTICATOR_ATTRIBUTE = 'sasl.authenticator';

/** Kafka's minimum interval between two re-authentications of one connection. */
const MIN_REAUTH_INTERVAL_MS = 1000;

/** Kafka's ApiKeys enum name ("METADATA", "FIND_COORDINATOR") of a generated API name. */
function kafkaApiName(apiKey: number): string {
  const name = apiByKey(apiKey)?.name ?? String(apiKey);
  return name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase();
}

export function isSaslProtocol(securityProtocol: string): boolean {
  return securityProtocol === 'SASL_PLAINTEXT' || securityProtocol === 'SASL_SSL';
}

export interface SaslAuthenticatorOptions {
  readonly settings: ListenerSaslSettings;
  readonly failedAuthenticationDelayMs: number;
  readonly time?: Time;
  readonly logger?: Logger;
}

export class SaslServerAuthenticator {
  private saslState: SaslState = 'INITIAL_REQUEST';
  private mechanism: string | null = null;
  private server: SaslServer | null = null;
  /** SaslHandshake v1+: tokens come in SaslAuthenticate requests (else raw, v0). */
  private kafkaHeaders = false;
  /** Set while re-authenticating (KIP-368). */
  private reauth: { previousMechanism: string; previousPrincipal: KafkaPrincipal } | null = null;
  private badMechanismMessage = '';
  /** When the session expires (ms since the epoch), or null for never. */
  private sessionExpiryMs: number | null = null;
  private lastReauthStartMs = 0;
  /** An authentication failure the current request caused: its answer goes out after the delay, then the connection closes. */
  private pendingFailure: string | null = null;
  private supportsReauth = false;
  private readonly time: Time;

  constructor(
    private readonly conn: ConnectionInfo,
    private readonly opts: SaslAuthenticatorOptions,
  ) {
    this.time = opts.time ?? SystemTime;
  }

  get state(): SaslState {
    return this.saslState;
  }

  /** True once authenticated (and not re-authenticating). */
  get complete(): boolean {
    return this.saslState === 'COMPLETE';
  }

  get failedAuthenticationDelayMs(): number {
    return this.opts.failedAuthenticationDelayMs;
  }

  /** The session's expiry (ms since the epoch), null for none. */
  get sessionExpiresAtMs(): number | null {
    return this.sessionExpiryMs;
  }

  /** Whether the client used SaslAuthenticate v1+ (it can re-authenticate). */
  get connectedClientSupportsReauthentication(): boolean {
    return this.supportsReauth;
  }

  private get text(): string {
    return this.reauth ? 're-authentication' : 'authentication';
  }

  /** sasl.server.max.receive.size while the exchange runs; undefined once authenticated. */
  receiveLimit(): number | undefined {
    return this.saslState === 'COMPLETE' ? undefined : this.opts.settings.maxReceiveSize;
  }

  /** A frame over receiveLimit() (or with a negative size). */
  invalidReceive(size: number): SaslRefusal {
    return this.failWith(`Failing SASL authentication due to invalid receive size (size = ${size}, limit ${this.opts.settings.maxReceiveSize})`);
  }

  /** After SaslHandshake v0, frames are raw SASL tokens, not Kafka requests. */
  get expectsRawToken(): boolean {
    return !this.kafkaHeaders && (this.saslState === 'AUTHENTICATE' || this.saslState === 'REAUTH_BAD_MECHANISM');
  }

  /** A request header that does not decode. */
  undecodableHeader(why: string): SaslRefusal {
    if (this.saslState === 'INITIAL_REQUEST') {
      // Kafka takes such a first packet for a GSSAPI token (0.9 clients); krill has no GSSAPI.
      return this.failWith(`Exception handling first SASL packet from client, GSSAPI is not supported by server (${why})`);
    }
    if (this.saslState === 'COMPLETE') return { kind: 'close', reason: `cannot decode request header: ${why}` };
    this.saslState = 'FAILED';
    return { kind: 'close', reason: `cannot decode request header during SASL ${this.text}: ${why}` };
  }

  /** Decides about a request from its header. */
  admit(apiKey: number, nowMs = this.time.milliseconds()): SaslAdmission {
    switch (this.saslState) {
      case 'COMPLETE':
        if (apiKey === ApiKey.SaslHandshake && this.maybeBeginReauthentication(nowMs)) return { kind: 'serve', authenticating: true };
        if (this.sessionExpiryMs !== null && nowMs > this.sessionExpiryMs) {
          this.saslState = 'FAILED';
          return { kind: 'close', reason: `SASL session expired (${kafkaApiName(apiKey)} after the session lifetime): disconnecting expired channel` };
        }
        return { kind: 'serve', authenticating: false };
      case 'INITIAL_REQUEST':
      case 'HANDSHAKE_OR_VERSIONS_REQUEST':
      case 'HANDSHAKE_REQUEST':
      case 'REAUTH_PROCESS_HANDSHAKE': {
        const known = apiByKey(apiKey) !== undefined;
        if (!known) {
          if (this.saslState === 'INITIAL_REQUEST') return this.failWith('Exception handling first SASL packet from client, GSSAPI is not supported by server');
          this.saslState = 'FAILED';
          return { kind: 'close', reason: `unknown API key ${apiKey} during SASL ${this.text}` };
        }
        if (this.saslState === 'INITIAL_REQUEST') this.saslState = 'HANDSHAKE_OR_VERSIONS_REQUEST';
        if (apiKey !== ApiKey.ApiVersions && apiKey !== ApiKey.SaslHandshake) {
          return this.failWith(`Unexpected Kafka request of type ${kafkaApiName(apiKey)} during SASL handshake.`);
        }
        if (apiKey === ApiKey.ApiVersions && this.saslState !== 'HANDSHAKE_OR_VERSIONS_REQUEST') {
          const state = this.saslState;
          this.saslState = 'FAILED';
          return { kind: 'close', reason: `Unexpected ApiVersions request received during SASL authentication state ${state}` };
        }
        return { kind: 'serve', authenticating: true };
      }
      case 'AUTHENTICATE':
        if (apiKey !== ApiKey.SaslAuthenticate) {
          // Kafka answers with the request type's error response (ILLEGAL_SASL_STATE) before closing;
          // krill closes without one.
          return this.failWith(`Unexpected Kafka request of type ${kafkaApiName(apiKey)} during SASL authentication.`);
        }
        return { kind: 'serve', authenticating: true };
      case 'REAUTH_BAD_MECHANISM':
        return this.failWith(this.badMechanismMessage);
      case 'FAILED':
        return { kind: 'close', reason: 'SASL authentication failed' };
    }
  }

  /** KafkaChannel.maybeBeginServerReauthentication. */
  private maybeBeginReauthentication(nowMs: number): boolean {
    if (this.sessionExpiryMs === null) return false;
    if (this.lastReauthStartMs !== 0 && nowMs - this.lastReauthStartMs < MIN_REAUTH_INTERVAL_MS) return false;
    this.lastReauthStartMs = nowMs;
    this.reauth = { previousMechanism: this.mechanism!, previousPrincipal: this.conn.principal };
    this.server = null;
    this.kafkaHeaders = false;
    this.saslState = 'REAUTH_PROCESS_HANDSHAKE';
    this.opts.logger?.debug('beginning re-authentication', { conn: this.conn.id, mechanism: this.mechanism });
    return true;
  }

  /** ApiVersions was answered: next comes the handshake (a failed ApiVersions leaves the state). */
  apiVersionsAnswered(errorCode: number): void {
    if (this.saslState === 'HANDSHAKE_OR_VERSIONS_REQUEST' && errorCode === ErrorCode.NONE) this.saslState = 'HANDSHAKE_REQUEST';
  }

  /** SaslHandshake. */
  handshake(mechanism: string, version: number): Input<SaslHandshakeResponse> {
    if (this.saslState === 'COMPLETE') return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
    const enabled = [...this.opts.settings.enabledMechanisms];
    if (version >= 1) this.kafkaHeaders = true;
    if (!this.opts.settings.mechanisms.has(mechanism)) {
      this.failWith(`Unsupported SASL mechanism ${mechanism}`);
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms: enabled };
    }
    if (this.reauth && this.reauth.previousMechanism !== mechanism) {
      this.badMechanismMessage = `SASL mechanism '${mechanism}' requested by client is not supported for re-authentication of mechanism '${this.reauth.previousMechanism}'`;
      this.saslState = 'REAUTH_BAD_MECHANISM';
    } else {
      this.mechanism = mechanism;
      this.server = this.opts.settings.mechanisms.get(mechanism)!.newServer(this.opts.settings.listenerName);
      this.saslState = 'AUTHENTICATE';
    }
    return { errorCode: ErrorCode.NONE, mechanisms: enabled };
  }

  /** SaslAuthenticate (after SaslHandshake v1+). A mechanism's internal error is thrown (the connection closes at once). */
  async authenticate(authBytes: Buffer, version: number): Promise<Input<SaslAuthenticateResponse>> {
    if (this.saslState !== 'AUTHENTICATE' || !this.server) {
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate request received after successful authentication' };
    }
    if (!this.supportsReauth) this.supportsReauth = version > 0;
    const server = this.server;
    try {
      const token = await server.evaluateResponse(Buffer.from(authBytes));
      let lifetime = 0;
      if (server.complete) lifetime = this.completed(server);
      const res: Input<SaslAuthenticateResponse> = { errorCode: ErrorCode.NONE, authBytes: token };
      if (version >= 1) res.sessionLifetimeMs = BigInt(lifetime);
      return res;
    } catch (err) {
      let message: string;
      if (err instanceof SaslAuthenticationError) message = err.message;
      else if (err instanceof SaslException) {
        this.opts.logger?.debug(`SASL ${this.mechanism} exchange refused: ${err.message}`, { conn: this.conn.id });
        message = `Authentication failed during ${this.text} due to invalid credentials with SASL mechanism ${this.mechanism}`;
      } else throw err;
      this.failWith(message);
      return { errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: message };
    }
  }

  /** A raw token (after SaslHandshake v0). */
  async rawToken(token: Buffer): Promise<RawTokenResult> {
    if (this.saslState === 'REAUTH_BAD_MECHANISM') return this.failWith(this.badMechanismMessage);
    const server = this.server!;
    try {
      const response = await server.evaluateResponse(Buffer.from(token));
      if (server.complete) this.completed(server);
      return { kind: 'respond', token: response };
    } catch (err) {
      if (err instanceof SaslAuthenticationError) return this.failWith(err.message);
      this.saslState = 'FAILED';
      const why = err instanceof SaslException ? err.message : `internal error: ${(err as Error).message}`;
      if (!(err instanceof SaslException)) this.opts.logger?.error(`SASL ${this.mechanism} mechanism failed`, { conn: this.conn.id, err });
      return { kind: 'close', reason: `SASL ${this.text} failed: ${why}` };
    }
  }

  /** The exchange succeeded: principal, state and session lifetime (ReauthInfo.calcCompletionTimesAndReturnSessionLifetimeMs). */
  private completed(server: SaslServer): number {
    const principal = userPrincipal(server.authorizationId());
    if (this.reauth) {
      const prev = this.reauth.previousPrincipal;
      if (prev.principalType !== principal.principalType || prev.name !== principal.name) {
        throw new SaslAuthenticationError(
          `Cannot change principals during re-authentication from ${prev.principalType}.${prev.name}: ${principal.principalType}.${principal.name}`,
        );
      }
    }
    const now = this.time.milliseconds();
    const credentialExpiry = server.credentialExpiryMs?.();
    const maxReauth = this.opts.settings.connectionsMaxReauthMs.get(this.mechanism!) ?? 0;
    let lifetime = 0;
    if (credentialExpiry !== undefined || maxReauth > 0) {
      if (credentialExpiry === undefined) lifetime = Math.max(0, maxReauth);
      else if (maxReauth <= 0) lifetime = Math.max(0, credentialExpiry - now);
      else lifetime = Math.max(0, Math.min(credentialExpiry - now, maxReauth));
      this.sessionExpiryMs = now + lifetime;
    } else {
      this.sessionExpiryMs = null;
    }
    this.conn.principal = principal;
    this.opts.logger?.debug(`${this.reauth ? 're-' : ''}authenticated`, {
      conn: this.conn.id,
      mechanism: this.mechanism,
      principal: `${principal.principalType}:${principal.name}`,
      sessionLifetimeMs: lifetime,
    });
    this.reauth = null;
    this.server = null;
    this.saslState = 'COMPLETE';
    return lifetime;
  }

  private failWith(reason: string): Extract<SaslAdmission, { kind: 'fail' }> {
    this.saslState = 'FAILED';
    this.pendingFailure = reason;
    return { kind: 'fail', reason };
  }

  /** The authentication failure the last request caused, if any (once). */
  takeFailure(): string | null {
    const f = this.pendingFailure;
    this.pendingFailure = null;
    return f;
  }
}

/** The connection's authenticator (undefined on PLAINTEXT / SSL listeners). */
export function saslAuthenticatorOf(conn: ConnectionInfo): SaslServerAuthenticator | undefined {
  return conn.attributes.get(SASL_AUTHENTICATOR_ATTRIBUTE) as SaslServerAuthenticator | undefined;
}

/**
 * The SASL listeners of one server (broker or controller node): hands every connection of a SASL
 * listener its authenticator, created on its first frame.
 */
export class SaslGate {
  constructor(
    private readonly listeners: ReadonlyMap<string, ListenerSaslSettings>,
    private readonly failedAuthenticationDelayMs: number,
    private readonly logger?: Logger,
    private readonly time: Time = SystemTime,
  ) {}

  /**
   * Validates and builds the settings of every SASL listener among `listeners`; undefined when there
   * is none. Throws ConfigException (startup fails) for a listener krill cannot serve.
   */
  static forListeners(
    config: KafkaConfig,
    listeners: readonly { listenerName: string; securityProtocol: string }[],
    deps: SaslMechanismDeps = {},
  ): SaslGate | undefined {
    const map = new Map<string, ListenerSaslSettings>();
    for (const l of listeners) {
      if (isSaslProtocol(l.securityProtocol)) map.set(l.listenerName, listenerSaslSettings(config, l.listenerName, deps));
    }
    if (map.size === 0) return undefined;
    return new SaslGate(map, config.getInt('connection.failed.authentication.delay.ms'), deps.logger, deps.time ?? SystemTime);
  }

  settings(listenerName: string): ListenerSaslSettings | undefined {
    return this.listeners.get(listenerName);
  }

  /** The authenticator of a connection on a SASL listener; undefined for other listeners. */
  authenticatorFor(conn: ConnectionInfo): SaslServerAuthenticator | undefined {
    if (!isSaslProtocol(conn.securityProtocol)) return undefined;
    let a = saslAuthenticatorOf(conn);
    if (!a) {
      const settings = this.listeners.get(conn.listenerName);
      // A secured listener never serves an unauthenticated request: without settings, nothing is served.
      if (!settings) throw new Error(`no SASL settings for listener ${conn.listenerName}`);
      a = new SaslServerAuthenticator(conn, {
        settings,
        failedAuthenticationDelayMs: this.failedAuthenticationDelayMs,
        time: this.time,
        logger: this.logger,
      });
      conn.attributes.set(SASL_AUTHENTICATOR_ATTRIBUTE, a);
    }
    return a;
  }
}
