/**
 * UpdateFeatures (57), v0-2 (KIP-584, KIP-778): changes finalized feature levels through the
 * controller, which validates them (metadata/controller/feature-control-manager.ts: upgrade, safe
 * and unsafe downgrade, the supported ranges of the controller and of every registered broker) and
 * writes FeatureLevelRecords to the metadata log, all or none; validate_only (v1+) writes nothing.
 * A combined node calls its in-process controller; a cluster broker forwards the request to the
 * controller listener and relays its answer, as a KRaft broker forwards it.
 * The upgrade type is the request's upgrade_type field; v0 has none, so, as with Kafka's
 * QuorumController (which reads the field, not allow_downgrade), a v0 update is an UPGRADE.
 * Answer (QuorumController.updateFeatures): a failure is INVALID_UPDATE_VERSION at the top level,
 * "The update failed for all features since the following feature had an error: ...", and no
 * per-feature results; a success is NONE with, at v0-1, one result per update (NONE, message "NONE",
 * Kafka's Errors.NONE.message()), and none at v2. A feature listed twice counts once (its last
 * listing), as in Kafka's map.
 * Authorization (ControllerApis.handleUpdateFeatures): ALTER on the CLUSTER, else
 * CLUSTER_AUTHORIZATION_FAILED at the top level and nothing is changed.
 */
import { ErrorCode } from '../../protocol/errors';
import type { Input } from '../../protocol/primitives/input';
import type { UpdateFeaturesRequest, UpdateFeaturesResponse } from '../../protocol/generated/update-features';
import { ApiKey } from '../../protocol/generated';
import type { ControllerApi } from '../../metadata/controller/controller';
import type { FeatureUpdate } from '../../metadata/controller/feature-control-manager';
import type { Authorizer } from '../../metadata/authorizer/authorizer';
import { AclOperation } from '../../metadata/authorizer/authorizer';
import type { RequestContext } from '../network/request-context';
import { defineHandler } from './define-handler';
import { AUTHORIZATION_ERROR_MESSAGE, authHelper } from '../security/authorize';

/** The updates as the controller takes them: one per feature, its last listing. */
function featureUpdates(req: UpdateFeaturesRequest): FeatureUpdate[] {
  const byName = new Map<string, FeatureUpdate>();
  for (const u of req.featureUpdates) byName.set(u.feature, { feature: u.feature, level: u.maxVersionLevel, upgradeType: u.upgradeType });
  return [...byName.values()];
}

/** Authorization, the controller call and the answer: shared by the broker and the controller listener. */
export async function updateFeatures(authorizer: Authorizer, controller: ControllerApi, ctx: RequestContext, req: UpdateFeaturesRequest): Promise<Input<UpdateFeaturesResponse>> {
  if (!authHelper(authorizer, ctx).authorizeCluster(AclOperation.ALTER)) {
    const errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
    return { errorCode, errorMessage: AUTHORIZATION_ERROR_MESSAGE[errorCode], results: [] };
  }
  const updates = featureUpdates(req);
  const validateOnly = ctx.apiVersion >= 1 && req.validateOnly;
  const { errorCode, errorMessage } = await controller.updateFeatures(updates, validateOnly);
  if (errorCode !== ErrorCode.NONE || ctx.apiVersion >= 2) return { errorCode, errorMessage, results: [] };
  return { errorCode, errorMessage, results: updates.map((u) => ({ feature: u.feature, errorCode: ErrorCode.NONE, errorMessage: 'NONE' })) };
}

export const updateFeaturesHandler = defineHandler<UpdateFeaturesRequest, UpdateFeaturesResponse>({
  apiKey: ApiKey.UpdateFeatures,
  name: 'UpdateFeatures',
  minVersion: 0,
  maxVersion: 2,
  handle(broker, ctx, req) {
    return updateFeatures(broker.authorizer, broker.controller, ctx, req);
  },
});
