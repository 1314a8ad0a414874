/**
 * AlterConfigs (33), v0-2, on the controller listener: replaces a topic's config overrides
 * (INVALID_CONFIG, UNKNOWN_TOPIC_OR_PARTITION); CLIENT_METRICS subscriptions as on a broker;
 * other resource types get INVALID_REQUEST, unknown
 * ones UNSUPPORTED_VERSION, a resource listed twice one INVALID_REQUEST "Duplicate resource.".
 * Authorization (ControllerApis.authorizeAlterResource), against the principal of this connection:
 * ALTER_CONFIGS on the CLUSTER (broker, client metrics), TOPIC or GROUP; see
 * broker/handlers/alter-configs.ts.
 */
import type { AlterConfigsRequest, AlterConfigsResponse } from '../../../protocol/generated/alter-configs';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { alterConfigsDenials, alterConfigsResponses, clientMetricsResourcesToAlter, topicResourcesToAlter } from '../../handlers/alter-configs';
import { authHelper } from '../../security/authorize';

/** Only topic and client-metrics configs live in the controller here. */
const NOT_TOPIC_MESSAGE = 'the controller only alters topic and client metrics configs';

export const controllerAlterConfigsHandler = defineControllerHandler<AlterConfigsRequest, AlterConfigsResponse>({
  apiKey: ApiKey.AlterConfigs,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  async handle(node, ctx, req) {
    const denials = alterConfigsDenials(authHelper(node.authorizer, ctx), req.resources, 'not-authorized');
    const topics = topicResourcesToAlter(req.resources, denials);
    const results = await node.controller.alterTopicConfigs(
      topics.map((r) => ({ topic: r.resourceName, incremental: false, ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })) })),
      req.validateOnly,
    );
    const clientMetrics = await node.controller.alterClientMetricsConfigs(
      clientMetricsResourcesToAlter(req.resources, denials).map((r) => ({ name: r.resourceName, incremental: false, ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })) })),
      req.validateOnly,
    );
    return { responses: alterConfigsResponses(req.resources, results, NOT_TOPIC_MESSAGE, denials, clientMetrics) };
  },
});
