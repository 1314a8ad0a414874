/**
 * AlterConfigs (33), v0-2.
 * Replaces a topic's whole set of config overrides (the legacy, non-incremental semantics), after
 * validating every entry (INVALID_CONFIG); unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
 * validate_only changes nothing. As Kafka's ControllerApis (which a KRaft broker forwards to): a
 * resource (type and name) listed twice is answered once with INVALID_REQUEST "Duplicate resource."
 * and not changed; an unknown resource type gets UNSUPPORTED_VERSION "Unknown resource type N.".
 * Not implemented: dynamic broker configs; a BROKER or BROKER_LOGGER resource gets INVALID_REQUEST
 * saying so, rather than a pretend success.
 */
import { ErrorCode } from '../../protocol/errors';
import type { AlterConfigsRequest, AlterConfigsResponse } from '../../protocol/generated/alter-configs';
import { ApiKey } from '../../protocol/generated';
import { ConfigResourceType } from '../../metadata/metadata-records';
import { defineHandler } from './define-handler';

const KNOWN_RESOURCE_TYPES = new Set<number>(Object.values(ConfigResourceType).filter((t) => t !== ConfigResourceType.UNKNOWN));

/**
 * The topic resources to hand to the controller: each listed once, known type, not duplicated
 * (shared with IncrementalAlterConfigs and the controller listener's twins of both).
 */
export function topicResourcesToAlter<R extends { resourceType: number; resourceName: string }>(resources: readonly R[]): R[] {
  const counts = resourceCounts(resources);
  return resources.filter((r) => r.resourceType === ConfigResourceType.TOPIC && counts.get(resourceKey(r)) === 1);
}

const resourceKey = (r: { resourceType: number; resourceName: string }): string => `${r.resourceType}\u0000${r.resourceName}`;

function resourceCounts(resources: readonly { resourceType: number; resourceName: string }[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const r of resources) if (KNOWN_RESOURCE_TYPES.has(r.resourceType)) counts.set(resourceKey(r), (counts.get(resourceKey(r)) ?? 0) + 1);
  return counts;
}

/**
 * The response entries, in order of first listing: an unknown resource type UNSUPPORTED_VERSION
 * (each listing), a resource listed twice INVALID_REQUEST "Duplicate resource." (once), a topic
 * the controller's result (`topicResults` holds them in the order topicResourcesToAlter gave the
 * topics), other resource types INVALID_REQUEST, since dynamic broker configs are not implemented.
 */
export function alterConfigsResponses(
  resources: readonly { resourceType: number; resourceName: string }[],
  topicResults: readonly { errorCode: number; errorMessage: string | null }[],
  nonTopicMessage = 'krill does not support altering broker configs dynamically yet',
): { errorCode: number; errorMessage: string | null; resourceType: number; resourceName: string }[] {
  const counts = resourceCounts(resources);
  const answered = new Set<string>();
  let next = 0;
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
    if (counts.get(key)! > 1) out.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Duplicate resource.' });
    else if (r.resourceType !== ConfigResourceType.TOPIC) out.push({ ...base, errorCode: ErrorCode.INVALID_REQUEST, errorMessage: nonTopicMessage });
    else {
      const res = topicResults[next++];
      out.push({ ...base, errorCode: res.errorCode, errorMessage: res.errorMessage });
    }
  }
  return out;
}

export const alterConfigsHandler = defineHandler<AlterConfigsRequest, AlterConfigsResponse>({
  apiKey: ApiKey.AlterConfigs,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, _ctx, req) {
    const topics = topicResourcesToAlter(req.resources);
    const results = await broker.controller.alterTopicConfigs(
      topics.map((r) => ({
        topic: r.resourceName,
        incremental: false,
        ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })),
      })),
      req.validateOnly,
    );
    return { responses: alterConfigsResponses(req.resources, results) };
  },
});
