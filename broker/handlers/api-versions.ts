/**
 * ApiVersions (18), v0-4.
 * Lists every API krill implements with the version range it advertises (after any version caps).
 * The response header is always v0 (the dispatcher handles that, and answers an unsupported
 * ApiVersions version with a v0 body carrying UNSUPPORTED_VERSION, KIP-511).
 * v3+: the client software name/version must match Kafka's pattern, else INVALID_REQUEST; valid
 * ones are kept on the connection (network/client-information.ts) for client telemetry matching.
 * v3+: supported and finalized features with the finalized features epoch (api-versions-features.ts).
 * Authorization: none; every client may ask, authenticated or not (KafkaApis.handleApiVersionsRequest).
 */
import { ErrorCode } from '../../protocol/errors';
import type { ApiVersionsRequest, ApiVersionsResponse } from '../../protocol/generated/api-versions';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { apiVersionsFeatures } from './api-versions-features';
import { setClientInformation } from '../network/client-information';

const SOFTWARE_PATTERN = /^[a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])?$/;

export const apiVersionsHandler = defineHandler<ApiVersionsRequest, ApiVersionsResponse>({
  apiKey: ApiKey.ApiVersions,
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 4,
  handle(broker, ctx, req) {
    const apiKeys = broker.apiVersions();
    if (
      ctx.apiVersion >= 3 &&
      (!SOFTWARE_PATTERN.test(req.clientSoftwareName) || !SOFTWARE_PATTERN.test(req.clientSoftwareVersion))
    ) {
      return { errorCode: ErrorCode.INVALID_REQUEST, apiKeys };
    }
    if (ctx.apiVersion >= 3) setClientInformation(ctx.connection, { softwareName: req.clientSoftwareName, softwareVersion: req.clientSoftwareVersion });
    return { errorCode: ErrorCode.NONE, apiKeys, ...apiVersionsFeatures(broker.metadata, ctx.apiVersion) };
  },
});
