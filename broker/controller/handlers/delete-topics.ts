/**
 * DeleteTopics (20), v1-6, on the controller listener: by name (v1-5) or by name / topic id (v6),
 * with the rules of broker/handlers/delete-topics.ts (Kafka's ControllerApis.deleteTopics): this
 * node's delete.topic.enable=false answers every listing TOPIC_DELETION_DISABLED (INVALID_REQUEST
 * before v3); duplicates, name-and-id and neither get INVALID_REQUEST; UNKNOWN_TOPIC_OR_PARTITION /
 * UNKNOWN_TOPIC_ID. Names and ids are resolved against the controller's own image, so a standby
 * controller of a quorum answers NOT_CONTROLLER before anything else (its image may not have the
 * newest topics yet: Kafka's ControllerApis resolves them through the active QuorumController).
 * Authorization (ControllerApis.handleDeleteTopics), against the principal of this connection:
 * DELETE on the CLUSTER, or DESCRIBE and DELETE on each TOPIC, with the answers of
 * broker/handlers/delete-topics.ts.
 */
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../../../protocol/generated/delete-topics';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { deleteTopicsAnswers, deleteTopicsAuthorization } from '../../handlers/delete-topics';
import { authHelper } from '../../security/authorize';

export const controllerDeleteTopicsHandler = defineControllerHandler<DeleteTopicsRequest, DeleteTopicsResponse>({
  apiKey: ApiKey.DeleteTopics,
  name: 'DeleteTopics',
  minVersion: 1,
  maxVersion: 6,
  async handle(node, ctx, req) {
    const v = ctx.apiVersion;
    node.controller.assertActive();
    const answers = await deleteTopicsAnswers(
      node.controller,
      node.controller.image,
      node.config.getBoolean('delete.topic.enable'),
      v,
      req,
      undefined,
      deleteTopicsAuthorization(authHelper(node.authorizer, ctx)),
    );
    return {
      responses: answers.map((a) => ({
        name: a.name,
        topicId: v >= 6 ? a.topicId : undefined,
        errorCode: a.errorCode,
        errorMessage: v >= 5 ? a.errorMessage : undefined,
      })),
    };
  },
});
