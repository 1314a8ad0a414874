/**
 * AlterUserScramCredentials (51), v0, on the controller listener: brokers forward their clients'
 * AlterUserScramCredentials here (Kafka's ControllerApis.handleAlterUserScramCredentials). The
 * Controller validates the request and writes the credential records as one batch
 * (metadata/controller/scram-control-manager.ts); the answer has one result per distinct user.
 *
 * Authorization (Kafka's authorizeClusterOperation(ALTER)), against the principal of this
 * connection: without ALTER on the CLUSTER every distinct user, sorted, is answered
 * CLUSTER_AUTHORIZATION_FAILED "Request ... is not authorized." and nothing is altered.
 */
import type { AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse } from '../../../protocol/generated/alter-user-scram-credentials';
import { ApiKey } from '../../../protocol/generated';
import { defineControllerHandler } from './define';
import { alterUserScramCredentialsDenied, alterUserScramCredentialsResponse, scramAlterations } from '../../handlers/alter-user-scram-credentials';

export const controllerAlterUserScramCredentialsHandler = defineControllerHandler<AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse>({
  apiKey: ApiKey.AlterUserScramCredentials,
  name: 'AlterUserScramCredentials',
  minVersion: 0,
  maxVersion: 0,
  async handle(node, ctx, req) {
    const denied = alterUserScramCredentialsDenied(node.authorizer, ctx, req);
    if (denied) return denied;
    const { deletions, upsertions } = scramAlterations(req);
    return alterUserScramCredentialsResponse(await node.controller.alterUserScramCredentials(deletions, upsertions));
  },
});
