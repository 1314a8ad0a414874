/**
 * CreateTopics (19), v2-7, on the controller listener: brokers forward their clients' CreateTopics
 * here. Validation, placement and error codes are the Controller's (TOPIC_ALREADY_EXISTS,
 * INVALID_TOPIC_EXCEPTION, INVALID_PARTITIONS, INVALID_REPLICATION_FACTOR beyond the active
 * brokers, INVALID_REPLICA_ASSIGNMENT, INVALID_CONFIG, POLICY_VIOLATION on every topic of a request
 * over 10,000 partitions, INVALID_REQUEST "Duplicate topic name." once per name listed twice and
 * for __cluster_metadata; see broker/handlers/create-topics.ts, whose rules these are). v5+
 * answers the partition count and replication factor; the effective configs (v5+) are the
 * forwarding broker's to fill in, so this answers an empty list.
 * Authorization (ControllerApis.handleCreateTopics), against the principal of this connection:
 * CREATE on the CLUSTER or on each TOPIC (else TOPIC_AUTHORIZATION_FAILED "Authorization failed.");
 * without DESCRIBE_CONFIGS on a created topic, v5+ answers -1 counts and topic_config_error_code
 * TOPIC_AUTHORIZATION_FAILED.
 * On a controller that is not the active one of a KRaft quorum the Controller refuses with
 * NOT_CONTROLLER; that is answered on every topic of the request, as Kafka's
 * CreateTopicsRequest.getErrorResponse does (a thrown error would close the connection).
 */
import { ErrorCode, KafkaError } from '../../../protocol/errors';
import { ZERO_UUID } from '../../../protocol/primitives/uuid';
import type { CreateTopicsRequest, CreateTopicsResponse } from '../../../protocol/generated/create-topics';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { createTopicsAnswers, createTopicsAuthorization, configsHidden } from '../../handlers/create-topics';
import { authHelper } from '../../security/authorize';

export const controllerCreateTopicsHandler = defineControllerHandler<CreateTopicsRequest, CreateTopicsResponse>({
  apiKey: ApiKey.CreateTopics,
  name: 'CreateTopics',
  minVersion: 2,
  maxVersion: 7,
  async handle(node, ctx, req) {
    const v = ctx.apiVersion;
    let answers;
    try {
      answers = await createTopicsAnswers(node.controller, req, createTopicsAuthorization(authHelper(node.authorizer, ctx)));
    } catch (err) {
      if (!(err instanceof KafkaError) || err.code !== ErrorCode.NOT_CONTROLLER) throw err;
      return {
        topics: req.topics.map((t) => ({
          name: t.name,
          topicId: v >= 7 ? ZERO_UUID : undefined,
          errorCode: err.code,
          errorMessage: err.message,
          numPartitions: v >= 5 ? -1 : undefined,
          replicationFactor: v >= 5 ? -1 : undefined,
          configs: v >= 5 ? [] : undefined,
        })),
      };
    }
    return {
      topics: answers.map(({ result: r, configsVisible }) => {
        const ok = r.errorCode === ErrorCode.NONE;
        if (ok && v >= 5 && !configsVisible) return configsHidden(r, v >= 7 ? r.topicId || ZERO_UUID : undefined);
        return {
          name: r.name,
          topicId: v >= 7 ? r.topicId || ZERO_UUID : undefined,
          errorCode: r.errorCode,
          errorMessage: ok ? null : r.errorMessage,
          numPartitions: v >= 5 ? (ok ? r.numPartitions : -1) : undefined,
          replicationFactor: v >= 5 ? (ok ? r.replicationFactor : -1) : undefined,
          configs: v >= 5 ? [] : undefined,
        };
      }),
    };
  },
});
