/**
 * Kafka's AuthHelper for krill's request handlers: turns a RequestContext into the
 * AuthorizableRequestContext the Authorizer reads, and offers the checks KafkaApis and
 * ControllerApis make: one action (`authorize`, `authorizeCluster`), a batch of resources of one
 * type (`filterByAuthorized`, `partitionByAuthorized`: one action per distinct name with the
 * number of times the request names it, Kafka's logIfAllowed / logIfDenied passed through), "any resource of a type" (`authorizeByResourceType`),
 * and the KIP-430 bit fields (`authorizedOperations`: Utils.to32BitField of the allowed operations
 * among the resource type's supported ones, AclEntry.supportedOperations).
 *
 * Invariants: with no authorizer configured (ALLOW_ALL) every check passes without building a
 * context or any action, as Kafka's AuthHelper does with `authorizer = None` (the hot paths, Produce
 * and Fetch, pay nothing); a batch asks the authorizer once, with each name once, and answers by
 * name, so a resource listed twice gets one decision. Actions always name a LITERAL resource.
 */
import type { RequestContext } from '../network/request-context';
import { ErrorCode } from '../../protocol/errors';
import {
  ALLOW_ALL,
  AclOperation,
  CLUSTER_RESOURCE_NAME,
  ResourceType,
  type AclOperationCode,
  type Action,
  type AuthorizableRequestContext,
  type Authorizer,
  type ResourceTypeCode,
} from '../../metadata/authorizer/authorizer';

/** The `*_authorized_operations` value when the client did not ask for them (Integer.MIN_VALUE). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;

const { READ, WRITE, CREATE, DELETE, ALTER, DESCRIBE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, CREATE_TOKENS, DESCRIBE_TOKENS } =
  AclOperation;

/** Kafka's AclEntry.supportedOperations: what an ACL on a resource of each concrete type can grant. */
export const SUPPORTED_OPERATIONS: ReadonlyMap<ResourceTypeCode, readonly AclOperationCode[]> = new Map<ResourceTypeCode, readonly AclOperationCode[]>([
  [ResourceType.TOPIC, [READ, WRITE, CREATE, DESCRIBE, DELETE, ALTER, DESCRIBE_CONFIGS, ALTER_CONFIGS]],
  [ResourceType.GROUP, [READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS, ALTER_CONFIGS]],
  [ResourceType.CLUSTER, [CREATE, CLUSTER_ACTION, DESCRIBE_CONFIGS, ALTER_CONFIGS, IDEMPOTENT_WRITE, ALTER, DESCRIBE]],
  [ResourceType.TRANSACTIONAL_ID, [DESCRIBE, WRITE]],
  [ResourceType.DELEGATION_TOKEN, [DESCRIBE]],
  [ResourceType.USER, [CREATE_TOKENS, DESCRIBE_TOKENS]],
]);

/** Kafka's Utils.to32BitField: bit `op` set for every operation code (0..31) given. */
export function to32BitField(ops: Iterable<number>): number {
  let value = 0;
  for (const op of ops) {
    if (!Number.isInteger(op) || op < 0 || op > 31) throw new RangeError(`out of range: ${op}`);
    value |= 1 << op;
  }
  return value;
}

/** The default messages of Kafka's authorization errors (Errors.X.message()). */
export const AUTHORIZATION_ERROR_MESSAGE: Readonly<Record<number, string>> = {
  [ErrorCode.TOPIC_AUTHORIZATION_FAILED]: 'Topic authorization failed.',
  [ErrorCode.GROUP_AUTHORIZATION_FAILED]: 'Group authorization failed.',
  [ErrorCode.CLUSTER_AUTHORIZATION_FAILED]: 'Cluster authorization failed.',
  [ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED]: 'Transactional Id authorization failed.',
  [ErrorCode.DELEGATION_TOKEN_AUTHORIZATION_FAILED]: 'Delegation Token authorization failed.',
};

/**
 * The client's address as ACL hosts name it, which is Java's InetAddress.getHostAddress: an
 * IPv4-mapped IPv6 address is its IPv4 address, and an IPv6 address is written out in full, eight
 * groups of lower-case hex without leading zeros ("0:0:0:0:0:0:0:1", not "::1"), its zone kept.
 */
export function clientAddress(remoteAddress: string): string {
  if (remoteAddress.startsWith('::ffff:') && remoteAddress.includes('.')) return remoteAddress.slice(7);
  if (!remoteAddress.includes(':')) return remoteAddress;
  const [addr, zone] = remoteAddress.split('%');
  const halves = addr.split('::');
  const parse = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const head = parse(halves[0]);
  const tail = halves.length > 1 ? parse(halves[1]) : [];
  // A trailing dotted quad is two groups.
  const last = tail.length > 0 ? tail : head;
  if (last.length > 0 && last[last.length - 1].includes('.')) {
    const q = last.pop()!.split('.').map(Number);
    last.push(((q[0] << 8) | q[1]).toString(16), ((q[2] << 8) | q[3]).toString(16));
  }
  const missing = halves.length > 1 ? 8 - head.length - tail.length : 0;
  const groups = [...head, ...Array<string>(Math.max(0, missing)).fill('0'), ...tail].map((g) => parseInt(g, 16).toString(16));
  if (groups.length !== 8 || groups.some((g) => g === 'NaN')) return remoteAddress;
  return groups.join(':') + (zone !== undefined ? `%${zone}` : '');
}

/** What the authorizer reads of a request (Kafka builds it from the RequestContext likewise). */
export function authorizableContext(ctx: RequestContext): AuthorizableRequestContext {
  return {
    principal: ctx.principal,
    clientAddress: clientAddress(ctx.connection.remoteAddress),
    listenerName: ctx.connection.listenerName,
    securityProtocol: ctx.connection.securityProtocol,
    clientId: ctx.clientId,
    requestType: ctx.apiKey,
    requestVersion: ctx.apiVersion,
    correlationId: ctx.correlationId,
  };
}

/** Kafka's logIfAllowed / logIfDenied (both true unless a check says otherwise). */
export interface AuthorizationLogging {
  logIfAllowed?: boolean;
  logIfDenied?: boolean;
}

/**
 * The message of the ClusterAuthorizationException Kafka's authorizeClusterOperation throws
 * ("Request <request> is not authorized."), with krill's description of the request.
 */
export function requestNotAuthorizedMessage(ctx: RequestContext): string {
  const c = ctx.connection;
  return (
    `Request(apiKey=${ctx.apiKey}, apiVersion=${ctx.apiVersion}, correlationId=${ctx.correlationId}, clientId=${ctx.clientId}, ` +
    `principal=${ctx.principal.principalType}:${ctx.principal.name}, clientAddress=${clientAddress(c.remoteAddress)}, ` +
    `listenerName=${c.listenerName}, securityProtocol=${c.securityProtocol}) is not authorized.`
  );
}

export class AuthHelper {
  private context: AuthorizableRequestContext | null = null;

  constructor(
    readonly authorizer: Authorizer,
    private readonly ctx: RequestContext,
  ) {}

  /** False when no authorizer is configured: then every check passes without asking. */
  get enabled(): boolean {
    return this.authorizer !== ALLOW_ALL;
  }

  private requestContext(): AuthorizableRequestContext {
    return (this.context ??= authorizableContext(this.ctx));
  }

  /** One action on one resource (Kafka's AuthHelper.authorize). */
  authorize(operation: AclOperationCode, resourceType: ResourceTypeCode, resourceName: string, log: AuthorizationLogging = {}): boolean {
    if (!this.enabled) return true;
    const action: Action = {
      operation,
      resourceType,
      resourceName,
      logIfAllowed: log.logIfAllowed ?? true,
      logIfDenied: log.logIfDenied ?? true,
    };
    return this.authorizer.authorize(this.requestContext(), [action])[0] === 'ALLOWED';
  }

  /** `operation` on the CLUSTER resource (Kafka's authorizeClusterOperation, without the throw). */
  authorizeCluster(operation: AclOperationCode, log: AuthorizationLogging = {}): boolean {
    return this.authorize(operation, ResourceType.CLUSTER, CLUSTER_RESOURCE_NAME, log);
  }

  /** Whether `operation` is allowed on at least one resource of the type (Kafka's authorizeByResourceType). */
  authorizeByResourceType(operation: AclOperationCode, resourceType: ResourceTypeCode): boolean {
    if (!this.enabled) return true;
    return this.authorizer.authorizeByResourceType(this.requestContext(), operation, resourceType) === 'ALLOWED';
  }

  /**
   * The names among `resources` on which `operation` is allowed (Kafka's filterByAuthorized): one
   * action per distinct name, asked in one call.
   */
  filterByAuthorized<T>(
    operation: AclOperationCode,
    resourceType: ResourceTypeCode,
    resources: Iterable<T>,
    nameOf: (resource: T) => string,
    log: AuthorizationLogging = {},
  ): Set<string> {
    if (!this.enabled) {
      const names = new Set<string>();
      for (const r of resources) names.add(nameOf(r));
      return names;
    }
    // Each name once, with how often the request names it (Kafka's resourceReferenceCount).
    const counts = new Map<string, number>();
    for (const r of resources) {
      const name = nameOf(r);
      counts.set(name, (counts.get(name) ?? 0) + 1);
    }
    if (counts.size === 0) return new Set();
    const ordered = [...counts.keys()];
    const actions: Action[] = ordered.map((resourceName) => ({
      operation,
      resourceType,
      resourceName,
      logIfAllowed: log.logIfAllowed ?? true,
      logIfDenied: log.logIfDenied ?? true,
      resourceReferenceCount: counts.get(resourceName)!,
    }));
    const results = this.authorizer.authorize(this.requestContext(), actions);
    const allowed = new Set<string>();
    ordered.forEach((name, i) => {
      if (results[i] === 'ALLOWED') allowed.add(name);
    });
    return allowed;
  }

  /** `resources` split into [authorized, unauthorized], each in request order (Kafka's partitionSeqByAuthorized). */
  partitionByAuthorized<T>(
    operation: AclOperationCode,
    resourceType: ResourceTypeCode,
    resources: readonly T[],
    nameOf: (resource: T) => string,
    log: AuthorizationLogging = {},
  ): [T[], T[]] {
    if (!this.enabled) return [[...resources], []];
    const allowed = this.filterByAuthorized(operation, resourceType, resources, nameOf, log);
    const yes: T[] = [];
    const no: T[] = [];
    for (const r of resources) (allowed.has(nameOf(r)) ? yes : no).push(r);
    return [yes, no];
  }

  /**
   * Kafka's AuthHelper.authorizedOperations: the bit field of the operations the resource type
   * supports that the principal may perform on this resource (asked without logging).
   */
  authorizedOperations(resourceType: ResourceTypeCode, resourceName: string): number {
    const supported = SUPPORTED_OPERATIONS.get(resourceType);
    if (!supported) throw new Error(`resource type ${resourceType} is not a concrete resource type`);
    if (!this.enabled) return to32BitField(supported);
    const actions: Action[] = supported.map((operation) => ({ operation, resourceType, resourceName, logIfAllowed: false, logIfDenied: false }));
    const results = this.authorizer.authorize(this.requestContext(), actions);
    return to32BitField(supported.filter((_, i) => results[i] === 'ALLOWED'));
  }
}

/** The checks of one request, against the broker's (or controller node's) authorizer. */
export function authHelper(authorizer: Authorizer, ctx: RequestContext): AuthHelper {
  return new AuthHelper(authorizer, ctx);
}
