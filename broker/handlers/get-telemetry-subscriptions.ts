/**
 * GetTelemetrySubscriptions (71), v0 (KIP-714).
 * The client's telemetry subscription, from the broker's ClientMetricsManager
 * (broker/telemetry/client-metrics-manager.ts): a zero client_instance_id gets a new one; the
 * subscription id, accepted compression types (zstd, lz4, gzip, snappy), push interval,
 * telemetry.max.bytes, delta temporality and the requested metric prefixes (the union of the
 * matching client-metrics subscriptions; empty = push nothing). A request before the push
 * interval elapsed gets THROTTLING_QUOTA_EXCEEDED. An unexpected failure is INVALID_REQUEST, as in
 * KafkaApis.handleGetTelemetrySubscriptionsRequest.
 * Authorization: none beyond authentication (KafkaApis checks nothing).
 */
import { ErrorCode } from '../../protocol/errors';
import type { GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse } from '../../protocol/generated/get-telemetry-subscriptions';
import { ApiKey } from '../../protocol/generated';
import { defineHandler } from './define-handler';
import { telemetryRequester } from '../telemetry/telemetry-requester';

export const getTelemetrySubscriptionsHandler = defineHandler<GetTelemetrySubscriptionsRequest, GetTelemetrySubscriptionsResponse>({
  apiKey: ApiKey.GetTelemetrySubscriptions,
  name: 'GetTelemetrySubscriptions',
  minVersion: 0,
  maxVersion: 0,
  handle(broker, ctx, req) {
    try {
      const { errorMessage, ...result } = broker.clientMetrics.getTelemetrySubscriptions(req.clientInstanceId, telemetryRequester(broker.clientMetrics, ctx));
      if (errorMessage) broker.logger.debug(`GetTelemetrySubscriptions from ${ctx.clientId ?? ''}: ${errorMessage}`, { conn: ctx.connection.id });
      return result;
    } catch (err) {
      broker.logger.error('GetTelemetrySubscriptions failed', { err, conn: ctx.connection.id });
      return { errorCode: ErrorCode.INVALID_REQUEST };
    }
  },
});
