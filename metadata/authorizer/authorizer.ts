/**
 * The authorizer contract every request handler uses (Kafka's org.apache.kafka.server.authorizer):
 * a principal connected from a host asks to perform operations on resources; the authorizer answers
 * ALLOWED or DENIED per action, in order.
 *
 * Ids are Kafka's wire values (AclOperation, ResourceType, PatternType), as CreateAcls /
 * DescribeAcls / DeleteAcls carry them. With `authorizer.class.name` empty there is no authorizer
 * and every action is allowed (`ALLOW_ALL`), as in Kafka. With
 * `org.apache.kafka.metadata.authorizer.StandardAuthorizer` the ACLs of the metadata image decide
 * (standard-authorizer.ts).
 */
import type { KafkaPrincipal } from '../../common/kafka-principal';

/** Kafka's AclOperation codes. */
export const AclOperation = {
  UNKNOWN: 0,
  ANY: 1,
  ALL: 2,
  READ: 3,
  WRITE: 4,
  CREATE: 5,
  DELETE: 6,
  ALTER: 7,
  DESCRIBE: 8,
  CLUSTER_ACTION: 9,
  DESCRIBE_CONFIGS: 10,
  ALTER_CONFIGS: 11,
  IDEMPOTENT_WRITE: 12,
  CREATE_TOKENS: 13,
  DESCRIBE_TOKENS: 14,
  TWO_PHASE_COMMIT: 15,
} as const;
export type AclOperationCode = (typeof AclOperation)[keyof typeof AclOperation];

/** Kafka's ResourceType codes. */
export const ResourceType = {
  UNKNOWN: 0,
  ANY: 1,
  TOPIC: 2,
  GROUP: 3,
  CLUSTER: 4,
  TRANSACTIONAL_ID: 5,
  DELEGATION_TOKEN: 6,
  USER: 7,
} as const;
export type ResourceTypeCode = (typeof ResourceType)[keyof typeof ResourceType];

/** Kafka's PatternType codes. */
export const PatternType = {
  UNKNOWN: 0,
  ANY: 1,
  MATCH: 2,
  LITERAL: 3,
  PREFIXED: 4,
} as const;
export type PatternTypeCode = (typeof PatternType)[keyof typeof PatternType];

/** Kafka's AclPermissionType codes. */
export const AclPermissionType = {
  UNKNOWN: 0,
  ANY: 1,
  DENY: 2,
  ALLOW: 3,
} as const;
export type AclPermissionTypeCode = (typeof AclPermissionType)[keyof typeof AclPermissionType];

/** The name of the one CLUSTER resource (Kafka's Resource.CLUSTER_NAME). */
export const CLUSTER_RESOURCE_NAME = 'kafka-cluster';

/** What a request wants to do (Kafka's Action): always a LITERAL resource name. */
export interface Action {
  operation: AclOperationCode;
  resourceType: ResourceTypeCode;
  resourceName: string;
  /** Kafka's logIfAllowed / logIfDenied: whether the decision goes to the authorizer log. */
  logIfAllowed?: boolean;
  logIfDenied?: boolean;
  /**
   * Kafka's Action.resourceReferenceCount: how many times the request names the resource (shown in
   * the authorizer log as `resourceRefCount`; default 1).
   */
  resourceReferenceCount?: number;
}

/**
 * One ACL (Kafka's AclBinding; StandardAcl in the metadata log): a resource pattern (type, name,
 * LITERAL or PREFIXED; the LITERAL name `*` matches every resource of the type) and an entry
 * (principal "Type:name", `User:*` for everyone; host, `*` for any; operation; ALLOW or DENY).
 * Codes are the wire codes above.
 */
export interface AclBinding {
  resourceType: number;
  resourceName: string;
  patternType: number;
  principal: string;
  host: string;
  operation: number;
  permissionType: number;
}

/**
 * Which ACLs DescribeAcls / DeleteAcls mean (Kafka's AclBindingFilter): ANY codes and null strings
 * match everything; pattern type MATCH matches the ACLs that would apply to the named resource
 * (its LITERAL name, the `*` wildcard, PREFIXED prefixes of it).
 */
export interface AclBindingFilter {
  resourceType: number;
  resourceName: string | null;
  patternType: number;
  principal: string | null;
  host: string | null;
  operation: number;
  permissionType: number;
}

/** Who asks (Kafka's AuthorizableRequestContext, the parts the authorizer reads). */
export interface AuthorizableRequestContext {
  principal: KafkaPrincipal;
  /** The client's address, as ACL hosts name it ("127.0.0.1", "*" matches any). */
  clientAddress: string;
  listenerName: string;
  securityProtocol: string;
  clientId: string | null;
  requestType: number;
  requestVersion: number;
  correlationId: number;
}

export type AuthorizationResult = 'ALLOWED' | 'DENIED';

export interface Authorizer {
  /** One result per action, in order. */
  authorize(ctx: AuthorizableRequestContext, actions: readonly Action[]): AuthorizationResult[];
  /**
   * Kafka's authorizeByResourceType: whether the principal may perform `operation` on at least
   * one resource of the type (used for IDEMPOTENT_WRITE via WRITE on any topic, and
   * CREATE on any topic for auto creation decisions).
   */
  authorizeByResourceType(ctx: AuthorizableRequestContext, operation: AclOperationCode, resourceType: ResourceTypeCode): AuthorizationResult;
  /**
   * Kafka's Authorizer.acls(filter): the ACLs matching the filter (DescribeAcls). Absent when no
   * authorizer is configured (ALLOW_ALL), where DescribeAcls answers SECURITY_DISABLED.
   */
  acls?(filter: AclBindingFilter): AclBinding[];
}

/** No authorizer configured: everything is allowed (Kafka without authorizer.class.name). */
export const ALLOW_ALL: Authorizer = {
  authorize: (_ctx, actions) => actions.map(() => 'ALLOWED'),
  authorizeByResourceType: () => 'ALLOWED',
};
