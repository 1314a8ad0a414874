/**
 * AlterClientQuotas (49), v0-1 (KIP-546): sets and removes client quota keys (producer_byte_rate,
 * consumer_byte_rate, request_percentage, controller_mutation_rate for user / client-id /
 * user + client-id entities, connection_creation_rate for ip entities) through the controller,
 * which validates them (metadata/controller/client-quota-control-manager.ts, Kafka's error codes
 * and messages) and writes ClientQuotaRecords to the metadata log. A combined node calls its
 * in-process controller; a cluster broker forwards the request to the controller listener
 * (RemoteController) and relays its answer, as a KRaft broker forwards it. The answer has one
 * entry per distinct entity; validate_only checks everything and writes nothing.
 *
 * Authorization (ControllerApis.handleAlterClientQuotas, which KRaft brokers forward to):
 * ALTER_CONFIGS on the CLUSTER, checked before anything is forwarded, else every entry is answered
 * CLUSTER_AUTHORIZATION_FAILED "Cluster authorization failed." with its entity as sent
 * (AlterClientQuotasRequest.getErrorResponse) and nothing is altered.
 */
import type { AlterClientQuotasRequest, AlterClientQuotasResponse } from '../../protocol/generated/alter-client-quotas';
import { ApiKey } from '../../protocol/generated';
import type { ClientQuotaAlteration, ClientQuotaAlterationResult } from '../../metadata/controller/client-quota-control-manager';
import { defineHandler } from './define-handler';
import { AUTHORIZATION_ERROR_MESSAGE, authHelper } from '../security/authorize';
import { AclOperation } from '../../metadata/authorizer/authorizer';
import { ErrorCode } from '../../protocol/errors';
import type { RequestContext } from '../network/request-context';
import type { Authorizer } from '../../metadata/authorizer/authorizer';

/** AlterClientQuotasRequest.getErrorResponse for a requester without ALTER_CONFIGS on the cluster; null if it has it. */
export function alterClientQuotasDenied(authorizer: Authorizer, ctx: RequestContext, req: AlterClientQuotasRequest): { entries: AlterClientQuotasResponse['entries'] } | null {
  if (authHelper(authorizer, ctx).authorizeCluster(AclOperation.ALTER_CONFIGS)) return null;
  const errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
  return {
    entries: req.entries.map((e) => ({
      errorCode,
      errorMessage: AUTHORIZATION_ERROR_MESSAGE[errorCode],
      entity: e.entity.map((x) => ({ entityType: x.entityType, entityName: x.entityName })),
    })),
  };
}

/** The controller's view of the request (Kafka's AlterClientQuotasRequest.entries(): remove -> value null). */
export function clientQuotaAlterations(req: AlterClientQuotasRequest): ClientQuotaAlteration[] {
  return req.entries.map((e) => ({
    entity: e.entity.map((x) => ({ entityType: x.entityType, entityName: x.entityName })),
    ops: e.ops.map((o) => ({ key: o.key, value: o.remove ? null : o.value })),
  }));
}

/** The response body for the controller's results (shared with the controller listener's handler). */
export function alterClientQuotasResponse(results: readonly ClientQuotaAlterationResult[]): { entries: AlterClientQuotasResponse['entries'] } {
  return {
    entries: results.map((r) => ({
      errorCode: r.errorCode,
      errorMessage: r.errorMessage,
      entity: r.entity.map((e) => ({ entityType: e.entityType, entityName: e.entityName })),
    })),
  };
}

export const alterClientQuotasHandler = defineHandler<AlterClientQuotasRequest, AlterClientQuotasResponse>({
  apiKey: ApiKey.AlterClientQuotas,
  name: 'AlterClientQuotas',
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, ctx, req) {
    const denied = alterClientQuotasDenied(broker.authorizer, ctx, req);
    if (denied) return denied;
    const results = await broker.controller.alterClientQuotas(clientQuotaAlterations(req), req.validateOnly);
    return alterClientQuotasResponse(results);
  },
});
