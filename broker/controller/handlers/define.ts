/** Controller-listener handlers are ordinary handler specs whose context is the controller node. */
import { defineHandler, type HandlerSpec } from '../../handlers/define-handler';
import type { ControllerNode } from '../controller-server';

export function defineControllerHandler<Req, Res>(spec: HandlerSpec<Req, Res, ControllerNode>): HandlerSpec<Req, Res, ControllerNode> {
  return defineHandler<Req, Res, ControllerNode>(spec);
}
