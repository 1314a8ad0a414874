/**
 * The server side of SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), as Kafka's
 * ScramSaslServer: one `ScramServerMechanism` per mechanism, registered with the SASL authenticator,
 * makes a `ScramSaslServer` per authentication. Credentials come from the broker's metadata image
 * (UserScramCredentialRecord, applied by MetadataCache): user + mechanism -> { salt, storedKey,
 * serverKey, iterations }, read at the moment the client-first message arrives.
 *
 * The exchange (two client tokens):
 * 1. client-first (scram-messages.ts: gs2 header "n" only). The user must have a credential for this
 *    mechanism with at least 4096 iterations; the answer is server-first with the client's nonce
 *    followed by a fresh server nonce (130 random bits in base 36, as Kafka), the stored salt and
 *    the stored iteration count.
 * 2. client-final: its nonce must end with the combined nonce; the proof must give, with the client
 *    signature over the AuthMessage, the stored key (constant-time comparison). The answer is
 *    server-final with the server signature, and the exchange is complete: `authorizationId()` is
 *    the user name (the principal's name).
 *
 * Failures, as Kafka answers them:
 * - everything Kafka raises as a SaslException (malformed message, unknown user, too few stored
 *   iterations, wrong nonce, wrong password, delegation-token authentication) is a SaslException
 *   (mechanism.ts) carrying Kafka's reason, for the broker's log: the authenticator tells the
 *   client only Kafka's generic text "Authentication failed during authentication due to invalid
 *   credentials with SASL mechanism <M>", so an unknown user and a wrong password look alike;
 * - an authzid in the gs2 header other than the user name is a plain SaslAuthenticationError whose
 *   message Kafka sends as it is: "Authentication failed: Client requested an authorization id that
 *   is different from username".
 * Extensions other than tokenauth are ignored. `tokenauth=true` asks for delegation-token
 * authentication; krill has no delegation tokens, so it fails the way Kafka fails an unknown token
 * id. The channel binding of client-final is not compared with the gs2 header (Kafka does not; it
 * is covered by the proof). After a failure or completion the server takes no more tokens.
 */
import { SaslAuthenticationError, SaslException, type SaslServer, type SaslServerMechanism } from './mechanism';
import {
  SCRAM_SHA_256,
  SCRAM_SHA_512,
  scramEqual,
  scramHash,
  scramHmac,
  scramXor,
  secureRandomString,
  type ScramMechanismInfo,
} from '../../../metadata/controller/scram-control-manager';
import type { ScramCredential } from '../../../metadata/metadata-cache';
import {
  authMessage,
  parseClientFinal,
  parseClientFirst,
  serverFirstText,
  usernameOf,
  writeServerFinal,
  type ClientFirstMessage,
  type ServerFirstMessage,
} from './scram-messages';

export { SCRAM_SHA_256, SCRAM_SHA_512 };

/** Where credentials are looked up: the broker's MetadataCache satisfies it. */
export interface ScramCredentialStore {
  scramCredential(user: string, mechanism: number): ScramCredential | undefined;
}

/** ScramLoginModule.TOKEN_AUTH_CONFIG: the one extension Kafka's SCRAM server understands. */
export const TOKEN_AUTH_EXTENSION = 'tokenauth';

export interface ScramServerOptions {
  /** The server nonce (default: Kafka's 130 random bits in base 36). Tests pass RFC vectors. */
  nonce?: () => string;
}

type State = 'RECEIVE_CLIENT_FIRST_MESSAGE' | 'RECEIVE_CLIENT_FINAL_MESSAGE' | 'COMPLETE' | 'FAILED';

export class ScramSaslServer implements SaslServer {
  private state: State = 'RECEIVE_CLIENT_FIRST_MESSAGE';
  private clientFirst: ClientFirstMessage | null = null;
  private serverFirst: ServerFirstMessage | null = null;
  private credential: ScramCredential | null = null;
  private user: string | null = null;

  constructor(
    readonly mechanism: ScramMechanismInfo,
    private readonly store: ScramCredentialStore,
    private readonly opts: ScramServerOptions = {},
  ) {}

  get complete(): boolean {
    return this.state === 'COMPLETE';
  }

  authorizationId(): string {
    if (this.state !== 'COMPLETE' || this.user === null) throw new Error('Authentication exchange has not completed');
    return this.user;
  }

  credentialExpiryMs(): number | undefined {
    return undefined; // only delegation tokens expire, and krill has none
  }

  evaluateResponse(token: Buffer): Buffer {
    try {
      switch (this.state) {
        case 'RECEIVE_CLIENT_FIRST_MESSAGE':
          return this.receiveClientFirst(token);
        case 'RECEIVE_CLIENT_FINAL_MESSAGE':
          return this.receiveClientFinal(token);
        default:
          throw new Error(`Unexpected challenge in Sasl server state ${this.state}`);
      }
    } catch (err) {
      this.clear();
      this.state = 'FAILED';
      throw err;
    }
  }

  /** Kafka's SaslException: `reason` goes to the log, the client gets the generic text. */
  private fail(reason: string): SaslException {
    return new SaslException(reason);
  }

  private receiveClientFirst(token: Buffer): Buffer {
    let first: ClientFirstMessage;
    try {
      first = parseClientFirst(token);
    } catch (err) {
      throw this.fail((err as Error).message);
    }
    this.clientFirst = first;
    const serverNonce = (this.opts.nonce ?? secureRandomString)();
    let username: string;
    try {
      username = usernameOf(first.saslName);
    } catch {
      throw this.fail('Authentication failed: Credentials could not be obtained');
    }
    if ((first.extensions.get(TOKEN_AUTH_EXTENSION) ?? '').toLowerCase() === 'true') {
      // Kafka looks the token id up in its delegation token cache; krill has no tokens.
      throw this.fail(`Token Authentication failed: Invalid tokenId : ${username}`);
    }
    const credential = this.store.scramCredential(username, this.mechanism.type);
    if (!credential) throw this.fail('Authentication failed: Invalid user credentials');
    if (first.authorizationId !== '' && first.authorizationId !== username) {
      throw new SaslAuthenticationError('Authentication failed: Client requested an authorization id that is different from username');
    }
    if (credential.iterations < this.mechanism.minIterations) {
      throw this.fail(`Iterations ${credential.iterations} is less than the minimum ${this.mechanism.minIterations} for ${this.mechanism.javaName}`);
    }
    this.user = username;
    this.credential = credential;
    this.serverFirst = { nonce: first.nonce + serverNonce, salt: credential.salt, iterations: credential.iterations };
    this.state = 'RECEIVE_CLIENT_FINAL_MESSAGE';
    return Buffer.from(serverFirstText(this.serverFirst), 'utf8');
  }

  private receiveClientFinal(token: Buffer): Buffer {
    let final;
    try {
      final = parseClientFinal(token);
    } catch (err) {
      throw this.fail((err as Error).message);
    }
    const first = this.clientFirst!;
    const serverFirst = this.serverFirst!;
    const credential = this.credential!;
    if (!final.nonce.endsWith(serverFirst.nonce)) throw this.fail('Invalid client nonce in the final client message.');
    const auth = authMessage(first, serverFirst, final);
    const clientSignature = scramHmac(this.mechanism, credential.storedKey, auth);
    // A proof of the wrong length cannot be the right one (Kafka's xor throws on it).
    if (final.proof.length !== clientSignature.length) throw this.fail('Invalid client credentials');
    const computedStoredKey = scramHash(this.mechanism, scramXor(clientSignature, final.proof));
    if (!scramEqual(computedStoredKey, credential.storedKey)) throw this.fail('Invalid client credentials');
    const serverSignature = scramHmac(this.mechanism, credential.serverKey, auth);
    const user = this.user;
    this.clear();
    this.user = user;
    this.state = 'COMPLETE';
    return writeServerFinal(serverSignature);
  }

  private clear(): void {
    this.credential = null;
    this.clientFirst = null;
    this.serverFirst = null;
  }
}

/** One SCRAM mechanism as the SASL authenticator offers it (SaslHandshake lists `name`). */
export class ScramServerMechanism implements SaslServerMechanism {
  readonly name: string;

  constructor(
    readonly mechanism: ScramMechanismInfo,
    private readonly store: ScramCredentialStore,
    private readonly opts: ScramServerOptions = {},
  ) {
    this.name = mechanism.mechanismName;
  }

  newServer(_listenerName: string): ScramSaslServer {
    return new ScramSaslServer(this.mechanism, this.store, this.opts);
  }
}

/** SCRAM-SHA-256 and SCRAM-SHA-512 over one credential store (the broker's metadata image). */
export function scramServerMechanisms(store: ScramCredentialStore, opts: ScramServerOptions = {}): ScramServerMechanism[] {
  return [new ScramServerMechanism(SCRAM_SHA_256, store, opts), new ScramServerMechanism(SCRAM_SHA_512, store, opts)];
}
