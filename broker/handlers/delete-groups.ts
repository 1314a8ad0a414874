/**
 * DeleteGroups (42), v0-2.
 * Deletes Empty groups and their committed offsets (offset and group metadata tombstones in
 * __consumer_offsets; a KIP-848 consumer group without members gets a tombstone for each of its
 * records, as Kafka's createGroupTombstoneRecords). Per group: NONE, GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP (members are still in
 * it), COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS. A group named
 * twice is answered once.
 * Authorization (KafkaApis.handleDeleteGroupsRequest): DELETE on each GROUP; a group without it is
 * GROUP_AUTHORIZATION_FAILED, answered after the others, and not deleted.
 */
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../../protocol/generated/delete-groups';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { ErrorCode } from '../../protocol/errors';
import { authHelper } from '../security/authorize';
import { AclOperation, ResourceType } from '../../metadata/authorizer/authorizer';

export const deleteGroupsHandler = defineHandler<DeleteGroupsRequest, DeleteGroupsResponse>({
  apiKey: ApiKey.DeleteGroups,
  name: 'DeleteGroups',
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, ctx, req) {
    const ids = [...new Set(req.groupsNames)];
    const [deletable, denied] = authHelper(broker.authorizer, ctx).partitionByAuthorized(AclOperation.DELETE, ResourceType.GROUP, ids, (g) => g);
    const codes = await Promise.all(deletable.map((g) => broker.groupCoordinator.deleteGroup(g)));
    return {
      results: [
        ...deletable.map((groupId, i) => ({ groupId, errorCode: codes[i] })),
        ...denied.map((groupId) => ({ groupId, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED })),
      ],
    };
  },
});
