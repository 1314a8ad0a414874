/**
 * UpdateFeatures (57), v0-2, on the controller listener: brokers forward their clients'
 * UpdateFeatures here (Kafka's ControllerApis.handleUpdateFeatures); the Controller validates the
 * updates and writes the FeatureLevelRecords (feature-control-manager.ts). The answer and the
 * authorization (ALTER on the CLUSTER, against this connection's principal) are the broker's
 * (broker/handlers/update-features.ts).
 */
import type { UpdateFeaturesRequest, UpdateFeaturesResponse } from '../../../protocol/generated/update-features';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { updateFeatures } from '../../handlers/update-features';

export const controllerUpdateFeaturesHandler = defineControllerHandler<UpdateFeaturesRequest, UpdateFeaturesResponse>({
  apiKey: ApiKey.UpdateFeatures,
  name: 'UpdateFeatures',
  minVersion: 0,
  maxVersion: 2,
  handle(node, ctx, req) {
    return updateFeatures(node.authorizer, node.controller, ctx, req);
  },
});
