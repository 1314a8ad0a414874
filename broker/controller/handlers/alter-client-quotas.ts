/**
 * AlterClientQuotas (49), v0-1, on the controller listener: brokers forward their clients'
 * AlterClientQuotas here (Kafka's ControllerApis.handleAlterClientQuotas). The Controller validates
 * and writes the ClientQuotaRecords (client-quota-control-manager.ts); the answer has one entry per
 * distinct entity, and validate_only writes nothing.
 *
 * Authorization (ControllerApis.handleAlterClientQuotas), against the principal of this
 * connection: ALTER_CONFIGS on the CLUSTER, else CLUSTER_AUTHORIZATION_FAILED for every entry
 * (AlterClientQuotasRequest.getErrorResponse) and nothing is altered.
 */
import type { AlterClientQuotasRequest, AlterClientQuotasResponse } from '../../../protocol/generated/alter-client-quotas';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { alterClientQuotasDenied, alterClientQuotasResponse, clientQuotaAlterations } from '../../handlers/alter-client-quotas';

export const controllerAlterClientQuotasHandler = defineControllerHandler<AlterClientQuotasRequest, AlterClientQuotasResponse>({
  apiKey: ApiKey.AlterClientQuotas,
  name: 'AlterClientQuotas',
  minVersion: 0,
  maxVersion: 1,
  async handle(node, ctx, req) {
    const denied = alterClientQuotasDenied(node.authorizer, ctx, req);
    if (denied) return denied;
    const results = await node.controller.alterClientQuotas(clientQuotaAlterations(req), req.validateOnly);
    return alterClientQuotasResponse(results);
  },
});
