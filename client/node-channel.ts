/**
 * A connection to one other node (the controller, a partition leader, a transaction coordinator)
 * that reconnects on demand: `send` opens the connection if there is none, and a connection that
 * failed (closed, timed out, garbled) is dropped so the next `send` starts a fresh one. Callers
 * decide whether to retry, and with what backoff; nothing here loops or waits on its own.
 *
 * Requests on one channel are pipelined on one connection and answered in order, so a long poll
 * (a metadata or follower Fetch) gets a channel of its own.
 */
import { connect, ClientError, type BrokerConnection, type ConnectOptions, type SendOptions } from './network-client';
import type { ApiMessages, ApiName } from '../protocol/generated';
import type { Input } from '../protocol/primitives/input';

export class ChannelClosedError extends ClientError {}

export class NodeChannel {
  private conn: BrokerConnection | null = null;
  private connecting: Promise<BrokerConnection> | null = null;
  private closed = false;

  constructor(
    public host: string,
    public port: number,
    private readonly opts: ConnectOptions = {},
  ) {}

  get address(): string {
    return `${this.host}:${this.port}`;
  }

  /** Points the channel at another address (a partition's new leader); the old connection is dropped. */
  retarget(host: string, port: number): void {
    if (host === this.host && port === this.port) return;
    this.host = host;
    this.port = port;
    this.drop();
  }

  private async connection(): Promise<BrokerConnection> {
    if (this.closed) throw new ChannelClosedError(`channel to ${this.address} is closed`);
    if (this.conn && !this.conn.isClosed) return this.conn;
    if (!this.connecting) {
      const attempt = connect(this.host, this.port, this.opts);
      this.connecting = attempt;
      attempt.then(
        (c) => {
          if (this.connecting === attempt) this.connecting = null;
          if (this.closed) {
            c.destroy();
            return;
          }
          this.conn = c;
        },
        () => {
          if (this.connecting === attempt) this.connecting = null;
        },
      );
    }
    const c = await this.connecting;
    if (this.closed) throw new ChannelClosedError(`channel to ${this.address} is closed`);
    return c;
  }

  /** The negotiated version of an API on the current connection (connecting if needed). */
  async versionFor(api: ApiName): Promise<number> {
    return (await this.connection()).versionFor(api);
  }

  async send<K extends ApiName>(api: K, body: Input<ApiMessages[K]['request']>, opts: SendOptions & { version?: number } = {}): Promise<ApiMessages[K]['response']> {
    const c = await this.connection();
    try {
      return await c.send(api, opts.version, body, opts);
    } catch (err) {
      // A failed connection is of no further use; a later send reconnects.
      if (c.isClosed && this.conn === c) this.conn = null;
      throw err;
    }
  }

  /** Drops the current connection (pending requests fail); the next send reconnects. */
  drop(): void {
    const c = this.conn;
    this.conn = null;
    c?.destroy();
  }

  close(): void {
    this.closed = true;
    this.drop();
  }
}
