/**
 * AlterConfigs (33), v0-2.
 * Replaces a topic's whole set of config overrides (the legacy, non-incremental semantics), after
 * validating every entry (INVALID_CONFIG); unknown topic: UNKNOWN_TOPIC_OR_PARTITION. A
 * CLIENT_METRICS resource (a KIP-714 subscription) has its whole config set replaced, with Kafka's
 * validation (metadata/controller/client-metrics-config-control.ts).
 * validate_only changes nothing. As Kafka's ControllerApis (which a KRaft broker forwards to): a
 * resource (type and name) listed twice is answered once with INVALID_REQUEST "Duplicate resource."
 * and not changed; an unknown resource type gets UNSUPPORTED_VERSION "Unknown resource type N.".
 * BROKER resources (dynamic broker configs, KIP-226; resource name = this broker's id or "" for
 * the cluster default): the whole dynamic set of the resource is replaced, after this broker's
 * checks (broker-config-preprocess.ts), by the controller. A GROUP resource (a group's dynamic
 * configs, as Kafka 4.0's ControllerApis.handleLegacyAlterConfigs) has its whole config set
 * replaced, with Kafka's GroupConfig validation (metadata/controller/group-config-control.ts).
 * BROKER_LOGGER resources get INVALID_REQUEST (legacy AlterConfigs does not alter them).
 * Authorization (ControllerApis.authorizeAlterResource, after the duplicate and type checks):
 * ALTER_CONFIGS on the CLUSTER for BROKER and CLIENT_METRICS resources (else
 * CLUSTER_AUTHORIZATION_FAILED), on the TOPIC for a topic (TOPIC_AUTHORIZATION_FAILED), on the
 * GROUP for a group (GROUP_AUTHORIZATION_FAILED), each with the error's default message; a denied
 * resource is not changed.
 */
import { ErrorCode } from '../../protocol/errors';
import type { AlterConfigsRequest, AlterConfigsResponse } from '../../protocol/generated/alter-configs';
import { ApiKey } from '../../protocol/generated';
import { ConfigResourceType } from '../../metadata/metadata-records';
import { defineHandler } from './define-handler';
import { AUTHORIZATION_ERROR_MESSAGE, authHelper, type AuthHelper } from '../security/authorize';
import { AclOperation, CLUSTER_RESOURCE_NAME, ResourceType } from '../../metadata/authorizer/authorizer';
import { configResourceDenial } from './describe-configs';
import { alterBrokerResources } from './broker-config-preprocess';

/** Resources refused by authorization: resource key -> the answer. */
export type AlterConfigsDenials = ReadonlyMap<string, { errorCode: number; errorMessage: string | null }>;

/**
 * Which resources of an (Incremental)AlterConfigs request the requester may not alter: each
 * resource listed once with a known type is checked (ControllerApis.authorizeAlterResource).
 * BROKER_LOGGER resources exist only in IncrementalAlterConfigs: a broker checks ALTER_CONFIGS on
 * the CLUSTER (ConfigAdminManager.preprocess; the error has no message), the controller listener
 * CLUSTER_ACTION (ControllerApis.handleIncrementalAlterConfigs; the default message).
 */
export function alterConfigsDenials(
  auth: AuthHelper,
  resources: readonly { resourceType: number; resourceName: string }[],
  brokerLogger: 'not-authorized' | 'alter-configs' | 'cluster-action',
): AlterConfigsDenials {
  const out = new Map<string, { errorCode: number; errorMessage: string | null }>();
  if (!auth.enabled) return out;
  const counts = resourceCounts(resources);
  for (const r of resources) {
    const key = resourceKey(r);
    if (counts.get(key) !== 1) continue;
    if (r.resourceType === ConfigResourceType.BROKER_LOGGER) {
      if (brokerLogger === 'not-authorized') continue;
      const allowed = auth.authorize(brokerLogger === 'alter-configs' ? AclOperation.ALTER_CONFIGS : AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME);
      if (!allowed) {
        const errorMessage = brokerLogger === 'alter-configs' ? null : AUTHORIZATION_ERROR_MESSAGE[ErrorCode.CLUSTER_AUTHORIZATION_FAILED];
        out.set(key, { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage });
      }
      continue;
    }
    const code = configResourceDenial(auth, AclOperation.ALTER_CONFIGS, r.resourceType, r.resourceName);
    if (code !== null && code !== undefined) out.set(key, { errorCode: code, errorMessage: AUTHORIZATION_ERROR_MESSAGE[code] });
  }
  return out;
}

const NO_DENIALS: AlterConfigsDenials = new Map();

const KNOWN_RESOURCE_TYPES = new Set<number>(Object.values(ConfigResourceType).filter((t) => t !== ConfigResourceType.UNKNOWN));

/** One resource's answer from the controller (or the broker's preprocessing), by resourceKey. */
export type AlterConfigsResults = ReadonlyMap<string, { errorCode: number; errorMessage: string | null }>;

/**
 * The resources of one type to hand on: each listed once, known type, not duplicated, not denied
 * (shared with IncrementalAlterConfigs and the controller listener's twins of both).
 */
export function resourcesToAlter<R extends { resourceType: number; resourceName: string }>(resources: readonly R[], resourceType: number, denials: AlterConfigsDenials = NO_DENIALS): R[] {
  const counts = resourceCounts(resources);
  return resources.filter((r) => r.resourceType === resourceType && counts.get(resourceKey(r)) === 1 && !denials.has(resourceKey(r)));
}

/** resourcesToAlter for TOPIC resources. */
export function topicResourcesToAlter<R extends { resourceType: number; resourceName: string }>(resources: readonly R[], denials: AlterConfigsDenials = NO_DENIALS): R[] {
  return resourcesToAlter(resources, ConfigResourceType.TOPIC, denials);
}

/** The key of a resource in AlterConfigsResults and AlterConfigsDenials. */
export const resourceKey = (r: { resourceType: number; resourceName: string }): string => `${r.resourceType}\u0000${r.resourceName}`;

function resourceCounts(resources: readonly { resourceType: number; resourceName: string }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of resources) if (KNOWN_RESOURCE_TYPES.has(r.resourceType)) counts.set(resourceKey(r), (counts.get(resourceKey(r)) ?? 0) + 1);
  return counts;
}

/** Pairs results with the resources they answer (the controller returns them in request order). */
export function resultsByKey<R extends { resourceType: number; resourceName: string }>(
  resources: readonly R[],
  results: readonly { errorCode: number; errorMessage: string | null }[],
): Map<string, { errorCode: number; errorMessage: string | null }> {
  return new Map(resources.map((r, i) => [resourceKey(r), { errorCode: results[i].errorCode, errorMessage: results[i].errorMessage }]));
}

/**
 * The response entries, in order of first listing: an unknown resource type UNSUPPORTED_VERSION
 * (each listing), a resource listed twice INVALID_REQUEST "Duplicate resource." (once), a denied
 * one its authorization error, a resource with a result (topics, brokers, CLIENT_METRICS
 * subscriptions, groups, IncrementalAlterConfigs' BROKER_LOGGER resources) that result, other resource
 * types INVALID_REQUEST with `unsupportedMessage` (krill does not alter them).
 */
export function alterConfigsResponses(
  resources: readonly { resourceType: number; resourceName: string }[],
  results: AlterConfigsResults,
  unsupportedMessage = 'krill does not support altering the configs of this resource type',
  denials: AlterConfigsDenials = NO_DENIALS,
): { errorCode: number; errorMessage: string | null; resourceType: number; resourceName: string }[] {
  const counts = resourceCounts(resources);
  const answered = new Set<string>();
  const out: { errorCode: number; errorMessage: string | null; resourceType: number; resourceName: string }[] = [];
  for (const r of resources) {
    const base = { resourceType: r.resourceType, resourceName: r.resourceName };
    if (!KNOWN_RESOURCE_TYPES.has(r.resourceType)) {
      out.push({ ...base, errorCode: ErrorCode.UNSUPPORTED_VERSION, errorMessage: `Unknown resource type ${r.resourceType}.` });
      continue;
    }
    const key = resourceKey(r);
    if (answered.has(key)) continue;
    answered.add(key);
    const denied = denials.get(key);
    const result = results.get(key);
    if (counts.get(key)! > 1) out.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate resource.' });
    else if (denied) out.push({ ...base, ...denied });
    else if (result) out.push({ ...base, errorCode: result.errorCode, errorMessage: result.errorMessage });
    else out.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: unsupportedMessage });
  }
  return out;
}

export const alterConfigsHandler = defineHandler<AlterConfigsRequest, AlterConfigsResponse>({
  apiKey: ApiKey.AlterConfigs,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, ctx, req) {
    const denials = alterConfigsDenials(authHelper(broker.authorizer, ctx), req.resources, 'not-authorized');
    const topics = topicResourcesToAlter(req.resources, denials);
    const topicResults = await broker.controller.alterTopicConfigs(
      topics.map((r) => ({
        topic: r.resourceName,
        incremental: false,
        ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })),
      })),
      req.validateOnly,
    );
    const brokerResults = await alterBrokerResources(
      broker,
      resourcesToAlter(req.resources, ConfigResourceType.BROKER, denials).map((r) => ({
        resourceType: r.resourceType,
        resourceName: r.resourceName,
        incremental: false,
        ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })),
      })),
      req.validateOnly,
    );
    const clientMetrics = resourcesToAlter(req.resources, ConfigResourceType.CLIENT_METRICS, denials);
    const clientMetricsResults = await broker.controller.alterClientMetricsConfigs(
      clientMetrics.map((r) => ({ name: r.resourceName, incremental: false, ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })) })),
      req.validateOnly,
    );
    const groups = resourcesToAlter(req.resources, ConfigResourceType.GROUP, denials);
    const groupResults = await broker.controller.alterGroupConfigs(
      groups.map((r) => ({ name: r.resourceName, incremental: false, ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })) })),
      req.validateOnly,
    );
    const results = new Map([
      ...resultsByKey(topics, topicResults),
      ...brokerResults,
      ...resultsByKey(clientMetrics, clientMetricsResults),
      ...resultsByKey(groups, groupResults),
    ]);
    return { responses: alterConfigsResponses(req.resources, results, undefined, denials) };
  },
});
