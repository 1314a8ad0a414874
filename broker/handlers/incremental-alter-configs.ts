/**
 * IncrementalAlterConfigs (44), v0-1.
 * SET / DELETE / APPEND / SUBTRACT on a topic's config overrides (APPEND/SUBTRACT on list configs
 * such as cleanup.policy), validated as a whole (INVALID_CONFIG); unknown topic:
 * UNKNOWN_TOPIC_OR_PARTITION. validate_only changes nothing. A resource listed twice: one
 * INVALID_REQUEST "Duplicate resource."; an unknown resource type: UNSUPPORTED_VERSION (see
 * alter-configs.ts, whose rules these are). CLIENT_METRICS resources (KIP-714 subscriptions): SET
 * and DELETE, validated as Kafka does (metadata/controller/client-metrics-config-control.ts).
 * Not implemented: dynamic broker configs; BROKER / BROKER_LOGGER resources get INVALID_REQUEST.
 * Authorization: ALTER_CONFIGS as for AlterConfigs (see alter-configs.ts); a BROKER_LOGGER resource
 * needs ALTER_CONFIGS on the CLUSTER (else CLUSTER_AUTHORIZATION_FAILED without a message, as
 * ConfigAdminManager.preprocess answers it).
 */
import type {
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse,
} from '../../protocol/generated/incremental-alter-configs';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { alterConfigsDenials, alterConfigsResponses, clientMetricsResourcesToAlter, topicResourcesToAlter } from './alter-configs';
import { authHelper } from '../security/authorize';

export const incrementalAlterConfigsHandler = defineHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>({
  apiKey: ApiKey.IncrementalAlterConfigs,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, ctx, req) {
    const denials = alterConfigsDenials(authHelper(broker.authorizer, ctx), req.resources, 'alter-configs');
    const topics = topicResourcesToAlter(req.resources, denials);
    const results = await broker.controller.alterTopicConfigs(
      topics.map((r) => ({
        topic: r.resourceName,
        incremental: true,
        ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })),
      })),
      req.validateOnly,
    );
    const clientMetrics = await broker.controller.alterClientMetricsConfigs(
      clientMetricsResourcesToAlter(req.resources, denials).map((r) => ({
        name: r.resourceName,
        incremental: true,
        ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })),
      })),
      req.validateOnly,
    );
    return { responses: alterConfigsResponses(req.resources, results, undefined, denials, clientMetrics) };
  },
});
