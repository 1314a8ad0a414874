/**
 * AlterConfigs (33), v0-2, on the controller listener: replaces a topic's config overrides or a
 * BROKER resource's dynamic configs (resource name checked as ControllerConfigurationValidator does)
 * (INVALID_CONFIG, UNKNOWN_TOPIC_OR_PARTITION); CLIENT_METRICS subscriptions and GROUP configs as on a broker; other resource types get INVALID_REQUEST, unknown
 * ones UNSUPPORTED_VERSION, a resource listed twice one INVALID_REQUEST "Duplicate resource.".
 * Authorization (ControllerApis.authorizeAlterResource), against the principal of this connection:
 * ALTER_CONFIGS on the CLUSTER (broker, client metrics), TOPIC or GROUP; see
 * broker/handlers/alter-configs.ts.
 */
import type { AlterConfigsRequest, AlterConfigsResponse } from '../../../protocol/generated/alter-configs';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { alterConfigsDenials, alterConfigsResponses, resourcesToAlter, resultsByKey, topicResourcesToAlter } from '../../handlers/alter-configs';
import { ConfigResourceType } from '../../../metadata/metadata-records';
import { authHelper } from '../../security/authorize';

/** Topic, broker (KIP-226), client-metrics (KIP-714) and group configs live in the controller; nothing else is altered here. */
const NOT_ALTERED_MESSAGE = 'the controller only alters topic, broker, client metrics and group configs';

export const controllerAlterConfigsHandler = defineControllerHandler<AlterConfigsRequest, AlterConfigsResponse>({
  apiKey: ApiKey.AlterConfigs,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  async handle(node, ctx, req) {
    const denials = alterConfigsDenials(authHelper(node.authorizer, ctx), req.resources, 'not-authorized');
    const topics = topicResourcesToAlter(req.resources, denials);
    const topicResults = await node.controller.alterTopicConfigs(
      topics.map((r) => ({ topic: r.resourceName, incremental: false, ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })) })),
      req.validateOnly,
    );
    const brokers = resourcesToAlter(req.resources, ConfigResourceType.BROKER, denials);
    const brokerResults = await node.controller.alterBrokerConfigs(
      brokers.map((r) => ({ resourceName: r.resourceName, incremental: false, ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })) })),
      req.validateOnly,
    );
    const clientMetrics = resourcesToAlter(req.resources, ConfigResourceType.CLIENT_METRICS, denials);
    const clientMetricsResults = await node.controller.alterClientMetricsConfigs(
      clientMetrics.map((r) => ({ name: r.resourceName, incremental: false, ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })) })),
      req.validateOnly,
    );
    const groups = resourcesToAlter(req.resources, ConfigResourceType.GROUP, denials);
    const groupResults = await node.controller.alterGroupConfigs(
      groups.map((r) => ({ name: r.resourceName, incremental: false, ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })) })),
      req.validateOnly,
    );
    const results = new Map([
      ...resultsByKey(topics, topicResults),
      ...resultsByKey(brokers, brokerResults),
      ...resultsByKey(clientMetrics, clientMetricsResults),
      ...resultsByKey(groups, groupResults),
    ]);
    return { responses: alterConfigsResponses(req.resources, results, NOT_ALTERED_MESSAGE, denials) };
  },
});
