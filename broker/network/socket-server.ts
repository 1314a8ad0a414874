/**
 * The listeners: one node:net server per configured listener, each handing accepted sockets to a
 * Connection once the connection limits allow it (ConnectionQuotas). Owns the set of live
 * connections so shutdown can close them all, the broker-wide request-bytes budget
 * (`queued.max.request.bytes`) and request slots (`queued.max.requests`) every connection shares.
 *
 * Accepting follows Kafka's acceptor: sockets of a listener are taken in arrival order; while the
 * listener has no free slot or must pause for its connection creation rate, later sockets wait
 * unread behind it (at most `socket.listen.backlog.size` of them; more are closed at once, as a full
 * kernel backlog refuses them). A socket past its address's limit is closed at once; one over its
 * IP's connection rate quota is closed after the throttle time. Raised limits (dynamic broker
 * configs, updateConnectionLimits) take the waiting sockets at once.
 *
 * A listener with a SecureTransport (SSL and SASL_SSL listeners: broker/security/ssl) is TLS from
 * the first byte: an admitted socket goes through the TLS handshake first, still counted against
 * the connection limits, and becomes a Connection only once the handshake succeeded, with the
 * principal TLS client authentication gave it. A failed handshake closes the socket, unserved, and
 * gives its slot back; nothing on such a listener is read as a Kafka request before.
 */
import { createServer, type Server, type Socket } from 'node:net';
import type { Logger } from '../../common/logger';
import type { KafkaPrincipal } from '../../common/kafka-principal';
import { SystemTime, type Time } from '../../common/time';
import { Connection, normalizeAddress, type FrameProcessor } from './connection';
import { ConnectionQuotas, type ConnectionQuotaConfig } from './connection-quotas';
import { MemoryPool } from './memory-pool';
import { RequestSlots } from './request-slots';

export interface ListenerSpec {
  name: string;
  host: string;
  port: number;
  /** PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL. */
  securityProtocol: string;
}

/** What a TLS listener does with an admitted socket before it becomes a Connection. */
export interface SecureTransport {
  /**
   * Starts the handshake on `socket`. Calls `done` once: with the secured socket and the principal
   * the peer authenticated as (null: none yet, SASL decides), or with null when the handshake failed
   * (the transport has closed the socket and logged why). Returns an abort that closes it meanwhile.
   */
  accept(socket: Socket, done: (secured: { socket: Socket; principal: KafkaPrincipal | null } | null) => void): () => void;
}

export interface BoundListener extends ListenerSpec {
  /** The port actually bound (differs from `port` when it was 0). */
  boundPort: number;
}

export interface SocketServerOptions {
  maxRequestBytes: number;
  idleTimeoutMs: number;
  /** `queued.max.request.bytes`; <= 0 for no limit. */
  queuedMaxRequestBytes: number;
  /** `queued.max.requests`. */
  queuedMaxRequests: number;
  /** `socket.listen.backlog.size`. */
  listenBacklog: number;
  quotas: Omit<ConnectionQuotaConfig, 'listeners'> & { listeners?: ConnectionQuotaConfig['listeners'] };
  /** The TLS of each SSL / SASL_SSL listener, by listener name (made with the server's logger). */
  transports?: ReadonlyMap<string, (log: Logger) => SecureTransport>;
  time?: Time;
}

interface WaitingSocket {
  socket: Socket;
  address: string;
  /** Recorded in the creation rates (once); not before this time may it be taken. */
  notBeforeMs: number;
  recorded: boolean;
  spec: ListenerSpec;
}

export class SocketServer {
  private servers: Server[] = [];
  /** Live connections, each with the one call that gives its quota counts back. */
  private connections = new Map<Connection, () => void>();
  private nextId = 1;
  readonly bound: BoundListener[] = [];
  readonly pool: MemoryPool;
  readonly slots: RequestSlots;
  readonly quotas: ConnectionQuotas;
  private readonly time: Time;
  private readonly waiting = new Map<string, WaitingSocket[]>();
  private readonly drainTimers = new Map<string, NodeJS.Timeout>();
  private readonly throttled = new Set<{ socket: Socket; timer: NodeJS.Timeout }>();
  /** Admitted sockets in their TLS handshake, each with its abort. */
  private readonly handshaking = new Set<() => void>();
  private readonly transports = new Map<string, SecureTransport>();
  private closed = false;

  constructor(
    private readonly processor: FrameProcessor,
    private readonly opts: SocketServerOptions,
    private readonly log: Logger,
  ) {
    this.time = opts.time ?? SystemTime;
    this.pool = new MemoryPool(opts.queuedMaxRequestBytes);
    this.slots = new RequestSlots(opts.queuedMaxRequests);
    this.quotas = new ConnectionQuotas({ ...opts.quotas, listeners: opts.quotas.listeners ?? new Map() }, this.time);
    for (const [name, make] of opts.transports ?? []) this.transports.set(name, make(log));
  }

  /**
   * New max.connections / max.connections.per.ip (dynamic broker configs): sockets waiting for a
   * slot are reconsidered at once, as a raised limit frees slots.
   */
  updateConnectionLimits(limits: { maxConnections: number; maxConnectionsPerIp: number }): void {
    this.quotas.updateLimits(limits);
    for (const name of this.waiting.keys()) this.drain(name);
  }

  /** The secure transport of a listener (TLS, for reloading its stores), if it has one. */
  transportOf(listener: string): SecureTransport | undefined {
    return this.transports.get(listener);
  }

  async listen(listeners: ListenerSpec[]): Promise<BoundListener[]> {
    for (const l of listeners) {
      const server = createServer({ pauseOnConnect: true }, (socket) => this.onSocket(socket, l));
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen({ host: l.host || undefined, port: l.port, exclusive: true, backlog: this.opts.listenBacklog }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      server.on('error', (err) => this.log.error('listener error', { listener: l.name, err }));
      const addr = server.address();
      const boundPort = typeof addr === 'object' && addr ? addr.port : l.port;
      this.servers.push(server);
      this.bound.push({ ...l, boundPort });
      this.waiting.set(l.name, []);
    }
    return this.bound;
  }

  private onSocket(socket: Socket, spec: ListenerSpec): void {
    const listener = spec.name;
    if (this.closed) {
      socket.destroy();
      return;
    }
    const queue = this.waiting.get(listener)!;
    const address = normalizeAddress(socket.remoteAddress ?? '?');
    if (queue.length >= this.opts.listenBacklog) {
      this.log.warn('listener backlog full; closing a new connection', { listener, address, backlog: this.opts.listenBacklog });
      socket.destroy();
      return;
    }
    socket.on('error', () => {});
    queue.push({ socket, address, notBeforeMs: 0, recorded: false, spec });
    this.drain(listener);
  }

  /** Takes waiting sockets of `listener` in order while the limits allow. */
  private drain(listener: string): void {
    const queue = this.waiting.get(listener);
    if (!queue || this.closed) return;
    while (queue.length > 0) {
      const head = queue[0];
      if (head.socket.destroyed) {
        queue.shift();
        continue;
      }
      const now = this.time.milliseconds();
      if (!head.recorded) {
        head.recorded = true;
        const throttleMs = this.quotas.recordCreation(listener);
        if (throttleMs > 0) {
          head.notBeforeMs = now + throttleMs;
          this.log.debug('connection creation rate reached; accepting pauses', { listener, throttleMs });
        }
      }
      if (now < head.notBeforeMs) {
        this.drainLater(listener, head.notBeforeMs - now);
        return;
      }
      // No slot: wait for a connection to close (release() drains again).
      if (!this.quotas.slotAvailable(listener)) return;
      queue.shift();
      this.admit(head, listener);
    }
  }

  private drainLater(listener: string, delayMs: number): void {
    if (this.drainTimers.has(listener)) return;
    const t = setTimeout(() => {
      this.drainTimers.delete(listener);
      this.drain(listener);
    }, Math.max(1, delayMs));
    this.drainTimers.set(listener, t);
  }

  private admit(w: WaitingSocket, listener: string): void {
    const decision = this.quotas.admit(listener, w.address);
    if (decision.kind === 'rejected') {
      this.log.info(decision.reason, { listener });
      w.socket.destroy();
      return;
    }
    if (decision.kind === 'throttled') {
      this.log.debug('connection over its IP connection rate quota; closing it after the throttle time', { address: w.address, throttleMs: decision.throttleMs });
      const entry = {
        socket: w.socket,
        timer: setTimeout(() => {
          this.throttled.delete(entry);
          w.socket.destroy();
        }, decision.throttleMs),
      };
      this.throttled.add(entry);
      return;
    }
    const transport = this.transports.get(listener);
    if (!transport) {
      this.open(w.socket, w, listener, null);
      return;
    }
    let abort = (): void => undefined;
    let settled = false;
    const entry = (): void => abort();
    this.handshaking.add(entry);
    abort = transport.accept(w.socket, (secured) => {
      if (settled) return;
      settled = true;
      this.handshaking.delete(entry);
      if (secured && !this.closed) {
        this.open(secured.socket, w, listener, secured.principal);
        return;
      }
      secured?.socket.destroy();
      this.quotas.release(listener, w.address);
      for (const name of this.waiting.keys()) this.drain(name);
    });
  }

  private open(socket: Socket, w: WaitingSocket, listener: string, principal: KafkaPrincipal | null): void {
    const conn = new Connection(
      this.nextId++,
      socket,
      listener,
      w.spec.securityProtocol,
      this.processor,
      { maxRequestBytes: this.opts.maxRequestBytes, idleTimeoutMs: this.opts.idleTimeoutMs, pool: this.pool, slots: this.slots },
      this.log,
    );
    if (principal) conn.principal = principal;
    let released = false;
    const release = (): void => {
      if (released) return;
      released = true;
      this.connections.delete(conn);
      this.quotas.release(listener, conn.remoteAddress);
      for (const name of this.waiting.keys()) this.drain(name);
    };
    this.connections.set(conn, release);
    conn.onClose(release);
    if (this.quotas.isProtected(listener)) this.closeExcessConnections();
  }

  /** The protected inter-broker listener took the total past max.connections: close the least recently active other connection. */
  private closeExcessConnections(): void {
    while (true) {
      let victim: Connection | undefined;
      for (const c of this.connections.keys()) {
        if (c.isClosed || !this.quotas.maxConnectionsExceeded(c.listenerName)) continue;
        if (!victim || c.lastActiveMs < victim.lastActiveMs) victim = c;
      }
      if (!victim) return;
      const release = this.connections.get(victim)!;
      victim.close('max.connections reached; closing the least recently active connection for the inter-broker listener');
      release();
    }
  }

  get connectionCount(): number {
    return this.connections.size;
  }

  /** Open connections by listener name (metrics). */
  connectionCountByListener(): Map<string, number> {
    const out = new Map<string, number>();
    for (const c of this.connections.keys()) if (!c.isClosed) out.set(c.listenerName, (out.get(c.listenerName) ?? 0) + 1);
    return out;
  }

  async close(): Promise<void> {
    this.closed = true;
    const closing = this.servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve())));
    for (const t of this.drainTimers.values()) clearTimeout(t);
    this.drainTimers.clear();
    for (const q of this.waiting.values()) for (const w of q.splice(0)) w.socket.destroy();
    for (const e of this.throttled) {
      clearTimeout(e.timer);
      e.socket.destroy();
    }
    this.throttled.clear();
    for (const abort of [...this.handshaking]) abort();
    this.handshaking.clear();
    for (const c of [...this.connections.keys()]) c.close('broker shutting down');
    this.connections.clear();
    await Promise.all(closing);
    this.servers = [];
  }
}
