/**
 * DescribeClientQuotas (48), v0-1 (KIP-546): the client quotas in this broker's metadata image
 * that match a filter, exactly as Kafka's ClientQuotasImage.describe answers it. Each filter
 * component names an entity type (user, client-id, ip) and a match type: 0 exact name (`match`
 * must be set), 1 the default entity (`match` null), 2 any entity that has the type (`match`
 * null). An entity matches when it has every component's type with the required name; with
 * `strict` it must also have no other types. No components: everything (or, strict, nothing).
 *
 * A bad filter fails the whole request with entries null: INVALID_REQUEST for an empty type
 * ("Invalid empty entity type."), a repeated type, a match string where none belongs or a missing
 * one, an unknown match type, or ip combined with user / client-id; UNSUPPORTED_VERSION for an
 * unknown entity type ("Unsupported entity type T"). The messages are Kafka's.
 *
 * Entries list the entity's parts as client-id, user, ip (Kafka's HashMap order for these) and
 * the entities in the order the image holds them (Kafka's is a hash order: unspecified).
 *
 * Authorization (KafkaApis.handleDescribeClientQuotasRequest): DESCRIBE_CONFIGS on the CLUSTER,
 * checked before the filter, else CLUSTER_AUTHORIZATION_FAILED with no message and entries null.
 */
import type {
  DescribeClientQuotasRequest,
  DescribeClientQuotasResponse,
  DescribeClientQuotasResponseEntryData,
} from '../../protocol/generated/describe-client-quotas';
import { ApiKey } from '../../protocol/generated';
import { ErrorCode, KafkaError } from '../../protocol/errors';
import type { Input } from '../../protocol/primitives/input';
import { ClientQuotaEntityType, clientQuotaEntityToData, type ClientQuotaEntry } from '../../metadata/metadata-cache';
import { defineHandler } from './define-handler';
import { authHelper } from '../security/authorize';
import { AclOperation } from '../../metadata/authorizer/authorizer';

/** DescribeClientQuotasRequest match_type values (Kafka's MATCH_TYPE_*). */
export const ClientQuotaMatchType = { EXACT: 0, DEFAULT: 1, SPECIFIED: 2 } as const;

const { USER, CLIENT_ID, IP } = ClientQuotaEntityType;

/** The entries of `quotas` that match the request's filter; throws KafkaError for a bad filter. */
export function describeClientQuotas(quotas: readonly ClientQuotaEntry[], req: DescribeClientQuotasRequest): Input<DescribeClientQuotasResponseEntryData>[] {
  const exactMatch = new Map<string, string | null>();
  const typeMatch = new Set<string>();
  for (const c of req.components) {
    if (c.entityType === '') throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Invalid empty entity type.');
    if (exactMatch.has(c.entityType) || typeMatch.has(c.entityType)) {
      throw new KafkaError(ErrorCode.INVALID_REQUEST, `Entity type ${c.entityType} cannot appear more than once in the filter.`);
    }
    if (c.entityType !== IP && c.entityType !== USER && c.entityType !== CLIENT_ID) {
      throw new KafkaError(ErrorCode.UNSUPPORTED_VERSION, `Unsupported entity type ${c.entityType}`);
    }
    switch (c.matchType) {
      case ClientQuotaMatchType.EXACT:
        if (c.match === null) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_EXACT, but set match string to null.');
        exactMatch.set(c.entityType, c.match);
        break;
      case ClientQuotaMatchType.DEFAULT:
        if (c.match !== null) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_DEFAULT, but also specified a match string.');
        exactMatch.set(c.entityType, null);
        break;
      case ClientQuotaMatchType.SPECIFIED:
        if (c.match !== null) throw new KafkaError(ErrorCode.INVALID_REQUEST, 'Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.');
        typeMatch.add(c.entityType);
        break;
      default:
        throw new KafkaError(ErrorCode.INVALID_REQUEST, `Unknown match type ${c.matchType}`);
    }
  }
  const named = (t: string): boolean => exactMatch.has(t) || typeMatch.has(t);
  if (named(IP) && (named(USER) || named(CLIENT_ID))) {
    throw new KafkaError(
      ErrorCode.INVALID_REQUEST,
      'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.',
    );
  }
  const out: Input<DescribeClientQuotasResponseEntryData>[] = [];
  for (const q of quotas) {
    const parts = clientQuotaEntityToData(q.entity);
    const entity = new Map(parts.map((p) => [p.entityType, p.entityName]));
    if (req.strict && entity.size !== exactMatch.size + typeMatch.size) continue;
    let matches = true;
    for (const [t, name] of exactMatch) if (!entity.has(t) || entity.get(t) !== name) matches = false;
    for (const t of typeMatch) if (!entity.has(t)) matches = false;
    if (!matches) continue;
    out.push({ entity: parts, values: [...q.quotas].map(([key, value]) => ({ key, value })) });
  }
  return out;
}

export const describeClientQuotasHandler = defineHandler<DescribeClientQuotasRequest, DescribeClientQuotasResponse>({
  apiKey: ApiKey.DescribeClientQuotas,
  name: 'DescribeClientQuotas',
  minVersion: 0,
  maxVersion: 1,
  handle(broker, ctx, req) {
    if (!authHelper(broker.authorizer, ctx).authorizeCluster(AclOperation.DESCRIBE_CONFIGS)) {
      return { errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: null, entries: null };
    }
    try {
      return { errorCode: ErrorCode.NONE, errorMessage: null, entries: describeClientQuotas(broker.metadata.clientQuotas(), req) };
    } catch (err) {
      if (!(err instanceof KafkaError)) throw err;
      return { errorCode: err.code, errorMessage: err.message, entries: null };
    }
  },
});
