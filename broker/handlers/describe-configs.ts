/**
 * DescribeConfigs (32), v0-4.
 * Topic resources (2): every topic config, defaults included, each with its source
 * (DYNAMIC_TOPIC_CONFIG for the topic's overrides, STATIC_BROKER_CONFIG / DEFAULT_CONFIG for
 * inherited values) and, with include_synonyms (v1+), its synonym chain in Kafka's order; unknown
 * topic: UNKNOWN_TOPIC_OR_PARTITION; a topic value inherited from a dynamic broker config has that
 * source. Broker resources (4): this broker's configs in force (resource name = its node id; sources
 * DYNAMIC_BROKER_CONFIG > DYNAMIC_DEFAULT_BROKER_CONFIG > STATIC_BROKER_CONFIG > DEFAULT_CONFIG) or
 * the dynamic cluster defaults (resource name ""); another broker's id gets INVALID_REQUEST;
 * password-type values are null and sensitive.
 * Broker logger resources (8): every log4j logger of this broker with its effective level
 * (broker-logger-configs.ts). configuration_keys null = all.
 * Client metrics resources (16, KIP-714 subscriptions): the subscription's stored configs with
 * source DYNAMIC_CLIENT_METRICS_CONFIG, all of them whatever configuration_keys says (as Kafka);
 * none for a name with no configs; an empty name INVALID_REQUEST.
 * Group resources (32, a group's dynamic configs; config/group-configs.ts): every group config, or
 * those in configuration_keys, with the group's value and source DYNAMIC_GROUP_CONFIG, else the
 * default (the broker's group.consumer.* value for the consumer ones) and DEFAULT_CONFIG; with
 * include_synonyms each has one synonym, itself with that source (Kafka's createGroupConfigEntry);
 * the group need not exist; an empty name INVALID_REQUEST "Group name must not be empty".
 * include_documentation (v3+) and config_type (v3+) are filled in.
 * Authorization (ConfigHelper.handleDescribeConfigsRequest): DESCRIBE_CONFIGS on the CLUSTER for
 * broker, broker logger and client metrics resources (else CLUSTER_AUTHORIZATION_FAILED), on the
 * TOPIC for a topic (TOPIC_AUTHORIZATION_FAILED) and on the GROUP for a group
 * (GROUP_AUTHORIZATION_FAILED); a denied resource is answered with the error's default message and
 * no configs, after the authorized ones, as Kafka appends them. Unknown resource types are not
 * authorized (INVALID_REQUEST, as before).
 */
import { ErrorCode, KafkaError, toErrorCode } from '../../protocol/errors';
import type { Input } from '../../protocol/primitives/input';
import { ApiKey } from '../../protocol/generated';
import type {
  DescribeConfigsRequest,
  DescribeConfigsResponse,
  DescribeConfigsResponseDescribeConfigsResult,
} from '../../protocol/generated/describe-configs';
import { ConfigSource, ConfigType } from '../../config/config-types';
import type { DescribeConfigEntry } from '../../config/kafka-config';
import { ConfigResourceType } from '../../metadata/metadata-records';
import { defineHandler } from './define-handler';
import { describeBrokerLoggers } from './broker-logger-configs';
import { describeGroupConfigs, groupConfigBounds } from '../../config/group-configs';
import { AUTHORIZATION_ERROR_MESSAGE, authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../../metadata/authorizer/authorizer';

/**
 * The error a config resource's authorization failure is answered with, or null when `operation`
 * (DESCRIBE_CONFIGS, ALTER_CONFIGS) is allowed on it; undefined for a type Kafka does not authorize.
 */
export function configResourceDenial(
  auth: AuthHelper,
  operation: typeof AclOperation.DESCRIBE_CONFIGS | typeof AclOperation.ALTER_CONFIGS,
  resourceType: number,
  resourceName: string,
): number | null | undefined {
  switch (resourceType) {
    case ConfigResourceType.BROKER:
    case ConfigResourceType.BROKER_LOGGER:
    case ConfigResourceType.CLIENT_METRICS:
      return auth.authorize(operation, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME) ? null : ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
    case ConfigResourceType.TOPIC:
      return auth.authorize(operation, ResourceType.TOPIC, resourceName) ? null : ErrorCode.TOPIC_AUTHORIZATION_FAILED;
    case ConfigResourceType.GROUP:
      return auth.authorize(operation, ResourceType.GROUP, resourceName) ? null : ErrorCode.GROUP_AUTHORIZATION_FAILED;
    default:
      return undefined;
  }
}

export const describeConfigsHandler = defineHandler<DescribeConfigsRequest, DescribeConfigsResponse>({
  apiKey: ApiKey.DescribeConfigs,
  name: 'DescribeConfigs',
  minVersion: 0,
  maxVersion: 4,
  handle(broker, ctx, req) {
    const includeSynonyms = ctx.apiVersion >= 1 && req.includeSynonyms;
    const includeDocumentation = ctx.apiVersion >= 3 && req.includeDocumentation;
    const auth = authHelper(broker.authorizer, ctx);
    const denied: Input<DescribeConfigsResponseDescribeConfigsResult>[] = [];
    const authorized = req.resources.filter((res) => {
      const code = configResourceDenial(auth, AclOperation.DESCRIBE_CONFIGS, res.resourceType, res.resourceName);
      if (code === null || code === undefined) return true;
      denied.push({ resourceType: res.resourceType, resourceName: res.resourceName, errorCode: code, errorMessage: AUTHORIZATION_ERROR_MESSAGE[code], configs: [] });
      return false;
    });
    const results = authorized.map((res): Input<DescribeConfigsResponseDescribeConfigsResult> => {
      const base = { resourceType: res.resourceType, resourceName: res.resourceName };
      try {
        const opts = { names: res.configurationKeys, includeSynonyms, includeDocumentation };
        let entries: DescribeConfigEntry[];
        switch (res.resourceType) {
          case ConfigResourceType.TOPIC:
            if (!broker.metadata.topic(res.resourceName)) {
              throw new KafkaError(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION, `Topic ${res.resourceName} does not exist.`);
            }
            entries = broker.topicConfig(res.resourceName).describe(opts);
            break;
          case ConfigResourceType.BROKER:
            if (res.resourceName === '') entries = broker.config.describeClusterDefaults(opts);
            else if (res.resourceName === String(broker.nodeId)) entries = broker.config.describe(opts);
            else {
              throw new KafkaError(
                ErrorCode.INVALID_REQUEST,
                `Unexpected broker id, expected ${broker.nodeId} or empty string, but received ${res.resourceName}`,
              );
            }
            break;
          case ConfigResourceType.BROKER_LOGGER:
            entries = describeBrokerLoggers(broker.logger, broker.nodeId, res.resourceName, res.configurationKeys);
            break;
          case ConfigResourceType.CLIENT_METRICS:
            // As Kafka's ConfigHelper: every stored key (configuration_keys is not applied), none for an unknown subscription.
            if (res.resourceName === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Client metrics subscription name must not be empty');
            entries = [...broker.metadata.clientMetricsConfig(res.resourceName)].map(([name, value]) => ({
              name,
              value,
              readOnly: false,
              isDefault: false,
              source: ConfigSource.DYNAMIC_CLIENT_METRICS_CONFIG,
              isSensitive: false,
              synonyms: [],
              configType: ConfigType.UNKNOWN,
              documentation: null,
            }));
            break;
          case ConfigResourceType.GROUP:
            if (res.resourceName === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Group name must not be empty');
            entries = describeGroupConfigs(broker.metadata.groupConfig(res.resourceName), groupConfigBounds(broker.config), opts);
            break;
          default:
            throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unsupported resource type ${res.resourceType}`);
        }
        return {
          ...base,
          errorCode: ErrorCode.NONE,
          errorMessage: null,
          configs: entries.map((e) => ({
            name: e.name,
            value: e.isSensitive ? null : e.value,
            readOnly: e.readOnly,
            // is_default is a v0 field; later versions say it through config_source.
            isDefault: ctx.apiVersion === 0 ? e.isDefault : false,
            configSource: e.source,
            isSensitive: e.isSensitive,
            synonyms: e.synonyms.map((s) => ({ name: s.name, value: e.isSensitive ? null : s.value, source: s.source })),
            configType: e.configType,
            documentation: e.documentation,
          })),
        };
      } catch (err) {
        if (!(err instanceof KafkaError)) broker.logger.error('DescribeConfigs failed', { resource: base, err });
        return { ...base, errorCode: toErrorCode(err), errorMessage: (err as Error).message, configs: [] };
      }
    });
    return { results: [...results, ...denied] };
  },
});
