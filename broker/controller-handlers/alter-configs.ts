/**
 * AlterConfigs (33), v0-2, on the controller listener: replaces a topic's config overrides
 * (INVALID_CONFIG, UNKNOWN_TOPIC_OR_PARTITION); other resource types get INVALID_REQUEST.
 */
import { ErrorCode } from '../../protocol/errors';
import { ConfigResourceType } from '../../replication/metadata-records';
import type { AlterConfigsRequest, AlterConfigsResponse } from '../../protocol/generated/alter-configs';
import { defineControllerHandler } from './define';

/** Only topic configs live in the controller here. */
const notTopic = (resourceType: number, resourceName: string) => ({
  errorCode: ErrorCode.INVALID_REQUEST,
  errorMessage: 'the controller only alters topic configs',
  resourceType,
  resourceName,
});

export const controllerAlterConfigsHandler = defineControllerHandler<AlterConfigsRequest, AlterConfigsResponse>({
  apiKey: 33,
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  async handle(node, _ctx, req) {
    const topics = req.resources.filter((r) => r.resourceType === ConfigResourceType.TOPIC);
    const results = await node.controller.alterTopicConfigs(
      topics.map((r) => ({ topic: r.resourceName, incremental: false, ops: r.configs.map((c) => ({ name: c.name, op: 0, value: c.value })) })),
      req.validateOnly,
    );
    let next = 0;
    return {
      responses: req.resources.map((r) => {
        if (r.resourceType !== ConfigResourceType.TOPIC) return notTopic(r.resourceType, r.resourceName);
        const res = results[next++];
        return { errorCode: res.errorCode, errorMessage: res.errorMessage, resourceType: r.resourceType, resourceName: r.resourceName };
      }),
    };
  },
});
