/**
 * Controller-listener handlers are ordinary handler specs whose context is the controller node.
 *
 * A controller that is not the active one of a KRaft quorum refuses every operation with
 * NOT_CONTROLLER (metadata/controller/controller.ts). Whatever handler meets it answers it the way
 * Kafka's AbstractRequest.getErrorResponse does for that API (every topic, resource or entry of
 * the request, or the top-level error code: broker/fault-injection/error-responses.ts), so a client
 * or a broker learns to look for the active controller instead of losing its connection. Any other
 * thrown error stays the dispatcher's (logged, connection closed).
 */
import { ErrorCode, KafkaError } from '../../../protocol/errors';
import { defineHandler, type HandlerSpec } from '../../handlers/define-handler';
import type { ControllerNode } from '../controller-server';

export function defineControllerHandler<Req, Res>(spec: HandlerSpec<Req, Res, ControllerNode>): HandlerSpec<Req, Res, ControllerNode> {
  const handle = spec.handle.bind(spec);
  return defineHandler<Req, Res, ControllerNode>({
    ...spec,
    async handle(node, ctx, request) {
      try {
        return await handle(node, ctx, request);
      } catch (err) {
        if (err instanceof KafkaError && err.code === ErrorCode.NOT_CONTROLLER) {
          // Loaded on first use: the schema descriptors it reads cost start-up time otherwise.
          const { errorResponse, errorResponseSupported } = require('../../fault-injection/error-responses') as typeof import('../../fault-injection/error-responses');
          if (errorResponseSupported(spec.apiKey, ctx.apiVersion)) return errorResponse(spec.apiKey, ctx.apiVersion, request, err.code) as never;
        }
        throw err;
      }
    },
  });
}
