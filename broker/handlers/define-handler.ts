/**
 * How a request handler declares itself: its API key (an `ApiKey` constant) and name, the version
 * range krill advertises for it (every version in the range works end to end), and the function
 * that turns a decoded request into a response. ApiVersions is built from the registry of these
 * declarations, so krill never advertises an API it does not implement.
 *
 * Invariant: `name` is the name protocol/generated's API table gives `apiKey`, and the range is not
 * empty; `defineHandler` throws at definition time otherwise, so no handler is registered under
 * another API's key.
 *
 * `handle` returns the response body (fields left out take their schema defaults) or `null` for
 * "send no response" (acks=0 produce). A handler answers every topic/partition it was asked about
 * and puts per-partition errors in the body; only a failure that leaves nothing sensible to say
 * (Kafka closes the connection in the same cases) may throw.
 */
import type { Input } from '../../protocol/primitives/input';
import { apiByKey } from '../../protocol/generated';
import type { RequestContext } from '../network/request-context';
import type { Broker } from '../broker';

/** `Ctx` is what the handler works on: a broker, or (controller listener) the controller node. */
export interface HandlerSpec<Req = any, Res = any, Ctx = Broker> {
  apiKey: number;
  name: string;
  minVersion: number;
  maxVersion: number;
  handle(broker: Ctx, ctx: RequestContext, request: Req): Promise<Input<Res> | null> | Input<Res> | null;
  /** True for requests Kafka does not count against request quotas (cluster actions, follower fetches). */
  requestQuotaExempt?(request: Req): boolean;
}

export function defineHandler<Req, Res, Ctx = Broker>(spec: HandlerSpec<Req, Res, Ctx>): HandlerSpec<Req, Res, Ctx> {
  const api = apiByKey(spec.apiKey);
  if (api?.name !== spec.name) {
    throw new Error(`${spec.name}: API key ${spec.apiKey} is ${api ? api.name : 'not a known API'}`);
  }
  if (spec.minVersion > spec.maxVersion) throw new Error(`${spec.name}: empty version range`);
  return spec;
}

/**
 * Thrown by a handler to close the connection without answering, where Kafka does so on purpose
 * (an acks=0 produce that failed: closing is the only way the producer learns of it).
 */
export class CloseConnection extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'CloseConnection';
  }
}
