/**
 * IncrementalAlterConfigs (44), v0-1, on the controller listener: SET / DELETE / APPEND / SUBTRACT
 * on topic config overrides and on BROKER resources' dynamic configs (which a broker has already
 * checked, as Kafka's forwarding brokers do); CLIENT_METRICS subscriptions and GROUP configs as on a broker; other resource types get INVALID_REQUEST, unknown ones
 * UNSUPPORTED_VERSION, a resource listed twice one INVALID_REQUEST "Duplicate resource.".
 * Authorization (ControllerApis.handleIncrementalAlterConfigs), against the principal of this
 * connection: ALTER_CONFIGS as for AlterConfigs; a BROKER_LOGGER resource needs CLUSTER_ACTION on
 * the CLUSTER (else CLUSTER_AUTHORIZATION_FAILED "Cluster authorization failed.").
 */
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../../../protocol/generated/incremental-alter-configs';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { alterConfigsDenials, alterConfigsResponses, resourcesToAlter, resultsByKey, topicResourcesToAlter } from '../../handlers/alter-configs';
import { ConfigResourceType } from '../../../metadata/metadata-records';
import { authHelper } from '../../security/authorize';

/** Topic, broker (KIP-226), client-metrics (KIP-714) and group configs live in the controller; nothing else is altered here. */
const NOT_ALTERED_MESSAGE = 'the controller only alters topic, broker, client metrics and group configs';

export const controllerIncrementalAlterConfigsHandler = defineControllerHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>({
  apiKey: ApiKey.IncrementalAlterConfigs,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  async handle(node, ctx, req) {
    const denials = alterConfigsDenials(authHelper(node.authorizer, ctx), req.resources, 'cluster-action');
    const topics = topicResourcesToAlter(req.resources, denials);
    const topicResults = await node.controller.alterTopicConfigs(
      topics.map((r) => ({ topic: r.resourceName, incremental: true, ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })) })),
      req.validateOnly,
    );
    const brokers = resourcesToAlter(req.resources, ConfigResourceType.BROKER, denials);
    const brokerResults = await node.controller.alterBrokerConfigs(
      brokers.map((r) => ({ resourceName: r.resourceName, incremental: true, ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })) })),
      req.validateOnly,
    );
    const clientMetrics = resourcesToAlter(req.resources, ConfigResourceType.CLIENT_METRICS, denials);
    const clientMetricsResults = await node.controller.alterClientMetricsConfigs(
      clientMetrics.map((r) => ({ name: r.resourceName, incremental: true, ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })) })),
      req.validateOnly,
    );
    const groups = resourcesToAlter(req.resources, ConfigResourceType.GROUP, denials);
    const groupResults = await node.controller.alterGroupConfigs(
      groups.map((r) => ({ name: r.resourceName, incremental: true, ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })) })),
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
