/**
 * AllocateProducerIds (67), v0: a block of 1000 producer ids for a broker's InitProducerId
 * (KIP-730); a stale broker epoch is STALE_BROKER_EPOCH.
 * Authorization (ControllerApis.handleAllocateProducerIdsRequest): CLUSTER_ACTION on the CLUSTER,
 * else CLUSTER_AUTHORIZATION_FAILED (start and length at their defaults) and no block is taken.
 */
import { ErrorCode, toErrorCode } from '../../../protocol/errors';
import type { AllocateProducerIdsRequest, AllocateProducerIdsResponse } from '../../../protocol/generated/allocate-producer-ids';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { authHelper } from '../../security/authorize';
import { AclOperation } from '../../../metadata/authorizer/authorizer';

export const controllerAllocateProducerIdsHandler = defineControllerHandler<AllocateProducerIdsRequest, AllocateProducerIdsResponse>({
  apiKey: ApiKey.AllocateProducerIds,
  name: 'AllocateProducerIds',
  minVersion: 0,
  maxVersion: 0,
  async handle(node, ctx, req) {
    if (!authHelper(node.authorizer, ctx).authorizeCluster(AclOperation.CLUSTER_ACTION)) return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED };
    try {
      const r = await node.controller.allocateProducerIds(req.brokerId, req.brokerEpoch, 1000);
      return { errorCode: ErrorCode.NONE, producerIdStart: r.first, producerIdLen: r.size };
    } catch (err) {
      return { errorCode: toErrorCode(err), producerIdStart: -1n, producerIdLen: 0 };
    }
  },
});
