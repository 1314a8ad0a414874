/**
 * The contract between the SASL authenticator (the SaslHandshake / SaslAuthenticate exchange of a
 * connection) and the mechanisms it offers (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER), and
 * the client side of the same mechanisms, which krill's own client uses to reach secured
 * inter-broker and controller listeners.
 *
 * A server mechanism instance serves one authentication of one connection: the authenticator feeds
 * it the client's tokens in order and sends back what it returns, until `complete`. A failure is a
 * SaslAuthenticationError whose message is what Kafka says to the client (SASL_AUTHENTICATION_FAILED
 * carries it), or a SaslException (the client gets Kafka's generic text); any other error is an
 * internal failure (logged, the connection closed).
 */
export class SaslAuthenticationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SaslAuthenticationError';
  }
}

/**
 * Kafka's javax.security.sasl.SaslException from a mechanism: the client's credentials are wrong in
 * a way whose details must not reach an unauthenticated client. The authenticator answers
 * SASL_AUTHENTICATION_FAILED with Kafka's fixed text ("Authentication failed during authentication
 * due to invalid credentials with SASL mechanism <name>") and keeps this message for the log. In
 * the SaslHandshake v0 flow (raw tokens) it closes the connection at once, as Kafka does.
 */
export class SaslException extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'SaslException';
  }
}

export interface SaslServer {
  /** The next server token for the client's `token`; throws SaslAuthenticationError on bad credentials. */
  evaluateResponse(token: Buffer): Buffer | Promise<Buffer>;
  /** True once the exchange has succeeded (no more tokens expected). */
  readonly complete: boolean;
  /** The authenticated user name once complete (the principal's name). */
  authorizationId(): string;
  /**
   * When the credential itself expires (OAUTHBEARER's token `exp`), in ms since the epoch; the session
   * lifetime (KIP-368) is the earlier of this and connections.max.reauth.ms.
   */
  credentialExpiryMs?(): number | undefined;
}

export interface SaslServerMechanism {
  /** The mechanism's name as SaslHandshake lists it: 'PLAIN', 'SCRAM-SHA-256', ... */
  readonly name: string;
  /** A fresh exchange for one connection on `listenerName`. */
  newServer(listenerName: string): SaslServer;
}

export interface SaslClient {
  /** The first token to send (PLAIN: the whole credential; SCRAM: client-first-message). */
  initialResponse(): Buffer;
  /** The next token for the server's challenge, or null when the exchange is done. */
  evaluateChallenge(challenge: Buffer): Buffer | null;
  readonly complete: boolean;
}

/** Client credentials for krill's own connections (inter-broker, broker-to-controller). */
export interface SaslClientConfig {
  mechanism: string;
  username: string;
  password: string;
}
