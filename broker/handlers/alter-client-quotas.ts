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
 * Authorization: Kafka requires ALTER_CONFIGS on the CLUSTER resource and otherwise answers every
 * entry with CLUSTER_AUTHORIZATION_FAILED (AlterClientQuotasRequest.getErrorResponse). krill has
 * no authorizer yet; the check belongs at the top of `handle`, before anything is forwarded.
 */
import type { AlterClientQuotasRequest, AlterClientQuotasResponse } from '../../protocol/generated/alter-client-quotas';
import { ApiKey } from '../../protocol/generated';
import type { ClientQuotaAlteration, ClientQuotaAlterationResult } from '../../metadata/controller/client-quota-control-manager';
import { defineHandler } from './define-handler';

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
  async handle(broker, _ctx, req) {
    const results = await broker.controller.alterClientQuotas(clientQuotaAlterations(req), req.validateOnly);
    return alterClientQuotasResponse(results);
  },
});
