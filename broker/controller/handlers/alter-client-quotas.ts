/**
 * AlterClientQuotas (49), v0-1, on the controller listener: brokers forward their clients'
 * AlterClientQuotas here (Kafka's ControllerApis.handleAlterClientQuotas). The Controller validates
 * and writes the ClientQuotaRecords (client-quota-control-manager.ts); the answer has one entry per
 * distinct entity, and validate_only writes nothing.
 *
 * Authorization: Kafka checks ALTER_CONFIGS on the CLUSTER resource here too (a failed check is
 * CLUSTER_AUTHORIZATION_FAILED for every entry); krill has no authorizer yet, and the check belongs
 * at the top of `handle`.
 */
import type { AlterClientQuotasRequest, AlterClientQuotasResponse } from '../../../protocol/generated/alter-client-quotas';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { alterClientQuotasResponse, clientQuotaAlterations } from '../../handlers/alter-client-quotas';

export const controllerAlterClientQuotasHandler = defineControllerHandler<AlterClientQuotasRequest, AlterClientQuotasResponse>({
  apiKey: ApiKey.AlterClientQuotas,
  name: 'AlterClientQuotas',
  minVersion: 0,
  maxVersion: 1,
  async handle(node, _ctx, req) {
    const results = await node.controller.alterClientQuotas(clientQuotaAlterations(req), req.validateOnly);
    return alterClientQuotasResponse(results);
  },
});
