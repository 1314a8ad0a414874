/**
 * Handler tests' way into a running broker or controller node: a request encoded with the generated codec at a given
 * version goes through the broker's real dispatcher (no socket), and the response is checked to
 * carry the request's correlation id, decoded at that version, and checked to leave no bytes over.
 * A handler that sets a field its version lacks closes the connection, which fails the call here.
 */
import { Reader } from '../../protocol/primitives/reader';
import { Writer } from '../../protocol/primitives/writer';
import { apiByKey, responseHeaderVersion } from '../../protocol/generated';
import { readResponseHeader, writeRequestHeader } from '../../protocol/header';
import type { ConnectionInfo, FrameProcessor } from '../network/connection';
import { HANDLERS } from '../handlers';
import { ANONYMOUS, type KafkaPrincipal } from '../../common/kafka-principal';

/** A broker (KafkaServer) or a controller node (ControllerServer): anything with a dispatcher. */
export interface Dispatching {
  readonly dispatcher: FrameProcessor;
}

export class DispatchClient {
  private correlation = 0;
  private readonly connection: ConnectionInfo;

  constructor(
    private readonly server: () => Dispatching,
    private readonly clientId = 'handler-test',
    listenerName = 'PLAINTEXT',
    /** Whose connection it is (already authenticated, whatever the listener). */
    principal: KafkaPrincipal = ANONYMOUS,
  ) {
    this.connection = { id: 1, remoteAddress: '127.0.0.1', remotePort: 1, localPort: 1, listenerName, securityProtocol: 'PLAINTEXT', principal, attributes: new Map() };
  }

  /** The decoded response, or null for a request answered with no response (acks=0). */
  async call(apiKey: number, version: number, body: object): Promise<any> {
    const api = apiByKey(apiKey);
    if (!api) throw new Error(`unknown API key ${apiKey}`);
    const w = new Writer();
    const corr = ++this.correlation;
    writeRequestHeader(w, apiKey, version, corr, this.clientId);
    api.writeRequest(w, version, body as never);
    const res = await this.server().dispatcher.process(w.toBuffer(), this.connection, { parked: () => {} });
    if (res.kind === 'noResponse') return null;
    if (res.kind === 'close') throw new Error(`connection closed: ${res.reason}`);
    const r = new Reader(Buffer.concat(res.chunks), 4);
    res.onSent?.(); // pooled fetch buffers go back: the bytes were copied above
    const header = readResponseHeader(r, responseHeaderVersion(apiKey, version));
    if (header.correlationId !== corr) throw new Error(`correlation id ${header.correlationId}, expected ${corr}`);
    const decoded = api.readResponse(r, version);
    if (r.remaining !== 0) throw new Error(`${r.remaining} bytes left after the ${api.name} v${version} response`);
    return decoded;
  }
}

/** Every version the registry advertises for `apiKey`. */
export function advertisedVersions(apiKey: number): number[] {
  const h = HANDLERS.find((x) => x.apiKey === apiKey);
  if (!h) throw new Error(`no handler for API key ${apiKey}`);
  const out: number[] = [];
  for (let v = h.minVersion; v <= h.maxVersion; v++) out.push(v);
  return out;
}
