/**
 * IncrementalAlterConfigs (44), v0-1.
 * SET / DELETE / APPEND / SUBTRACT on a topic's config overrides (APPEND/SUBTRACT on list configs
 * such as cleanup.policy), validated as a whole (INVALID_CONFIG); unknown topic:
 * UNKNOWN_TOPIC_OR_PARTITION. validate_only changes nothing. A resource listed twice: one
 * INVALID_REQUEST "Duplicate resource."; an unknown resource type: UNSUPPORTED_VERSION (see
 * alter-configs.ts, whose rules these are).
 * BROKER resources (dynamic broker configs): the ops applied to the resource's current dynamic
 * set, checked by this broker (broker-config-preprocess.ts) and written by the controller.
 * CLIENT_METRICS resources (KIP-714 subscriptions): SET and DELETE, validated as Kafka does
 * (metadata/controller/client-metrics-config-control.ts).
 * GROUP (32) resources (a group's dynamic configs, Kafka 4.0's GroupConfig: consumer.session.timeout.ms,
 * consumer.heartbeat.interval.ms and the share.* ones): SET and DELETE, written by the controller
 * as ConfigRecords after Kafka's validation (metadata/controller/group-config-control.ts,
 * config/group-configs.ts: INVALID_CONFIG "Unknown group config name: x", the bound messages).
 * BROKER_LOGGER (8) resources change this broker's log levels at run time, with Kafka's validation
 * (broker-logger-configs.ts); a failed resource changes nothing.
 * Authorization: ALTER_CONFIGS as for AlterConfigs (see alter-configs.ts; a GROUP resource: on the
 * GROUP, else GROUP_AUTHORIZATION_FAILED); a BROKER_LOGGER resource
 * needs ALTER_CONFIGS on the CLUSTER (else CLUSTER_AUTHORIZATION_FAILED without a message, as
 * ConfigAdminManager.preprocess answers it).
 */
import type {
  IncrementalAlterConfigsRequest,
  IncrementalAlterConfigsResponse,
} from '../../protocol/generated/incremental-alter-configs';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { alterConfigsDenials, alterConfigsResponses, resourcesToAlter, resultsByKey, topicResourcesToAlter } from './alter-configs';
import { alterBrokerResources } from './broker-config-preprocess';
import { ConfigResourceType } from '../../metadata/metadata-records';
import { authHelper } from '../security/authorize';
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import { alterBrokerLoggers } from './broker-logger-configs';

export const incrementalAlterConfigsHandler = defineHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>({
  apiKey: ApiKey.IncrementalAlterConfigs,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  async handle(broker, ctx, req) {
    const denials = alterConfigsDenials(authHelper(broker.authorizer, ctx), req.resources, 'alter-configs');
    const topics = topicResourcesToAlter(req.resources, denials);
    const topicResults = await broker.controller.alterTopicConfigs(
      topics.map((r) => ({
        topic: r.resourceName,
        incremental: true,
        ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })),
      })),
      req.validateOnly,
    );
    const brokerResults = await alterBrokerResources(
      broker,
      resourcesToAlter(req.resources, ConfigResourceType.BROKER, denials).map((r) => ({
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        incremental: true,
        ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })),
      })),
      req.validateOnly,
    );
    const clientMetrics = resourcesToAlter(req.resources, ConfigResourceType.CLIENT_METRICS, denials);
    const clientMetricsResults = await broker.controller.alterClientMetricsConfigs(
      clientMetrics.map((r) => ({
        name: r.resourceName,
        incremental: true,
        ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })),
      })),
      req.validateOnly,
    );
    const groups = resourcesToAlter(req.resources, ConfigResourceType.GROUP, denials);
    const groupResults = await broker.controller.alterGroupConfigs(
      groups.map((r) => ({
        name: r.resourceName,
        incremental: true,
        ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })),
      })),
      req.validateOnly,
    );
    const brokerLogger = (r: (typeof req.resources)[number]): { errorCode: number; errorMessage: string | null } => {
      try {
        alterBrokerLoggers(broker.logger, broker.nodeId, r.resourceName, r.configs, req.validateOnly);
        return { errorCode: ErrorCode.NONE, errorMessage: null };
      } catch (err) {
        if (!(err instanceof KafkaError)) broker.logger.error('IncrementalAlterConfigs on BROKER_LOGGER failed', { resource: r.resourceName, err });
        else broker.logger.info(`Error preprocessing incrementalAlterConfigs request on BROKER_LOGGER ${r.resourceName}: ${err.message}`);
        return { errorCode: toErrorCode(err), errorMessage: (err as Error).message };
      }
    };
    const loggers = resourcesToAlter(req.resources, ConfigResourceType.BROKER_LOGGER, denials);
    const results = new Map([
      ...resultsByKey(topics, topicResults),
      ...brokerResults,
      ...resultsByKey(clientMetrics, clientMetricsResults),
      ...resultsByKey(groups, groupResults),
      ...resultsByKey(loggers, loggers.map(brokerLogger)),
    ]);
    return { responses: alterConfigsResponses(req.resources, results, undefined, denials) };
  },
});
