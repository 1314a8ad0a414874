/**
 * AlterConfigs (33), v0-2.
 * Replaces a topic's whole set of config overrides (the legacy, non-incremental semantics), after
 * validating every entry (INVALID_CONFIG); unknown topic: UNKNOWN_TOPIC_OR_PARTITION.
 * validate_only changes nothing.
 * Not implemented: dynamic broker configs; a BROKER or BROKER_LOGGER resource gets INVALID_REQUEST
 * saying so, rather than a pretend success.
 */
import { ErrorCode } from '../../protocol/errors';
import type { AlterConfigsRequest, AlterConfigsResponse } from '../../protocol/generated/alter-configs';
import { ApiKey } from '../../protocol/generated';
import { ConfigResourceType } from '../../metadata/metadata-records';
import { defineHandler } from './define-handler';

/**
 * One response entry per requested resource, in request order: topics get the controller's result
 * (`topicResults` holds them in the order the topic resources appeared); other resource types get
 * INVALID_REQUEST, since dynamic broker configs are not implemented (shared with
 * IncrementalAlterConfigs and the controller listener's twins of both).
 */
export function alterConfigsResponses(
  resources: readonly { resourceType: number; resourceName: string }[],
  topicResults: readonly { errorCode: number; errorMessage: string | null }[],
  nonTopicMessage = 'krill does not support altering broker configs dynamically yet',
): { errorCode: number; errorMessage: string | null; resourceType: number; resourceName: string }[] {
  let next = 0;
  return resources.map((r) => {
    if (r.resourceType !== ConfigResourceType.TOPIC) {
      return {
        errorCode: ErrorCode.INVALID_REQUEST,
        errorMessage: nonTopicMessage,
        resourceType: r.resourceType,
        resourceName: r.resourceName,
      };
    }
    const res = topicResults[next++];
    return { errorCode: res.errorCode, errorMessage: res.errorMessage, resourceType: r.resourceType, resourceName: r.resourceName };
  });
}

export const alterConfigsHandler = defineHandler<AlterConfigsRequest, AlterConfigsResponse>({
  apiKey: ApiKey.AlterConfigs,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, _ctx, req) {
    const topics = req.resources.filter((r) => r.resourceType === ConfigResourceType.TOPIC);
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
