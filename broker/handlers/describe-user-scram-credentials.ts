/**
 * DescribeUserScramCredentials (50), v0 (KIP-554): which SCRAM mechanisms each user has a credential
 * for, and their iteration counts, from this broker's metadata image, as Kafka's ScramImage.describe
 * answers it. Never the salt, the stored or server key, or anything derived from the password.
 *
 * - users null or empty: every user that has a credential;
 * - a user named more than once: one result, DUPLICATE_RESOURCE "Cannot describe SCRAM credentials
 *   for the same user twice in a single request: <user>";
 * - a named user with no credential: RESOURCE_NOT_FOUND "Attempt to describe a user credential that
 *   does not exist: <user>";
 * - otherwise one CredentialInfo per mechanism (ascending mechanism type).
 * One result per distinct user, in the order the request names them (all users: the image's order);
 * Kafka's order is a HashMap's, unspecified. The top-level error is NONE.
 *
 * Authorization (KafkaApis.handleDescribeUserScramCredentialsRequest): DESCRIBE on the CLUSTER,
 * else DescribeUserScramCredentialsRequest.getErrorResponse: CLUSTER_AUTHORIZATION_FAILED at the
 * top level and in one result per named user, with no message (the exception's is the error's
 * default) and, as in Kafka, an empty user name; a describe-all request gets no results (Kafka's
 * getErrorResponse fails on its null list).
 */
import type {
  DescribeUserScramCredentialsRequest,
  DescribeUserScramCredentialsResponse,
  DescribeUserScramCredentialsResponseDescribeUserScramCredentialsResult,
} from '../../protocol/generated/describe-user-scram-credentials';
import { ApiKey } from '../../protocol/generated';
import { ErrorCode } from '../../protocol/errors';
import type { Input } from '../../protocol/primitives/input';
import { defineHandler } from './define-handler';
import { AclOperation } from '../../metadata/authorizer/authorizer';
import { authHelper } from '../security/authorize';

type Result = Input<DescribeUserScramCredentialsResponseDescribeUserScramCredentialsResult>;

/** Kafka's ScramImage.describe over `infos` (user -> mechanisms and iterations). */
export function describeUserScramCredentials(
  infos: ReadonlyMap<string, readonly { mechanism: number; iterations: number }[]>,
  users: readonly { name: string }[] | null,
): Result[] {
  // user -> named more than once
  const unique = new Map<string, boolean>();
  if (users === null || users.length === 0) for (const user of infos.keys()) unique.set(user, false);
  else for (const u of users) unique.set(u.name, unique.has(u.name));
  const out: Result[] = [];
  for (const [user, duplicate] of unique) {
    if (duplicate) {
      out.push({ user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: `Cannot describe SCRAM credentials for the same user twice in a single request: ${user}`, credentialInfos: [] });
      continue;
    }
    const found = infos.get(user);
    if (!found || found.length === 0) {
      out.push({ user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: `Attempt to describe a user credential that does not exist: ${user}`, credentialInfos: [] });
      continue;
    }
    out.push({ user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos: found.map((c) => ({ mechanism: c.mechanism, iterations: c.iterations })) });
  }
  return out;
}

export const describeUserScramCredentialsHandler = defineHandler<DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse>({
  apiKey: ApiKey.DescribeUserScramCredentials,
  name: 'DescribeUserScramCredentials',
  minVersion: 0,
  maxVersion: 0,
  handle(broker, ctx, req) {
    if (!authHelper(broker.authorizer, ctx).authorizeCluster(AclOperation.DESCRIBE)) {
      const errorCode = ErrorCode.CLUSTER_AUTHORIZATION_FAILED;
      return { errorCode, errorMessage: null, results: (req.users ?? []).map(() => ({ user: '', errorCode, errorMessage: null, credentialInfos: [] })) };
    }
    return { errorCode: ErrorCode.NONE, errorMessage: null, results: describeUserScramCredentials(broker.metadata.scramCredentialInfos(), req.users) };
  },
});
