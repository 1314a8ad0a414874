/**
 * ElectLeaders (43), v0-2, on the controller listener: PREFERRED (v0 always) or UNCLEAN elections
 * (see Controller.electLeaders for the error codes); an unknown election type is INVALID_REQUEST
 * (top level from v1, per partition in v0, which has no top-level error).
 * Authorization (ControllerApis.handleElectLeaders, this connection's principal): ALTER on the
 * CLUSTER, else CLUSTER_AUTHORIZATION_FAILED at the top level (v1+) and on every partition asked,
 * with Kafka's "Request ... is not authorized." message (ElectLeadersRequest.getErrorResponse).
 */
import type { ElectLeadersRequest, ElectLeadersResponse } from '../../../protocol/generated/elect-leaders';
import { ApiKey } from '../../../protocol/generated';
import { electLeadersAnswer } from '../../handlers/elect-leaders';
import { defineControllerHandler } from './define';

export const controllerElectLeadersHandler = defineControllerHandler<ElectLeadersRequest, ElectLeadersResponse>({
  apiKey: ApiKey.ElectLeaders,
  name: 'ElectLeaders',
  minVersion: 0,
  maxVersion: 2,
  handle: (node, ctx, req) => electLeadersAnswer(node.controller, node.authorizer, node.logger, ctx, req),
});
