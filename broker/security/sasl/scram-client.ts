/**
 * The client side of SASL/SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), as Kafka's
 * ScramSaslClient, for krill's own connections to secured listeners (inter-broker, broker to
 * controller): a SaslClient made from a SaslClientConfig { mechanism, username, password }.
 *
 *   initialResponse()        -> client-first "n,,n=<saslname>,r=<client nonce>"
 *   evaluateChallenge(first) -> client-final "c=biws,r=<nonce>,p=<proof>"
 *   evaluateChallenge(final) -> null, complete (the server's signature verified)
 *
 * Invariants: the exchange runs once, in that order; any failure leaves the client FAILED and is
 * thrown as a SaslAuthenticationError with Kafka's client-side message: a server nonce that does
 * not start with ours ("Invalid server nonce: does not start with client nonce"), fewer than 4096
 * iterations ("Requested iterations N is less than the minimum 4096 for SCRAM_SHA_256"), a server
 * error ("Sasl authentication using SCRAM_SHA_256 failed with error: e"), a wrong server signature
 * ("Invalid server signature in server final message"), a malformed message (Kafka's format text).
 * The salted password is computed with PBKDF2 synchronously (4096-16384 iterations: milliseconds),
 * once per exchange, and kept only until the exchange ends.
 */
import { SaslAuthenticationError, type SaslClient, type SaslClientConfig } from './mechanism';
import {
  clientKey,
  saltedPassword,
  scramEqual,
  scramHash,
  scramHmac,
  scramMechanismByName,
  scramXor,
  secureRandomString,
  serverKey,
  type ScramMechanismInfo,
} from '../../../metadata/controller/scram-control-manager';
import {
  authMessage,
  parseServerFinal,
  parseServerFirst,
  saslName,
  writeClientFinal,
  writeClientFirst,
  type ClientFirstMessage,
} from './scram-messages';

/** RFC 5802's gs2 header without channel binding or authzid, as Kafka's client sends it. */
const GS2_HEADER = Buffer.from('n,,', 'utf8');

export interface ScramClientOptions {
  /** The client nonce (default: Kafka's 130 random bits in base 36). Tests pass RFC vectors. */
  nonce?: () => string;
}

type State = 'SEND_CLIENT_FIRST_MESSAGE' | 'RECEIVE_SERVER_FIRST_MESSAGE' | 'RECEIVE_SERVER_FINAL_MESSAGE' | 'COMPLETE' | 'FAILED';

export class ScramSaslClient implements SaslClient {
  private state: State = 'SEND_CLIENT_FIRST_MESSAGE';
  private clientFirst: ClientFirstMessage | null = null;
  private auth: Buffer | null = null;
  private salted: Buffer | null = null;

  constructor(
    readonly mechanism: ScramMechanismInfo,
    private readonly username: string,
    private readonly password: string,
    private readonly opts: ScramClientOptions = {},
  ) {}

  get complete(): boolean {
    return this.state === 'COMPLETE';
  }

  initialResponse(): Buffer {
    if (this.state !== 'SEND_CLIENT_FIRST_MESSAGE') throw this.failed(`Unexpected challenge in Sasl client state ${this.state}`);
    const nonce = (this.opts.nonce ?? secureRandomString)();
    this.clientFirst = { authorizationId: '', saslName: saslName(this.username), nonce, extensions: new Map() };
    this.state = 'RECEIVE_SERVER_FIRST_MESSAGE';
    return writeClientFirst(this.clientFirst);
  }

  evaluateChallenge(challenge: Buffer): Buffer | null {
    try {
      switch (this.state) {
        case 'RECEIVE_SERVER_FIRST_MESSAGE':
          return this.receiveServerFirst(challenge);
        case 'RECEIVE_SERVER_FINAL_MESSAGE':
          this.receiveServerFinal(challenge);
          return null;
        default:
          throw new SaslAuthenticationError(`Unexpected challenge in Sasl client state ${this.state}`);
      }
    } catch (err) {
      this.salted = null;
      this.state = 'FAILED';
      throw err instanceof SaslAuthenticationError ? err : new SaslAuthenticationError((err as Error).message);
    }
  }

  private failed(message: string): SaslAuthenticationError {
    this.state = 'FAILED';
    return new SaslAuthenticationError(message);
  }

  private receiveServerFirst(challenge: Buffer): Buffer {
    const first = this.clientFirst!;
    const serverFirst = parseServerFirst(challenge);
    if (!serverFirst.nonce.startsWith(first.nonce)) throw new SaslAuthenticationError('Invalid server nonce: does not start with client nonce');
    if (serverFirst.iterations < this.mechanism.minIterations) {
      throw new SaslAuthenticationError(`Requested iterations ${serverFirst.iterations} is less than the minimum ${this.mechanism.minIterations} for ${this.mechanism.javaName}`);
    }
    this.salted = saltedPassword(this.mechanism, this.password, serverFirst.salt, serverFirst.iterations);
    const final = { channelBinding: GS2_HEADER, nonce: serverFirst.nonce };
    this.auth = authMessage(first, serverFirst, final);
    const key = clientKey(this.mechanism, this.salted);
    const clientSignature = scramHmac(this.mechanism, scramHash(this.mechanism, key), this.auth);
    this.state = 'RECEIVE_SERVER_FINAL_MESSAGE';
    return writeClientFinal({ ...final, proof: scramXor(key, clientSignature) });
  }

  private receiveServerFinal(challenge: Buffer): void {
    const final = parseServerFinal(challenge);
    if (final.error !== null) throw new SaslAuthenticationError(`Sasl authentication using ${this.mechanism.javaName} failed with error: ${final.error}`);
    const expected = scramHmac(this.mechanism, serverKey(this.mechanism, this.salted!), this.auth!);
    if (!scramEqual(final.serverSignature, expected)) throw new SaslAuthenticationError('Invalid server signature in server final message');
    this.salted = null;
    this.state = 'COMPLETE';
  }
}

/** True for the mechanisms this file implements. */
export function isScramMechanism(name: string): boolean {
  return scramMechanismByName(name) !== undefined;
}

/** A SCRAM client for krill's own connections; throws for a mechanism that is not SCRAM-SHA-256/512. */
export function createScramClient(config: SaslClientConfig, opts: ScramClientOptions = {}): ScramSaslClient {
  const m = scramMechanismByName(config.mechanism);
  if (!m) throw new Error(`Requested mechanisms '[${config.mechanism}]' not supported. Supported mechanisms are '[SCRAM-SHA-256, SCRAM-SHA-512]'.`);
  return new ScramSaslClient(m, config.username, config.password, opts);
}
