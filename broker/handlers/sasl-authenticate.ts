/**
 * SaslAuthenticate (36), v0-2: one SASL token of the exchange, wrapped in a Kafka request
 * (KIP-152), after a SaslHandshake v1. v1+ responses carry session_lifetime_ms (KIP-368): 0, or how
 * long the session lasts before the client must re-authenticate.
 *
 * On a SASL listener the connection's authenticator (broker/security/sasl/authenticator.ts) runs
 * the mechanism: NONE with the server's token (and, once complete, the session lifetime), or
 * SASL_AUTHENTICATION_FAILED with the mechanism's message (Kafka's fixed text for a SaslException),
 * after which the connection closes when connection.failed.authentication.delay.ms has passed. A
 * mechanism's internal error closes the connection at once. Anywhere else (a PLAINTEXT or SSL
 * listener, an authenticated connection) the answer is ILLEGAL_SASL_STATE with KafkaApis' message.
 *
 * The same handler serves the controller listener (broker/controller/handlers/).
 */
import { ErrorCode } from '../../protocol/errors';
import { ApiKey } from '../../protocol/generated';
import type { SaslAuthenticateRequest, SaslAuthenticateResponse } from '../../protocol/generated/sasl-authenticate';
import { saslAuthenticatorOf } from '../security/sasl/authenticator';
import { CloseConnection, defineHandler, type HandlerSpec } from './define-handler';
import type { Broker } from '../broker';

export function saslAuthenticateHandlerFor<Ctx>(): HandlerSpec<SaslAuthenticateRequest, SaslAuthenticateResponse, Ctx> {
  return defineHandler<SaslAuthenticateRequest, SaslAuthenticateResponse, Ctx>({
    apiKey: ApiKey.SaslAuthenticate,
    name: 'SaslAuthenticate',
    minVersion: 0,
    maxVersion: 2,
    async handle(_server, ctx, req) {
      const sasl = saslAuthenticatorOf(ctx.connection);
      if (!sasl) {
        return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: 'SaslAuthenticate request received after successful authentication' };
      }
      try {
        return await sasl.authenticate(req.authBytes, ctx.apiVersion);
      } catch (err) {
        // Not an authentication failure but the mechanism failing: Kafka closes at once.
        throw new CloseConnection(`SASL mechanism failed during authentication: ${(err as Error).message}`);
      }
    },
  });
}

export const saslAuthenticateHandler = saslAuthenticateHandlerFor<Broker>();
