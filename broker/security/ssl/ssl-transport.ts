/**
 * The TLS side of an SSL or SASL_SSL listener (Kafka's SslTransportLayer + SslAuthenticator): the
 * SocketServer hands it each admitted socket; it runs the server handshake and reports the secured
 * socket with the principal TLS client authentication gave it.
 *
 * - `ssl.client.auth=required`: a client without a certificate, or with one that does not chain to
 *   the trust store, fails the handshake. `requested`: a client may present none (ANONYMOUS), but a
 *   certificate it does present must verify, as Java's wantClientAuth works. `none`: no certificate
 *   is asked for.
 * - On SSL listeners the principal is `User:<name>`, the name being what ssl.principal.mapping.rules
 *   make of the certificate's subject (Java's RFC 2253 form, distinguished-name.ts); without a
 *   certificate, User:ANONYMOUS. A subject no rule maps fails the connection (Kafka refuses it). On
 *   SASL_SSL listeners the principal is left to SASL (null).
 * - A handshake that fails (a plaintext client, a bad certificate, a timeout) closes the socket
 *   without a byte of Kafka protocol, logged as Kafka logs it ("Failed authentication with <address>
 *   (SSL handshake failed)"). The handshake is bounded by connections.max.idle.ms, as Kafka's idle
 *   expiry bounds a channel that never completes it.
 *
 * Implementation: one unlistening tls.Server per listener, fed admitted sockets with
 * emit('connection'), so node's own server-side verification (authorized / authorizationError)
 * applies. Its events carry the TLS socket, matched back to the admitted one by the connection's
 * address 4-tuple, which is unique among live connections; a socket node closed itself (which then
 * has no addresses) is settled by the admitted socket's own close, so every admitted socket is
 * reported exactly once.
 *
 * reload: new key / trust stores from dynamic broker configs, for handshakes from then on.
 *
 * validateInterBroker: at startup, for the inter-broker listener, a client and a server built from
 * the same settings must complete a handshake in memory (Kafka's keystoreVerifiableUsingTruststore),
 * so a broker whose trust store does not trust its own key store fails to start instead of failing
 * to replicate.
 */
import type * as Tls from 'node:tls';
import { Duplex } from 'node:stream';
import type { Socket } from 'node:net';
import type { Logger } from '../../../common/logger';
import { ANONYMOUS, userPrincipal, type KafkaPrincipal } from '../../../common/kafka-principal';
import { ConfigException } from '../../../config/config-types';
import type { SecureTransport } from '../../network/socket-server';
import { subjectDistinguishedName } from './distinguished-name';
import { NoMatchingRuleError } from './principal-mapper';
import type { ServerSslSettings } from './ssl-settings';

let tlsModule: typeof Tls | undefined;
/** node:tls, loaded on first use: only SSL listeners need it. */
const tls = (): typeof Tls => (tlsModule ??= require('node:tls') as typeof Tls);

interface Pending {
  raw: Socket;
  address: string;
  done: (secured: { socket: Socket; principal: KafkaPrincipal | null } | null) => void;
  settled: boolean;
}

function tupleOf(s: Socket): string {
  return `${s.localAddress}|${s.localPort}|${s.remoteAddress}|${s.remotePort}`;
}

export class SslTransport implements SecureTransport {
  private readonly server: Tls.Server;
  private readonly pending = new Map<string, Pending>();

  constructor(
    private settings: ServerSslSettings,
    handshakeTimeoutMs: number,
    private readonly log: Logger,
  ) {
    this.server = new (tls().Server)({
      ...settings.contextOptions,
      requestCert: settings.clientAuth !== 'none',
      rejectUnauthorized: settings.clientAuth === 'required',
      handshakeTimeout: handshakeTimeoutMs > 0 ? Math.min(handshakeTimeoutMs, 0x7fffffff) : 0,
    });
    this.server.on('secureConnection', (s: Tls.TLSSocket) => this.onSecure(s));
    this.server.on('tlsClientError', (err: Error, s: Tls.TLSSocket) => this.onFailure(s, err.message));
  }

  /**
   * New key and trust stores (a dynamic broker config, KIP-226): handshakes that start from now on
   * use them; connections already secured keep theirs. ssl.client.auth and the principal mapping
   * are not reloadable and stay as they were.
   */
  reload(settings: ServerSslSettings): void {
    this.server.setSecureContext({ ...settings.contextOptions });
    this.settings = { ...settings, clientAuth: this.settings.clientAuth, principalMapper: this.settings.principalMapper };
    this.log.info(`reloaded the TLS key and trust stores of listener ${settings.listenerName}`);
  }

  /**
   * Why a handshake ended without a reason from node: with ssl.client.auth=required, node closes a
   * client whose certificate does not verify without reporting it on a socket we can match.
   */
  private get closedReason(): string {
    return this.settings.clientAuth === 'required'
      ? 'connection closed during the TLS handshake (no client certificate the trust store verifies, or the client went away)'
      : 'connection closed during the TLS handshake';
  }

  accept(raw: Socket, done: Pending['done']): () => void {
    const key = tupleOf(raw);
    const p: Pending = { raw, address: raw.remoteAddress ?? '?', done, settled: false };
    this.pending.set(key, p);
    // Whatever ends the socket before the handshake completes ends the attempt; node reports why
    // (tlsClientError) around the same close, so that reason is waited for first.
    raw.once('close', () => setImmediate(() => this.settle(key, p, null, this.closedReason)));
    this.server.emit('connection', raw);
    return () => {
      this.settle(key, p, null, null);
      raw.destroy();
    };
  }

  private settle(key: string, p: Pending, secured: { socket: Socket; principal: KafkaPrincipal | null } | null, failure: string | null): void {
    if (p.settled) return;
    p.settled = true;
    if (this.pending.get(key) === p) this.pending.delete(key);
    if (failure !== null) {
      this.log.info(`Failed authentication with ${p.address} (SSL handshake failed)`, { listener: this.settings.listenerName, reason: failure });
    }
    p.done(secured);
  }

  private onFailure(s: Tls.TLSSocket, reason: string): void {
    const key = tupleOf(s);
    const p = this.pending.get(key);
    s.destroy();
    // A socket node already closed no longer knows its addresses: the raw socket's close settles it.
    if (p) this.settle(key, p, null, reason.trim());
  }

  private onSecure(s: Tls.TLSSocket): void {
    const key = tupleOf(s);
    const p = this.pending.get(key);
    if (!p) {
      s.destroy();
      return;
    }
    const cert = s.getPeerX509Certificate();
    // `requested`: node accepts any certificate; Java refuses one that does not verify.
    if (cert && !s.authorized) {
      s.destroy();
      this.settle(key, p, null, `client certificate ${cert.subject.replace(/\n/g, ', ')} not trusted: ${String(s.authorizationError)}`);
      return;
    }
    let principal: KafkaPrincipal | null = null;
    const mapper = this.settings.principalMapper;
    if (mapper) {
      principal = ANONYMOUS;
      if (cert) {
        let dn = '';
        try {
          dn = subjectDistinguishedName(cert.raw);
          principal = userPrincipal(mapper.getName(dn));
        } catch (err) {
          s.destroy();
          const why =
            err instanceof NoMatchingRuleError
              ? `Failed to map name for '${dn}' based on SSL principal mapping rules: ${err.message}`
              : `cannot read the client certificate's subject: ${(err as Error).message}`;
          this.settle(key, p, null, why);
          return;
        }
      }
    }
    this.settle(key, p, { socket: s, principal }, null);
  }
}

/** Two connected in-memory streams. */
function duplexPair(): [Duplex, Duplex] {
  const sides: Duplex[] = [];
  const make = (other: () => Duplex) =>
    new Duplex({
      read() {},
      write(chunk, _enc, cb) {
        other().push(chunk);
        cb();
      },
      final(cb) {
        other().push(null);
        cb();
      },
    });
  sides.push(make(() => sides[1]), make(() => sides[0]));
  return [sides[0], sides[1]];
}

/**
 * Kafka's check for the inter-broker listener: a client with these settings can complete a
 * handshake with a server with these settings (host name verification off, as Kafka's validator
 * does). Throws ConfigException when it cannot.
 */
export async function validateInterBroker(settings: ServerSslSettings, timeoutMs = 10_000): Promise<void> {
  const [serverSide, clientSide] = duplexPair();
  const server = new (tls().Server)({
    ...settings.contextOptions,
    requestCert: settings.clientAuth !== 'none',
    rejectUnauthorized: settings.clientAuth === 'required',
  });
  const cleanup: (() => void)[] = [];
  try {
    await new Promise<void>((resolve, reject) => {
      let serverDone = false;
      let clientDone = false;
      const timer = setTimeout(() => reject(new Error(`no handshake within ${timeoutMs} ms`)), timeoutMs);
      cleanup.push(() => clearTimeout(timer));
      const check = () => {
        if (serverDone && clientDone) resolve();
      };
      server.on('secureConnection', (s: Tls.TLSSocket) => {
        cleanup.push(() => s.destroy());
        const cert = s.getPeerX509Certificate();
        if (cert && !s.authorized) {
          reject(new Error(`the server does not trust the client certificate: ${String(s.authorizationError)}`));
          return;
        }
        serverDone = true;
        check();
      });
      server.on('tlsClientError', (err: Error) => reject(new Error(`server side: ${err.message}`)));
      server.emit('connection', serverSide);
      const client = tls().connect({
        socket: clientSide,
        secureContext: settings.clientContext(),
        rejectUnauthorized: true,
        checkServerIdentity: () => undefined,
      });
      cleanup.push(() => client.destroy());
      client.on('secureConnect', () => {
        clientDone = true;
        check();
      });
      client.on('error', (err) => reject(new Error(`client side: ${err.message}`)));
    });
  } catch (err) {
    const key = settings.sourceOf('ssl.truststore.location');
    throw new ConfigException(
      `A client SSLEngine created with the provided settings can't connect to a server SSLEngine created with those settings (inter-broker listener ${settings.listenerName}): ${(err as Error).message}`,
      key,
    );
  } finally {
    for (const f of cleanup) f();
    serverSide.destroy();
    clientSide.destroy();
  }
}
