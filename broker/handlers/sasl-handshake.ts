/**
 * SaslHandshake (17), v0-1: the client names the SASL mechanism it will use (KIP-43).
 *
 * On a SASL_PLAINTEXT / SASL_SSL listener the connection's authenticator
 * (broker/security/sasl/authenticator.ts) owns the exchange: an enabled mechanism is answered NONE
 * with the listener's enabled mechanisms and the exchange starts (v0: raw SASL tokens follow; v1:
 * SaslAuthenticate requests); an unknown one gets UNSUPPORTED_SASL_MECHANISM with the enabled
 * mechanisms, and the connection closes after connection.failed.authentication.delay.ms. After
 * authentication, a SaslHandshake starts re-authentication (KIP-368) when the session has a
 * lifetime. Everywhere else (a PLAINTEXT or SSL listener, an authenticated connection that cannot
 * re-authenticate) the answer is ILLEGAL_SASL_STATE with no mechanisms, as KafkaApis answers.
 *
 * The same handler serves the controller listener (broker/controller/handlers/).
 */
import { ErrorCode } from '../../protocol/errors';
import { ApiKey } from '../../protocol/generated';
import type { SaslHandshakeRequest, SaslHandshakeResponse } from '../../protocol/generated/sasl-handshake';
import { saslAuthenticatorOf } from '../security/sasl/authenticator';
import { defineHandler, type HandlerSpec } from './define-handler';
import type { Broker } from '../broker';

/** The handler for any server (broker or controller node): it only uses the connection. */
export function saslHandshakeHandlerFor<Ctx>(): HandlerSpec<SaslHandshakeRequest, SaslHandshakeResponse, Ctx> {
  return defineHandler<SaslHandshakeRequest, SaslHandshakeResponse, Ctx>({
    apiKey: ApiKey.SaslHandshake,
    name: 'SaslHandshake',
    minVersion: 0,
    maxVersion: 1,
    handle(_server, ctx, req) {
      const sasl = saslAuthenticatorOf(ctx.connection);
      if (!sasl) return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
      return sasl.handshake(req.mechanism, ctx.apiVersion);
    },
  });
}

export const saslHandshakeHandler = saslHandshakeHandlerFor<Broker>();
