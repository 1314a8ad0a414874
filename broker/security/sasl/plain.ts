/**
 * SASL/PLAIN (RFC 4616), server and client, as Kafka's PlainSaslServer and
 * PlainServerCallbackHandler do it.
 *
 * Server: the one client message is `[authzid] NUL authcid NUL passwd` (UTF-8). The users are the
 * `user_<name>="<password>"` options of the listener's PLAIN JAAS entry, and only of an entry whose
 * login module is org.apache.kafka.common.security.plain.PlainLoginModule. Checks, in Kafka's order
 * and with its messages: exactly 3 tokens, a user name, a password, the password (compared in
 * constant time), and an authorization id that is empty or equal to the user name. The exchange
 * completes after that one message with an empty server token; the principal is the user name.
 *
 * Client: the broker's own credentials (`username` / `password` of the same JAAS entry), sent
 * with an empty authorization id.
 */
import { timingSafeEqual } from 'node:crypto';
import { SaslAuthenticationError, type SaslClient, type SaslServer, type SaslServerMechanism } from './mechanism';
import { jaasOption, type JaasEntry } from './jaas';

export const PLAIN_MECHANISM = 'PLAIN';
export const PLAIN_LOGIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule';
const JAAS_USER_PREFIX = 'user_';

/** Equal strings, in time that does not depend on where they differ. */
function equalConstantTime(a: string, b: string): boolean {
  const x = Buffer.from(a, 'utf8');
  const y = Buffer.from(b, 'utf8');
  if (x.length !== y.length) {
    timingSafeEqual(x, x);
    return false;
  }
  return timingSafeEqual(x, y);
}

/** PlainSaslServer.extractTokens: up to four NUL-separated pieces; anything but three is refused. */
function extractTokens(message: string): string[] {
  const tokens: string[] = [];
  let start = 0;
  for (let i = 0; i < 4; i++) {
    const end = message.indexOf('\u0000', start);
    if (end === -1) {
      tokens.push(message.slice(start));
      break;
    }
    tokens.push(message.slice(start, end));
    start = end + 1;
  }
  if (tokens.length !== 3) throw new SaslAuthenticationError(`Invalid SASL/PLAIN response: expected 3 tokens, got ${tokens.length}`);
  return tokens;
}

class PlainSaslServer implements SaslServer {
  private done = false;
  private user = '';

  constructor(private readonly passwordOf: (username: string) => string | undefined) {}

  get complete(): boolean {
    return this.done;
  }

  evaluateResponse(token: Buffer): Buffer {
    const [authorizationIdFromClient, username, password] = extractTokens(token.toString('utf8'));
    if (username.length === 0) throw new SaslAuthenticationError('Authentication failed: username not specified');
    if (password.length === 0) throw new SaslAuthenticationError('Authentication failed: password not specified');
    const expected = this.passwordOf(username);
    if (expected === undefined || !equalConstantTime(password, expected)) {
      throw new SaslAuthenticationError('Authentication failed: Invalid username or password');
    }
    if (authorizationIdFromClient.length > 0 && authorizationIdFromClient !== username) {
      throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username');
    }
    this.user = username;
    this.done = true;
    return Buffer.alloc(0);
  }

  authorizationId(): string {
    if (!this.done) throw new Error('Authentication exchange has not completed');
    return this.user;
  }
}

/** PLAIN on one listener, its users from that listener's JAAS entry. */
export class PlainServerMechanism implements SaslServerMechanism {
  readonly name = PLAIN_MECHANISM;

  constructor(private readonly jaas: readonly JaasEntry[]) {}

  newServer(_listenerName?: string): SaslServer {
    return new PlainSaslServer((username) => jaasOption(this.jaas, JAAS_USER_PREFIX + username, PLAIN_LOGIN_MODULE));
  }
}

/** The client side: one message with the credentials; complete once it is built. */
export class PlainSaslClient implements SaslClient {
  private sent = false;

  constructor(
    private readonly username: string,
    private readonly password: string,
    private readonly authorizationId = '',
  ) {}

  get complete(): boolean {
    return this.sent;
  }

  initialResponse(): Buffer {
    this.sent = true;
    return Buffer.from(`${this.authorizationId}\u0000${this.username}\u0000${this.password}`, 'utf8');
  }

  evaluateChallenge(_challenge?: Buffer): Buffer | null {
    return null;
  }
}
