/**
 * DeleteGroups (42), v0-2.
 * Deletes Empty groups and their committed offsets (offset and group metadata tombstones in
 * __consumer_offsets). Per group: NONE, GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP (members are still in
 * it), COORDINATOR_NOT_AVAILABLE, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS. A group named
 * twice is answered once.
 */
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../../protocol/generated/delete-groups';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';

export const deleteGroupsHandler = defineHandler<DeleteGroupsRequest, DeleteGroupsResponse>({
  apiKey: ApiKey.DeleteGroups,
  name: 'DeleteGroups',
  minVersion: 0,
  maxVersion: 2,
  async handle(broker, _ctx, req) {
    const ids = [...new Set(req.groupsNames)];
    const codes = await Promise.all(ids.map((g) => broker.groupCoordinator.deleteGroup(g)));
    return { results: ids.map((groupId, i) => ({ groupId, errorCode: codes[i] })) };
  },
});
