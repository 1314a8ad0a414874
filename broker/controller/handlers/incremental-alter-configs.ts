/**
 * IncrementalAlterConfigs (44), v0-1, on the controller listener: SET / DELETE / APPEND / SUBTRACT
 * on topic config overrides; CLIENT_METRICS subscriptions as on a broker;
 * other resource types get INVALID_REQUEST, unknown ones
 * UNSUPPORTED_VERSION, a resource listed twice one INVALID_REQUEST "Duplicate resource.".
 * Authorization (ControllerApis.handleIncrementalAlterConfigs), against the principal of this
 * connection: ALTER_CONFIGS as for AlterConfigs; a BROKER_LOGGER resource needs CLUSTER_ACTION on
 * the CLUSTER (else CLUSTER_AUTHORIZATION_FAILED "Cluster authorization failed.").
 */
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../../../protocol/generated/incremental-alter-configs';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { alterConfigsDenials, alterConfigsResponses, clientMetricsResourcesToAlter, topicResourcesToAlter } from '../../handlers/alter-configs';
import { authHelper } from '../../security/authorize';

/** Only topic and client-metrics configs live in the controller here. */
const NOT_TOPIC_MESSAGE = 'the controller only alters topic and client metrics configs';

export const controllerIncrementalAlterConfigsHandler = defineControllerHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>({
  apiKey: ApiKey.IncrementalAlterConfigs,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  async handle(node, ctx, req) {
    const denials = alterConfigsDenials(authHelper(node.authorizer, ctx), req.resources, 'cluster-action');
    const topics = topicResourcesToAlter(req.resources, denials);
    const results = await node.controller.alterTopicConfigs(
      topics.map((r) => ({ topic: r.resourceName, incremental: true, ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })) })),
      req.validateOnly,
    );
    const clientMetrics = await node.controller.alterClientMetricsConfigs(
      clientMetricsResourcesToAlter(req.resources, denials).map((r) => ({ name: r.resourceName, incremental: true, ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })) })),
      req.validateOnly,
    );
    return { responses: alterConfigsResponses(req.resources, results, NOT_TOPIC_MESSAGE, denials, clientMetrics) };
  },
});
