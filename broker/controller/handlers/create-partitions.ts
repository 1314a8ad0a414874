/**
 * CreatePartitions (37), v0-3, on the controller listener: grows topics (INVALID_PARTITIONS when
 * not an increase, INVALID_REPLICA_ASSIGNMENT, INVALID_REPLICATION_FACTOR, POLICY_VIOLATION on
 * every topic of a request adding more than 10,000 partitions, INVALID_REQUEST once per topic
 * named twice), validate_only; the rules are broker/handlers/create-partitions.ts's.
 * Authorization (ControllerApis.handleCreatePartitions), against the principal of this
 * connection: ALTER on each TOPIC, else TOPIC_AUTHORIZATION_FAILED.
 */
import type { CreatePartitionsRequest, CreatePartitionsResponse } from '../../../protocol/generated/create-partitions';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { alterableTopics, createPartitionsAnswers } from '../../handlers/create-partitions';
import { authHelper } from '../../security/authorize';

export const controllerCreatePartitionsHandler = defineControllerHandler<CreatePartitionsRequest, CreatePartitionsResponse>({
  apiKey: ApiKey.CreatePartitions,
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  async handle(node, ctx, req) {
    return { results: await createPartitionsAnswers(node.controller, req, undefined, alterableTopics(authHelper(node.authorizer, ctx))) };
  },
});
