/**
 * ApiVersions (18), v0-4, on the controller listener: the controller's own API set (what brokers
 * and admin tools may send to the controller), built from CONTROLLER_HANDLERS.
 * v3+: a malformed client software name/version gets INVALID_REQUEST, as on brokers; supported and
 * finalized features from the controller's image (api-versions-features.ts).
 * Authorization: none (ControllerApis.handleApiVersionsRequest).
 */
import { ErrorCode } from '../../../protocol/errors';
import type { ApiVersionsRequest, ApiVersionsResponse } from '../../../protocol/generated/api-versions';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { apiVersionsFeatures } from '../../handlers/api-versions-features';

const SOFTWARE_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;

export const controllerApiVersionsHandler = defineControllerHandler<ApiVersionsRequest, ApiVersionsResponse>({
  apiKey: ApiKey.ApiVersions,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 4,
  handle(node, ctx, req) {
    const apiKeys = node.apiVersions();
    if (ctx.apiVersion >= 3 && (!SOFTWARE_PATTERN.test(req.clientSoftwareName) || !SOFTWARE_PATTERN.test(req.clientSoftwareVersion))) {
      return { errorCode: ErrorCode.INVALID_REQUEST, apiKeys };
    }
    return { errorCode: ErrorCode.NONE, apiKeys, ...apiVersionsFeatures(node.controller.image, ctx.apiVersion) };
  },
});
