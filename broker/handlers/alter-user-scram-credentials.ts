/**
 * AlterUserScramCredentials (51), v0 (KIP-554): creates, replaces and deletes users' SCRAM
 * credentials. The client salts the password itself (PBKDF2, as Kafka's admin client does) and
 * sends salt, iterations and salted_password; the controller validates the request
 * (metadata/controller/scram-control-manager.ts: Kafka's rules, codes and messages), derives
 * StoredKey / ServerKey and writes UserScramCredentialRecord / RemoveUserScramCredentialRecord to
 * the metadata log, which every broker applies (the SCRAM mechanisms read it from the image). A
 * combined node calls its in-process controller; a cluster broker forwards the request to the
 * controller listener (RemoteController) and relays its answer, as a KRaft broker forwards it
 * (KafkaApis.maybeForwardToController). One result per distinct user; nothing secret is answered.
 *
 * Authorization (ControllerApis.handleAlterUserScramCredentials, which KRaft brokers forward to,
 * with the client's principal): ALTER on the CLUSTER, checked here before anything is forwarded
 * (krill forwards on the broker's own connection, not in an envelope), else every distinct user,
 * sorted, is answered CLUSTER_AUTHORIZATION_FAILED with the message of the exception Kafka's
 * authorizeClusterOperation throws ("Request ... is not authorized.", AlterUserScramCredentialsRequest
 * .getErrorResponse) and nothing is altered.
 */
import type { AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse } from '../../protocol/generated/alter-user-scram-credentials';
import { ApiKey } from '../../protocol/generated';
import type { ScramAlterationResult, ScramCredentialDeletion, ScramCredentialUpsertion } from '../../metadata/controller/scram-control-manager';
import { defineHandler } from './define-handler';
import { ErrorCode } from '../../protocol/errors';
import { AclOperation, type Authorizer } from '../../metadata/authorizer/authorizer';
import { authHelper, requestNotAuthorizedMessage } from '../security/authorize';
import type { RequestContext } from '../network/request-context';

/** The answer to a requester without ALTER on the cluster (shared with the controller listener); null if it has it. */
export function alterUserScramCredentialsDenied(authorizer: Authorizer, ctx: RequestContext, req: AlterUserScramCredentialsRequest): { results: AlterUserScramCredentialsResponse['results'] } | null {
  if (authHelper(authorizer, ctx).authorizeCluster(AclOperation.ALTER)) return null;
  const users = [...new Set([...req.deletions.map((d) => d.name), ...req.upsertions.map((u) => u.name)])].sort();
  const errorMessage = requestNotAuthorizedMessage(ctx);
  return { results: users.map((user) => ({ user, errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage })) };
}

/** The controller's view of the request (shared with the controller listener's handler). */
export function scramAlterations(req: AlterUserScramCredentialsRequest): { deletions: ScramCredentialDeletion[]; upsertions: ScramCredentialUpsertion[] } {
  return {
    deletions: req.deletions.map((d) => ({ name: d.name, mechanism: d.mechanism })),
    upsertions: req.upsertions.map((u) => ({ name: u.name, mechanism: u.mechanism, iterations: u.iterations, salt: u.salt, saltedPassword: u.saltedPassword })),
  };
}

/** The response body for the controller's results. */
export function alterUserScramCredentialsResponse(results: readonly ScramAlterationResult[]): { results: AlterUserScramCredentialsResponse['results'] } {
  return { results: results.map((r) => ({ user: r.user, errorCode: r.errorCode, errorMessage: r.errorMessage })) };
}

export const alterUserScramCredentialsHandler = defineHandler<AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse>({
  apiKey: ApiKey.AlterUserScramCredentials,
  name: 'AlterUserScramCredentials',
  minVersion: 0,
  maxVersion: 0,
  async handle(broker, ctx, req) {
    const denied = alterUserScramCredentialsDenied(broker.authorizer, ctx, req);
    if (denied) return denied;
    const { deletions, upsertions } = scramAlterations(req);
    return alterUserScramCredentialsResponse(await broker.controller.alterUserScramCredentials(deletions, upsertions));
  },
});
