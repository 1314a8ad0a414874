/**
 * IncrementalAlterConfigs (44), v0-1, on the controller listener: SET / DELETE / APPEND / SUBTRACT
 * on topic config overrides; other resource types get INVALID_REQUEST.
 */
import { ErrorCode } from '../../protocol/errors';
import { ConfigResourceType } from '../../replication/metadata-records';
import type { IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse } from '../../protocol/generated/incremental-alter-configs';
import { defineControllerHandler } from './define';

/** Only topic configs live in the controller here. */
const notTopic = (resourceType: number, resourceName: string) => ({
  errorCode: ErrorCode.INVALID_REQUEST,
  errorMessage: 'the controller only alters topic configs',
  resourceType,
  resourceName,
});

export const controllerIncrementalAlterConfigsHandler = defineControllerHandler<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>({
  apiKey: 44,
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  async handle(node, _ctx, req) {
    const topics = req.resources.filter((r) => r.resourceType === ConfigResourceType.TOPIC);
    const results = await node.controller.alterTopicConfigs(
      topics.map((r) => ({ topic: r.resourceName, incremental: true, ops: r.configs.map((c) => ({ name: c.name, op: c.configOperation, value: c.value })) })),
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
