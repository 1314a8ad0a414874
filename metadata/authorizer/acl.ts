/**
 * ACL values as Kafka's clients and metadata module define them: enum names and codes
 * (`fromCode` maps a code Kafka does not know to UNKNOWN, as ResourceType.fromCode and the others
 * do), the order StandardAcl sorts in, its toString (the authorizer log quotes it), how a filter
 * matches a binding (ResourcePatternFilter.matches, AccessControlEntryFilter.matches) and when a
 * filter is "unknown" (the controller refuses to delete with one).
 *
 * Invariants: pure functions of their arguments; names and messages are Kafka's, word for word;
 * an ACL's principal is read as Kafka's StandardAcl.kafkaPrincipal reads it (split at the first
 * ':'; no ':' means no principal, which matches nobody).
 */
import {
  AclOperation,
  AclPermissionType,
  PatternType,
  ResourceType,
  type AclBinding,
  type AclBindingFilter,
  type AclOperationCode,
  type AclPermissionTypeCode,
  type PatternTypeCode,
  type ResourceTypeCode,
} from './authorizer';

/** StandardAuthorizerData.WILDCARD: the host, or LITERAL resource name, that matches any. */
export const WILDCARD = '*';
/** StandardAuthorizerData.WILDCARD_PRINCIPAL: the principal that matches every principal. */
export const WILDCARD_PRINCIPAL = 'User:*';

const RESOURCE_TYPE_NAMES = ['UNKNOWN', 'ANY', 'TOPIC', 'GROUP', 'CLUSTER', 'TRANSACTIONAL_ID', 'DELEGATION_TOKEN', 'USER'] as const;
const OPERATION_NAMES = [
  'UNKNOWN',
  'ANY',
  'ALL',
  'READ',
  'WRITE',
  'CREATE',
  'DELETE',
  'ALTER',
  'DESCRIBE',
  'CLUSTER_ACTION',
  'DESCRIBE_CONFIGS',
  'ALTER_CONFIGS',
  'IDEMPOTENT_WRITE',
  'CREATE_TOKENS',
  'DESCRIBE_TOKENS',
  'TWO_PHASE_COMMIT',
] as const;
const PATTERN_TYPE_NAMES = ['UNKNOWN', 'ANY', 'MATCH', 'LITERAL', 'PREFIXED'] as const;
const PERMISSION_TYPE_NAMES = ['UNKNOWN', 'ANY', 'DENY', 'ALLOW'] as const;

const known = (names: readonly string[], code: number): boolean => Number.isInteger(code) && code >= 0 && code < names.length;

/** ResourceType.fromCode: a code Kafka does not define is UNKNOWN. */
export const resourceTypeFromCode = (code: number): ResourceTypeCode => (known(RESOURCE_TYPE_NAMES, code) ? (code as ResourceTypeCode) : ResourceType.UNKNOWN);
/** AclOperation.fromCode. */
export const operationFromCode = (code: number): AclOperationCode => (known(OPERATION_NAMES, code) ? (code as AclOperationCode) : AclOperation.UNKNOWN);
/** PatternType.fromCode. */
export const patternTypeFromCode = (code: number): PatternTypeCode => (known(PATTERN_TYPE_NAMES, code) ? (code as PatternTypeCode) : PatternType.UNKNOWN);
/** AclPermissionType.fromCode. */
export const permissionTypeFromCode = (code: number): AclPermissionTypeCode =>
  known(PERMISSION_TYPE_NAMES, code) ? (code as AclPermissionTypeCode) : AclPermissionType.UNKNOWN;

/** The enum constant's name (ResourceType.TOPIC.toString() is "TOPIC"). */
export const resourceTypeName = (code: number): string => RESOURCE_TYPE_NAMES[resourceTypeFromCode(code)];
export const operationName = (code: number): string => OPERATION_NAMES[operationFromCode(code)];
export const patternTypeName = (code: number): string => PATTERN_TYPE_NAMES[patternTypeFromCode(code)];
export const permissionTypeName = (code: number): string => PERMISSION_TYPE_NAMES[permissionTypeFromCode(code)];

/** SecurityUtils.resourceTypeName: Pascal case, as the authorizer log writes it ("TransactionalId"). */
export function resourceTypePascalName(code: number): string {
  return resourceTypeName(code)
    .split('_')
    .map((w) => w.charAt(0) + w.slice(1).toLowerCase())
    .join('');
}

/** A binding with every code passed through fromCode (StandardAcl.fromRecord / fromAclBinding). */
export function normalizeBinding(b: AclBinding): AclBinding {
  return {
    resourceType: resourceTypeFromCode(b.resourceType),
    resourceName: b.resourceName,
    patternType: patternTypeFromCode(b.patternType),
    principal: b.principal,
    host: b.host,
    operation: operationFromCode(b.operation),
    permissionType: permissionTypeFromCode(b.permissionType),
  };
}

/** A filter with every code passed through fromCode (DescribeAclsRequest.filter(), DeleteAclsRequest.filters()). */
export function normalizeFilter(f: AclBindingFilter): AclBindingFilter {
  return {
    resourceType: resourceTypeFromCode(f.resourceType),
    resourceName: f.resourceName,
    patternType: patternTypeFromCode(f.patternType),
    principal: f.principal,
    host: f.host,
    operation: operationFromCode(f.operation),
    permissionType: permissionTypeFromCode(f.permissionType),
  };
}

/** The filter that matches exactly this binding (AclBinding.toFilter). */
export function bindingToFilter(b: AclBinding): AclBindingFilter {
  return { ...b };
}

/** Java's String.compareTo (UTF-16 code units, as JS compares strings). */
const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/**
 * StandardAcl.compareTo: resource type, then resource name REVERSED, then pattern type, operation,
 * principal, host, permission type. Reversing the name puts a resource's ACLs first and its prefixes
 * after, longest first, which is what the authorizer's scan relies on.
 */
export function compareAcls(a: AclBinding, b: AclBinding): number {
  return (
    a.resourceType - b.resourceType ||
    compareStrings(b.resourceName, a.resourceName) ||
    a.patternType - b.patternType ||
    a.operation - b.operation ||
    compareStrings(a.principal, b.principal) ||
    compareStrings(a.host, b.host) ||
    a.permissionType - b.permissionType
  );
}

/** One string per distinct ACL (StandardAcl.equals / hashCode), for sets of ACLs. */
export function aclKey(a: AclBinding): string {
  return JSON.stringify([a.resourceType, a.resourceName, a.patternType, a.principal, a.host, a.operation, a.permissionType]);
}

/** StandardAcl.toString. */
export function aclToString(a: AclBinding): string {
  return (
    `StandardAcl(resourceType=${resourceTypeName(a.resourceType)}, resourceName=${a.resourceName}, ` +
    `patternType=${patternTypeName(a.patternType)}, principal=${a.principal}, host=${a.host}, ` +
    `operation=${operationName(a.operation)}, permissionType=${permissionTypeName(a.permissionType)})`
  );
}

/** StandardAcl.kafkaPrincipal: "Type:name" split at the first ':'; null when there is no ':'. */
export function aclPrincipal(principal: string): { principalType: string; name: string } | null {
  const i = principal.indexOf(':');
  if (i === -1) return null;
  return { principalType: principal.slice(0, i), name: principal.slice(i + 1) };
}

/** ResourcePatternFilter.isUnknown: its resource type or pattern type is UNKNOWN. */
export function patternFilterIsUnknown(f: AclBindingFilter): boolean {
  return resourceTypeFromCode(f.resourceType) === ResourceType.UNKNOWN || patternTypeFromCode(f.patternType) === PatternType.UNKNOWN;
}

/** AccessControlEntryFilter.isUnknown: its operation or permission type is UNKNOWN. */
export function entryFilterIsUnknown(f: AclBindingFilter): boolean {
  return operationFromCode(f.operation) === AclOperation.UNKNOWN || permissionTypeFromCode(f.permissionType) === AclPermissionType.UNKNOWN;
}

/** ResourcePatternFilter.matches. */
export function patternFilterMatches(f: AclBindingFilter, acl: AclBinding): boolean {
  if (f.resourceType !== ResourceType.ANY && f.resourceType !== acl.resourceType) return false;
  if (f.patternType !== PatternType.ANY && f.patternType !== PatternType.MATCH && f.patternType !== acl.patternType) return false;
  if (f.resourceName === null) return true;
  if (f.patternType === PatternType.ANY || f.patternType === acl.patternType) return f.resourceName === acl.resourceName;
  // MATCH: the ACLs that apply to the named resource.
  switch (acl.patternType) {
    case PatternType.LITERAL:
      return f.resourceName === acl.resourceName || acl.resourceName === WILDCARD;
    case PatternType.PREFIXED:
      return f.resourceName.startsWith(acl.resourceName);
    default:
      throw new Error(`Unsupported PatternType: ${patternTypeName(acl.patternType)}`);
  }
}

/** AccessControlEntryFilter.matches. */
export function entryFilterMatches(f: AclBindingFilter, acl: AclBinding): boolean {
  if (f.principal !== null && f.principal !== acl.principal) return false;
  if (f.host !== null && f.host !== acl.host) return false;
  if (f.operation !== AclOperation.ANY && f.operation !== acl.operation) return false;
  return f.permissionType === AclPermissionType.ANY || f.permissionType === acl.permissionType;
}

/** AclBindingFilter.matches. */
export function filterMatches(f: AclBindingFilter, acl: AclBinding): boolean {
  return patternFilterMatches(f, acl) && entryFilterMatches(f, acl);
}

/** AclBindingFilter.ANY. */
export const ANY_FILTER: AclBindingFilter = {
  resourceType: ResourceType.ANY,
  resourceName: null,
  patternType: PatternType.ANY,
  principal: null,
  host: null,
  operation: AclOperation.ANY,
  permissionType: AclPermissionType.ANY,
};
