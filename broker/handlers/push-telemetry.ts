/**
 * PushTelemetry (72), v0 (KIP-714).
 * A client's metrics push, checked by the broker's ClientMetricsManager in Kafka's order: a
 * reserved (zero) client instance id INVALID_REQUEST; after a terminating push INVALID_REQUEST;
 * before the push interval elapsed (and not terminating) THROTTLING_QUOTA_EXCEEDED; a subscription
 * id that is not the current one UNKNOWN_SUBSCRIPTION_ID; a compression type id Kafka does not
 * know UNSUPPORTED_COMPRESSION_TYPE; metrics over telemetry.max.bytes TELEMETRY_TOO_LARGE; a
 * payload that does not decompress INVALID_RECORD. An accepted payload is kept, decompressed, as
 * the client instance's last push (ClientMetricsManager.lastPush). An unexpected failure is
 * INVALID_REQUEST, as in KafkaApis.handlePushTelemetryRequest.
 * Authorization: none beyond authentication (KafkaApis checks nothing).
 */
import { ErrorCode } from '../../protocol/errors';
import type { PushTelemetryRequest, PushTelemetryResponse } from '../../protocol/generated/push-telemetry';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { telemetryRequester } from '../telemetry/telemetry-requester';

export const pushTelemetryHandler = defineHandler<PushTelemetryRequest, PushTelemetryResponse>({
  apiKey: ApiKey.PushTelemetry,
  name: 'PushTelemetry',
  minVersion: 0,
  maxVersion: 0,
  handle(broker, ctx, req) {
    try {
      const { errorCode } = broker.clientMetrics.pushTelemetry(req, telemetryRequester(broker.clientMetrics, ctx));
      return { errorCode };
    } catch (err) {
      broker.logger.error('PushTelemetry failed', { err, conn: ctx.connection.id });
      return { errorCode: ErrorCode.INVALID_REQUEST };
    }
  },
});
