/**
 * SASL/OAUTHBEARER (RFC 7628, KIP-255) with Kafka's unsecured tokens, server and client, as
 * OAuthBearerSaslServer, OAuthBearerClientInitialResponse, OAuthBearerUnsecuredJws,
 * OAuthBearerUnsecuredValidatorCallbackHandler and OAuthBearerUnsecuredLoginCallbackHandler do it.
 * These tokens carry no signature: Kafka offers them for development and tests, and so does krill
 * (JWKS-validated tokens, Kafka's `secured` handlers, are not implemented and refused at startup).
 *
 * Client first message: `n,[a=<authzid>],^Aauth=Bearer <token>^A[<key>=<value>^A]*^A` (GS2 header,
 * then key/value pairs separated by ^A = 0x01). Anything else is "Invalid OAUTHBEARER client first
 * message" (a SaslException: the client is told only that its credentials were invalid).
 *
 * Token checks, in Kafka's order: compact serialization of three dot-separated parts (no '..'),
 * header and claims Base64 (java.util.Base64's basic alphabet, as Kafka decodes) JSON objects,
 * `alg` "none", no signature, the scope claim a string or a list, `exp` a number, the principal
 * claim (`sub`, or `unsecuredValidatorPrincipalClaimName`) a non-blank string, `iat` a number if
 * present, `iat` not after now + skew, now - skew before `exp`, `exp` after `iat`, and every scope
 * of `unsecuredValidatorRequiredScope` present (claim name `unsecuredValidatorScopeClaimName`,
 * default `scope`); skew is `unsecuredValidatorAllowableClockSkewMs` (default 0).
 *
 * A token that fails them is not an immediate failure: the server answers with Kafka's JSON error
 * (`{"status":"invalid_token"}`, or `{"status":"insufficient_scope", "scope":"[a, b]"}`) as its
 * challenge; the client replies with ^A and only then gets SASL_AUTHENTICATION_FAILED carrying that
 * JSON. A valid token completes the exchange with an empty server token; the principal is the
 * principal claim, the credential expires at `exp` (the session lifetime, KIP-368), and an
 * authorization id, if sent, must equal the principal. Extensions are all accepted (the unsecured
 * validator's rule).
 */
import { SaslAuthenticationError, SaslException, type SaslClient, type SaslServer, type SaslServerMechanism } from './mechanism';
import type { JaasEntry } from './jaas';

export const OAUTHBEARER_MECHANISM = 'OAUTHBEARER';
export const OAUTHBEARER_LOGIN_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule';
const SEPARATOR = '\u0001';
const CONTROL_A = 0x01;

// ---------------------------------------------------------------------------------------------
// The client's first message (OAuthBearerClientInitialResponse)

const SASLNAME = '(?:[\\x01-\\x2B\\x2D-\\x3C\\x3E-\\x7F]|=2C|=3D)+';
const KEY = '[A-Za-z]+';
const VALUE = '[\\x21-\\x7E \\t\\r\\n]+';
const CLIENT_INITIAL_RESPONSE = new RegExp(`^n,(?:a=(${SASLNAME}))?,${SEPARATOR}((?:${KEY}=${VALUE}${SEPARATOR})*)${SEPARATOR}$`);
const AUTH = /^(\w+) +([-_~+/.a-zA-Z0-9]+=*)$/;
const EXTENSION_KEY = new RegExp(`^${KEY}$`);
const EXTENSION_VALUE = new RegExp(`^${VALUE}$`);

export interface ClientInitialResponse {
  tokenValue: string;
  authorizationId: string;
  extensions: Map<string, string>;
}

export function parseClientInitialResponse(message: Buffer): ClientInitialResponse {
  const m = CLIENT_INITIAL_RESPONSE.exec(message.toString('utf8'));
  if (!m) throw new SaslException('Invalid OAUTHBEARER client first message');
  const properties = new Map<string, string>();
  for (const pair of m[2].split(SEPARATOR)) {
    if (pair === '') continue;
    const eq = pair.indexOf('=');
    properties.set(pair.slice(0, eq), pair.slice(eq + 1));
  }
  const auth = properties.get('auth');
  if (auth === undefined) throw new SaslException("Invalid OAUTHBEARER client first message: 'auth' not specified");
  properties.delete('auth');
  const a = AUTH.exec(auth);
  if (!a) throw new SaslException("Invalid OAUTHBEARER client first message: invalid 'auth' format");
  if (a[1].toLowerCase() !== 'bearer') {
    // Kafka formats this message with a group its pattern does not have, so the exception that
    // escapes is not a SaslException and the connection is closed without an answer; so here.
    throw new Error(`Invalid scheme in OAUTHBEARER client first message: ${a[1]}`);
  }
  return { tokenValue: a[2], authorizationId: m[1] ?? '', extensions: properties };
}

export function formatClientInitialResponse(tokenValue: string, authorizationId = '', extensions: ReadonlyMap<string, string> = new Map()): Buffer {
  for (const [k, v] of extensions) {
    if (k === 'auth' || !EXTENSION_KEY.test(k)) throw new Error(`Extension name ${k} is invalid`);
    if (!EXTENSION_VALUE.test(v)) throw new Error(`Extension value (${v}) for extension ${k} is invalid`);
  }
  const authzid = authorizationId === '' ? '' : `a=${authorizationId}`;
  let ext = [...extensions].map(([k, v]) => `${k}=${v}`).join(SEPARATOR);
  if (ext !== '') ext = SEPARATOR + ext;
  return Buffer.from(`n,${authzid},${SEPARATOR}auth=Bearer ${tokenValue}${ext}${SEPARATOR}${SEPARATOR}`, 'utf8');
}

// ---------------------------------------------------------------------------------------------
// Unsecured JWS (OAuthBearerUnsecuredJws) and its validation

/** OAuthBearerIllegalTokenException: why a token is refused; `failureScope` for insufficient scope. */
export class IllegalTokenError extends Error {
  constructor(
    message: string,
    readonly failureScope: string | null = null,
  ) {
    super(message);
    this.name = 'IllegalTokenError';
  }
}

type Claim = string | number | string[];

/** java.util.Base64.getDecoder(): the basic alphabet, padding optional but exact when present. */
function decodeBase64Basic(s: string): Buffer | null {
  const m = /^([A-Za-z0-9+/]*)(=*)$/.exec(s);
  if (!m) return null;
  const body = m[1];
  const pad = m[2].length;
  if (pad > 2 || (pad > 0 && (body.length + pad) % 4 !== 0) || body.length % 4 === 1) return null;
  return Buffer.from(body, 'base64');
}

/** The JSON object of one part, with Kafka's value conversion (arrays of text, numbers, text). */
function toMap(part: string): Map<string, Claim> {
  const bytes = decodeBase64Basic(part);
  if (bytes === null) throw new IllegalTokenError('malformed Base64 URL encoded value');
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString('utf8'));
  } catch {
    throw new IllegalTokenError('malformed JSON');
  }
  const out = new Map<string, Claim>();
  if (json === null || typeof json !== 'object' || Array.isArray(json)) return out;
  for (const [k, v] of Object.entries(json as Record<string, unknown>)) out.set(k, convert(v));
  return out;
}

/** Jackson's asText() of a node that is not an array. */
function asText(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === null) return 'null';
  if (typeof v === 'object') return '';
  return String(v);
}

function convert(v: unknown): Claim {
  if (Array.isArray(v)) return v.map(asText);
  if (typeof v === 'number') return v;
  return asText(v);
}

/** The Java class Kafka names in "was not of type" messages. */
function javaClassName(v: Claim): string {
  if (Array.isArray(v)) return 'ArrayList';
  if (typeof v === 'string') return 'String';
  if (!Number.isInteger(v)) return 'Double';
  if (v >= -(2 ** 31) && v < 2 ** 31) return 'Integer';
  return Number.isSafeInteger(v) ? 'Long' : 'BigInteger';
}

const isBlank = (s: string | undefined | null): boolean => s === undefined || s === null || s.trim() === '';

function claimOf(claims: Map<string, Claim>, name: string, type: 'String' | 'Number' | 'List'): Claim | undefined {
  const v = claims.get(name);
  if (v === undefined) return undefined;
  const ok = type === 'String' ? typeof v === 'string' : type === 'Number' ? typeof v === 'number' : Array.isArray(v);
  if (!ok) throw new IllegalTokenError(`The '${name}' claim was not of type ${type}: ${javaClassName(v)}`);
  return v;
}

export interface UnsecuredToken {
  readonly value: string;
  readonly principalName: string;
  /** `exp` in ms since the epoch. */
  readonly lifetimeMs: number;
  /** `iat` in ms, when present. */
  readonly startTimeMs: number | undefined;
  readonly scope: ReadonlySet<string>;
  readonly claims: ReadonlyMap<string, Claim>;
}

/** OAuthBearerUnsecuredJws's constructor: the token's structure and its required claims. */
export function parseUnsecuredJws(compact: string, principalClaimName: string, scopeClaimName: string): UnsecuredToken {
  if (compact.includes('..')) throw new IllegalTokenError("Malformed compact serialization contains '..'");
  // Java's split drops trailing empty strings; Kafka adds one back for a trailing '.'.
  const splits = compact.split('.');
  while (splits.length > 0 && splits[splits.length - 1] === '') splits.pop();
  if (compact.endsWith('.')) splits.push('');
  if (splits.length !== 3) throw new IllegalTokenError('Unsecured JWS compact serializations must have 3 dot-separated Base64URL-encoded values');
  const header = toMap(splits[0]);
  const claims = toMap(splits[1]);
  const alg = header.get('alg');
  // Kafka's Objects.requireNonNull: not a token error, so the connection is closed unanswered.
  if (alg === undefined) throw new Error('JWS header must have an Algorithm value');
  if (String(alg) !== 'none') throw new IllegalTokenError("Unsecured JWS must have 'none' for an algorithm");
  if (splits[2] !== '') throw new IllegalTokenError('Unsecured JWS must not contain a digital signature');
  let scope: Set<string>;
  const rawScope = claims.get(scopeClaimName);
  if (typeof rawScope === 'string') {
    scope = isBlank(rawScope) ? new Set() : new Set([rawScope.trim()]);
  } else {
    const list = claimOf(claims, scopeClaimName, 'List') as string[] | undefined;
    scope = new Set((list ?? []).filter((s) => !isBlank(s)).map((s) => s.trim()));
  }
  const exp = claimOf(claims, 'exp', 'Number') as number | undefined;
  if (exp === undefined) throw new IllegalTokenError('No expiration time in JWT');
  const principalName = claimOf(claims, principalClaimName, 'String') as string | undefined;
  if (isBlank(principalName)) throw new IllegalTokenError(`No principal name in JWT claim: ${principalClaimName}`);
  const iat = claimOf(claims, 'iat', 'Number') as number | undefined;
  return {
    value: compact,
    principalName: principalName!,
    lifetimeMs: Math.round(exp * 1000),
    startTimeMs: iat === undefined ? undefined : Math.round(iat * 1000),
    scope,
    claims,
  };
}

/** Java's %f. */
const f6 = (n: number): string => n.toFixed(6);

export interface UnsecuredValidatorOptions {
  principalClaimName: string;
  scopeClaimName: string;
  requiredScope: string[];
  allowableClockSkewMs: number;
}

/** Reads the unsecuredValidator* options of the OAUTHBEARER JAAS entry; throws on bad values (at startup). */
export function unsecuredValidatorOptions(entry: JaasEntry): UnsecuredValidatorOptions {
  const opt = (k: string) => entry.options.get(`unsecuredValidator${k}`);
  const principal = opt('PrincipalClaimName');
  const scope = opt('ScopeClaimName');
  const required = opt('RequiredScope');
  const skew = opt('AllowableClockSkewMs');
  const requiredScope: string[] = [];
  if (!isBlank(required)) {
    for (const item of required!.trim().split(' ')) {
      if (item === '') continue;
      if (!/^[\x21\x23-\x5B\x5D-\x7E]+$/.test(item)) throw new Error(`Invalid scope value: ${item}`);
      requiredScope.push(item);
    }
  }
  let allowableClockSkewMs = 0;
  if (!isBlank(skew)) {
    const t = skew!.trim();
    if (!/^[-+]?\d+$/.test(t) || Math.abs(Number(t)) > 2 ** 31 - 1) throw new Error(`For input string: "${t}"`);
    allowableClockSkewMs = Number(t);
    if (allowableClockSkewMs < 0) throw new Error(`Allowable clock skew millis must not be negative: ${skew}`);
  }
  return {
    principalClaimName: isBlank(principal) ? 'sub' : principal!.trim(),
    scopeClaimName: isBlank(scope) ? 'scope' : scope!.trim(),
    requiredScope,
    allowableClockSkewMs,
  };
}

/** OAuthBearerUnsecuredValidatorCallbackHandler.handleCallback: the token, or IllegalTokenError. */
export function validateUnsecuredToken(tokenValue: string, opts: UnsecuredValidatorOptions, nowMs: number): UnsecuredToken {
  const jws = parseUnsecuredJws(tokenValue, opts.principalClaimName, opts.scopeClaimName);
  const skew = opts.allowableClockSkewMs;
  const iat = jws.claims.get('iat') as number | undefined;
  const exp = jws.claims.get('exp') as number;
  if (iat !== undefined && 1000 * iat > nowMs + skew) {
    throw new IllegalTokenError(`The Issued At value (${f6(iat)} seconds) was after the indicated time (${nowMs} ms) plus allowable clock skew (${skew} ms)`);
  }
  if (nowMs - skew >= 1000 * exp) {
    throw new IllegalTokenError(`The indicated time (${nowMs} ms) minus allowable clock skew (${skew} ms) was on or after the Expiration Time value (${f6(exp)} seconds)`);
  }
  if (iat !== undefined && exp <= iat) {
    throw new IllegalTokenError(`The Expiration Time time (${f6(exp)} seconds) was not after the Issued At time (${f6(iat)} seconds)`);
  }
  for (const s of opts.requiredScope) {
    if (!jws.scope.has(s)) {
      const required = `[${opts.requiredScope.join(', ')}]`;
      throw new IllegalTokenError(
        `The provided scope ([${[...jws.scope].join(', ')}]) was missing a required scope (${s}).  All required scope elements: ${required}`,
        required,
      );
    }
  }
  return jws;
}

/** OAuthBearerSaslServer.jsonErrorResponse. */
function jsonErrorResponse(status: string, scope: string | null): string {
  let s = `{"status":"${status}"`;
  if (scope !== null) s += `, "scope":"${scope}"`;
  return s + '}';
}

// ---------------------------------------------------------------------------------------------
// Server

class OAuthBearerSaslServer implements SaslServer {
  private token: UnsecuredToken | null = null;
  private errorMessage: string | null = null;

  constructor(
    private readonly opts: UnsecuredValidatorOptions,
    private readonly now: () => number,
    private readonly onRejected?: (reason: string) => void,
  ) {}

  get complete(): boolean {
    return this.token !== null;
  }

  evaluateResponse(response: Buffer): Buffer {
    if (response.length === 1 && response[0] === CONTROL_A && this.errorMessage !== null) {
      throw new SaslAuthenticationError(this.errorMessage);
    }
    this.errorMessage = null;
    const first = parseClientInitialResponse(response);
    let token: UnsecuredToken;
    try {
      token = validateUnsecuredToken(first.tokenValue, this.opts, this.now());
    } catch (err) {
      if (!(err instanceof IllegalTokenError)) throw err;
      this.onRejected?.(err.message);
      this.errorMessage = jsonErrorResponse(err.failureScope !== null ? 'insufficient_scope' : 'invalid_token', err.failureScope);
      return Buffer.from(this.errorMessage, 'utf8');
    }
    if (first.authorizationId !== '' && first.authorizationId !== token.principalName) {
      throw new SaslAuthenticationError(
        `Authentication failed: Client requested an authorization id (${first.authorizationId}) that is different from the token's principal name (${token.principalName})`,
      );
    }
    this.token = token;
    return Buffer.alloc(0);
  }

  authorizationId(): string {
    if (!this.token) throw new Error('Authentication exchange has not completed');
    return this.token.principalName;
  }

  credentialExpiryMs(): number | undefined {
    return this.token?.lifetimeMs;
  }
}

export class OAuthBearerServerMechanism implements SaslServerMechanism {
  readonly name = OAUTHBEARER_MECHANISM;

  constructor(
    private readonly opts: UnsecuredValidatorOptions,
    private readonly now: () => number = Date.now,
    private readonly onRejected?: (reason: string) => void,
  ) {}

  newServer(_listenerName?: string): SaslServer {
    return new OAuthBearerSaslServer(this.opts, this.now, this.onRejected);
  }
}

// ---------------------------------------------------------------------------------------------
// Client

/**
 * OAuthBearerSaslClient: sends the token; an empty server answer completes the exchange, a
 * non-empty one is the server's error, answered with ^A (the server then fails the exchange).
 */
export class OAuthBearerSaslClient implements SaslClient {
  private state: 'initial' | 'sent' | 'failed' | 'complete' = 'initial';

  constructor(
    private readonly tokenValue: () => string,
    private readonly extensions: ReadonlyMap<string, string> = new Map(),
  ) {}

  get complete(): boolean {
    return this.state === 'complete';
  }

  initialResponse(): Buffer {
    this.state = 'sent';
    return formatClientInitialResponse(this.tokenValue(), '', this.extensions);
  }

  evaluateChallenge(challenge: Buffer): Buffer | null {
    if (this.state === 'sent' && challenge.length > 0) {
      this.state = 'failed';
      return Buffer.from([CONTROL_A]);
    }
    if (this.state === 'failed') return null;
    this.state = 'complete';
    return null;
  }
}

const RESERVED_CLAIMS = new Set(['iat', 'exp']);

/**
 * OAuthBearerUnsecuredLoginCallbackHandler: the unsecured token a broker presents as a client,
 * from the `unsecuredLogin*` options of its OAUTHBEARER JAAS entry (StringClaim_, NumberClaim_,
 * ListClaim_ (first character the delimiter), LifetimeSeconds (default 3600), PrincipalClaimName).
 */
export function unsecuredLoginToken(entry: JaasEntry, nowMs: number): string {
  const opts = entry.options;
  const principalClaimName = isBlank(opts.get('unsecuredLoginPrincipalClaimName')) ? 'sub' : opts.get('unsecuredLoginPrincipalClaimName')!.trim();
  const lifetime = opts.get('unsecuredLoginLifetimeSeconds') ?? '3600';
  if (!/^[-+]?\d+$/.test(lifetime)) throw new Error(`For input string: "${lifetime}"`);
  const iat = nowMs / 1000;
  const claims: Record<string, unknown> = { exp: iat + Number(lifetime), iat };
  for (const [k, v] of opts) {
    const m = /^unsecuredLogin(String|Number|List)Claim_(.+)$/.exec(k);
    if (!m) continue;
    if (RESERVED_CLAIMS.has(m[2])) throw new Error(`Cannot explicitly set the '${m[2]}' claim`);
    if (m[1] === 'String') claims[m[2]] = v;
    else if (m[1] === 'Number') claims[m[2]] = Number(v);
    else claims[m[2]] = v.length <= 1 ? [] : v.slice(1).split(v[0]);
  }
  if (isBlank(claims[principalClaimName] as string | undefined)) throw new Error(`No principal name in JWT claim: ${principalClaimName}`);
  // Kafka encodes base64url but its validator decodes the basic alphabet: unpadded basic Base64
  // passes both Kafka's validator and the token syntax of the client's first message.
  const b64 = (o: object) => Buffer.from(JSON.stringify(o), 'utf8').toString('base64').replace(/=+$/, '');
  return `${b64({ alg: 'none' })}.${b64(claims)}.`;
}

/** The `unsecuredLoginExtension_<name>` options: SASL extensions the client sends. */
export function unsecuredLoginExtensions(entry: JaasEntry): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of entry.options) if (k.startsWith('unsecuredLoginExtension_')) out.set(k.slice('unsecuredLoginExtension_'.length), v);
  return out;
}
