/**
 * StandardAuthorizer: Kafka's authorizer for KRaft clusters
 * (`authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer`), deciding from
 * the ACLs of the metadata image (AccessControlEntryRecord / RemoveAccessControlEntryRecord, which
 * the controller writes and every node applies to its MetadataCache; `follow` keeps this
 * authorizer in step with one). It owns the ACL set it decides with, `super.users` and
 * `allow.everyone.if.no.acl.found`, and the authorizer log.
 *
 * Decisions, as StandardAuthorizerData.authorize:
 * - a super user (`super.users`, semicolon-separated "Type:name" principals) is allowed everything,
 *   whatever the ACLs say;
 * - before the initial load completes (`completeInitialLoad`, called once the node has replayed its
 *   metadata log, before any listener is bound) any other principal gets AuthorizerNotReadyError
 *   for the whole call;
 * - otherwise the ACLs that apply to the resource are those of its type with its exact LITERAL name,
 *   the PREFIXED ones whose name is a prefix of it, and the LITERAL `*`; of those, the ones whose
 *   principal is the caller's (type and name) or `User:*`, whose host is `*` or the caller's address,
 *   and whose operation is the one asked, ALL, or for ALLOW ACLs one that implies it (READ, WRITE,
 *   DELETE, ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS). Any matching DENY denies;
 *   else any matching ALLOW allows; else, if the resource has ACLs at all (for anyone), it is denied;
 *   only a resource without any ACL gets the default (`allow.everyone.if.no.acl.found`, default
 *   false: denied).
 * The ACLs are kept per resource type in StandardAcl's order (name reversed) and scanned the way
 * Kafka scans its navigable set, so the rule the log names is the one Kafka names. One difference:
 * where Kafka's scan for the `*` wildcard can index past its exemplar's name (a resource name that
 * starts with a character sorting before '*', next to a PREFIXED ACL it shares a prefix with) and
 * throws, this scan continues from the resource name's prefix instead, which yields the decision
 * Kafka's scan means. An ACL whose principal has no ':' matches no one (Kafka's would throw).
 *
 * authorizeByResourceType is Kafka's Authorizer default: allowed if the operation is allowed on a
 * resource named "hardcode" (so super users and allow.everyone.if.no.acl.found pass), else if some
 * LITERAL or PREFIXED ALLOW for the caller exists that no DENY dominates (a DENY on the same
 * LITERAL name, a PREFIXED DENY on a prefix of it, or a LITERAL `*` DENY, which denies at once).
 *
 * The authorizer log is Kafka's `kafka.authorizer.logger` category (a child of the node's logger
 * unless one is given): a denial the action asks to log at info, an allowed action at debug,
 * everything else at trace, as "Principal = User:bob is Denied operation = READ from host =
 * 127.0.0.1 on resource = Topic:LITERAL:t for request = Fetch with resourceRefCount = 1 based on
 * rule MatchingAcl(acl=StandardAcl(...))". Lines are built only when their level is enabled.
 *
 * Invariants: `authorize` never mutates; changes apply in the order the metadata log made them, so
 * no decision sees a later ACL without an earlier one; ACL ids are unique (an id added again
 * replaces the ACL it had).
 */
import type { Logger } from '../../common/logger';
import { apiByKey } from '../../protocol/generated';
import { STANDARD_AUTHORIZER_CLASS_NAME, type KafkaConfig } from '../../config/kafka-config';
import {
  AclOperation,
  AclPermissionType,
  PatternType,
  ResourceType,
  type AclBinding,
  type AclBindingFilter,
  type AclOperationCode,
  type Action,
  type AuthorizableRequestContext,
  type AuthorizationResult,
  type Authorizer,
  type ResourceTypeCode,
} from './authorizer';
import {
  WILDCARD,
  WILDCARD_PRINCIPAL,
  aclPrincipal,
  aclToString,
  compareAcls,
  filterMatches,
  normalizeBinding,
  normalizeFilter,
  operationName,
  patternTypeName,
  resourceTypePascalName,
} from './acl';

export const SUPER_USERS_CONFIG = 'super.users';
export const ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG = 'allow.everyone.if.no.acl.found';

/** Kafka's AuthorizerNotReadyException (no error code of its own: UNKNOWN_SERVER_ERROR on the wire). */
export class AuthorizerNotReadyError extends Error {
  constructor() {
    super('The authorizer is not ready to authorize requests yet.');
    this.name = 'AuthorizerNotReadyError';
  }
}

/**
 * StandardAuthorizer.getConfiguredSuperUsers: `super.users` split at ';', each trimmed, empty
 * ones skipped; each must be "Type:name" (SecurityUtils.parseKafkaPrincipal: a ':' anywhere).
 */
export function getConfiguredSuperUsers(value: string | null | undefined): Set<string> {
  const out = new Set<string>();
  if (value === null || value === undefined) return out;
  for (const part of value.split(';')) {
    const v = part.trim();
    if (v === '') continue;
    if (!v.includes(':')) throw new Error(`expected a string in format principalType:principalName but got ${v}`);
    out.add(v);
  }
  return out;
}

/** StandardAuthorizer.getDefaultResult: Boolean.parseBoolean of the trimmed value; unset is DENIED. */
export function getDefaultResult(value: string | null | undefined): AuthorizationResult {
  if (value === null || value === undefined) return 'DENIED';
  return value.trim().toLowerCase() === 'true' ? 'ALLOWED' : 'DENIED';
}

/** What a node's metadata image offers the authorizer (MetadataCache.subscribeAcls). */
export interface AclImageSource {
  subscribeAcls(
    listener: (changes: readonly { id: string; acl: AclBinding | null }[], snapshot: boolean) => void,
    opts?: { replay?: boolean },
  ): () => void;
}

export interface StandardAuthorizerOptions {
  nodeId?: number;
  /** "Type:name" principals allowed everything (already parsed: getConfiguredSuperUsers). */
  superUsers?: Iterable<string>;
  /** The result for a resource without ACLs (getDefaultResult). */
  defaultResult?: AuthorizationResult;
  /** The node's logger: the authorizer's own lines go to its `authorizer` child. */
  logger?: Logger;
  /** The `kafka.authorizer.logger` category (default: a child of `logger` by that name). */
  auditLogger?: Logger;
}

/** What decided a result (Kafka's MatchingRule), as the log names it. */
type Rule = { result: AuthorizationResult; text: () => string };
const SUPER_USER_RULE: Rule = { result: 'ALLOWED', text: () => 'SuperUser' };
const DEFAULT_ALLOW: Rule = { result: 'ALLOWED', text: () => 'DefaultAllow' };
const DEFAULT_DENY: Rule = { result: 'DENIED', text: () => 'DefaultDeny' };
const matchingAcl = (acl: AclBinding, result: AuthorizationResult): Rule => ({ result, text: () => `MatchingAcl(acl=${aclToString(acl)})` });

/** The exemplar Kafka starts a scan at: sorts before every real ACL of the same (type, name, pattern). */
const exemplar = (resourceType: number, resourceName: string, patternType: number): AclBinding => ({
  resourceType,
  resourceName,
  patternType,
  principal: '',
  host: '',
  operation: AclOperation.UNKNOWN,
  permissionType: AclPermissionType.UNKNOWN,
});

/** Operations an ALLOW ACL for them grants DESCRIBE with. */
const IMPLIES_DESCRIBE: ReadonlySet<number> = new Set([AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER]);
/** Operations an ALLOW ACL for them grants DESCRIBE_CONFIGS with. */
const IMPLIES_DESCRIBE_CONFIGS: ReadonlySet<number> = new Set([AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]);

/** StandardAuthorizerData.matchesUpTo: the length of the common prefix. */
function matchesUpTo(resource: string, pattern: string): number {
  let i = 0;
  while (i < resource.length && i < pattern.length && resource.charCodeAt(i) === pattern.charCodeAt(i)) i++;
  return i;
}

/** The first index whose ACL sorts at or after `x` (NavigableSet.tailSet(x, true)). */
function lowerBound(list: readonly AclBinding[], x: AclBinding): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compareAcls(list[mid], x) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Caller {
  principalType: string;
  name: string;
  host: string;
}

/**
 * StandardAuthorizerData.findResult: what this ACL says about the action (null: it does not apply).
 * The resource name is not checked here.
 */
export function findResult(operation: number, caller: Caller, acl: AclBinding): AuthorizationResult | null {
  const p = aclPrincipal(acl.principal);
  if (p === null) return null;
  const principalMatches = (p.principalType === caller.principalType && p.name === caller.name) || acl.principal === WILDCARD_PRINCIPAL;
  if (!principalMatches) return null;
  if (acl.host !== WILDCARD && acl.host !== caller.host) return null;
  if (acl.operation !== AclOperation.ALL) {
    if (acl.permissionType === AclPermissionType.ALLOW) {
      if (operation === AclOperation.DESCRIBE) {
        if (!IMPLIES_DESCRIBE.has(acl.operation)) return null;
      } else if (operation === AclOperation.DESCRIBE_CONFIGS) {
        if (!IMPLIES_DESCRIBE_CONFIGS.has(acl.operation)) return null;
      } else if (operation !== acl.operation) {
        return null;
      }
    } else if (operation !== acl.operation) {
      return null;
    }
  }
  return acl.permissionType === AclPermissionType.ALLOW ? 'ALLOWED' : 'DENIED';
}

/** Kafka's MatchingRuleBuilder. */
class RuleBuilder {
  denyAcl: AclBinding | null = null;
  allowAcl: AclBinding | null = null;
  hasResourceAcls = false;
  constructor(private readonly noAclRule: Rule) {}
  build(): Rule {
    if (this.denyAcl) return matchingAcl(this.denyAcl, 'DENIED');
    if (this.allowAcl) return matchingAcl(this.allowAcl, 'ALLOWED');
    return this.hasResourceAcls ? DEFAULT_DENY : this.noAclRule;
  }
}

export class StandardAuthorizer implements Authorizer {
  /** Kafka's class name, for `authorizer.class.name`. */
  static readonly CLASS_NAME = STANDARD_AUTHORIZER_CLASS_NAME;

  private readonly superUsers: ReadonlySet<string>;
  private readonly noAclRule: Rule;
  private readonly log: Logger | null;
  private readonly auditLog: Logger | null;
  private loaded = false;
  private loadError: Error | null = null;
  private readonly loadWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  /** ACL id -> ACL. */
  private readonly byId = new Map<string, AclBinding>();
  /** Resource type -> its ACLs in StandardAcl order. */
  private readonly byType = new Map<number, AclBinding[]>();

  constructor(opts: StandardAuthorizerOptions = {}) {
    this.superUsers = new Set(opts.superUsers ?? []);
    this.noAclRule = (opts.defaultResult ?? 'DENIED') === 'ALLOWED' ? DEFAULT_ALLOW : DEFAULT_DENY;
    this.log = opts.logger ? opts.logger.child('authorizer').withPrefix(`[StandardAuthorizer ${opts.nodeId ?? -1}] `) : null;
    this.auditLog = opts.auditLogger ?? opts.logger?.child('kafka.authorizer.logger') ?? null;
    this.log?.info(`set super.users=${[...this.superUsers].join(',')}, default result=${this.noAclRule.result}`);
  }

  /** StandardAuthorizer.configure: `super.users` and `allow.everyone.if.no.acl.found` from the node's original config. */
  static configure(originals: ReadonlyMap<string, string>, opts: Omit<StandardAuthorizerOptions, 'superUsers' | 'defaultResult'> = {}): StandardAuthorizer {
    return new StandardAuthorizer({
      ...opts,
      superUsers: getConfiguredSuperUsers(originals.get(SUPER_USERS_CONFIG)),
      defaultResult: getDefaultResult(originals.get(ALLOW_EVERYONE_IF_NO_ACL_IS_FOUND_CONFIG)),
    });
  }

  get isLoaded(): boolean {
    return this.loaded;
  }

  /** The ACLs are loaded (the node has replayed its metadata log): every principal may be authorized now. */
  completeInitialLoad(err?: Error): void {
    if (this.loaded || this.loadError) return;
    if (err) {
      this.loadError = err;
      this.log?.error('Failed to complete initial ACL load process.', { err });
      for (const w of this.loadWaiters.splice(0)) w.reject(err);
      return;
    }
    this.loaded = true;
    this.log?.info('Completed initial ACL load process.');
    for (const w of this.loadWaiters.splice(0)) w.resolve();
  }

  /** Resolves once the initial load completed (Kafka's start() futures for non-early-start listeners). */
  initialLoad(): Promise<void> {
    if (this.loaded) return Promise.resolve();
    if (this.loadError) return Promise.reject(this.loadError);
    return new Promise((resolve, reject) => this.loadWaiters.push({ resolve, reject }));
  }

  /** Keeps this authorizer's ACLs equal to the image's, from its current state on. Returns the unsubscribe function. */
  follow(image: AclImageSource): () => void {
    return image.subscribeAcls((changes, snapshot) => {
      if (snapshot) this.loadSnapshot(changes.flatMap((c) => (c.acl ? [[c.id, c.acl] as const] : [])));
      else for (const c of changes) c.acl ? this.addAcl(c.id, c.acl) : this.removeAcl(c.id);
    });
  }

  /** ClusterMetadataAuthorizer.addAcl (an id already present is replaced). */
  addAcl(id: string, acl: AclBinding): void {
    if (this.byId.has(id)) this.removeAcl(id);
    const a = normalizeBinding(acl);
    this.byId.set(id, a);
    let list = this.byType.get(a.resourceType);
    if (!list) this.byType.set(a.resourceType, (list = []));
    list.splice(lowerBound(list, a), 0, a);
    this.log?.trace(`Added ACL ${id}: ${aclToString(a)}`);
  }

  /** ClusterMetadataAuthorizer.removeAcl (an unknown id changes nothing). */
  removeAcl(id: string): void {
    const a = this.byId.get(id);
    if (!a) return;
    this.byId.delete(id);
    const list = this.byType.get(a.resourceType)!;
    const i = lowerBound(list, a);
    if (i < list.length && list[i] === a) list.splice(i, 1);
    else list.splice(list.indexOf(a), 1);
    if (list.length === 0) this.byType.delete(a.resourceType);
    this.log?.trace(`Removed ACL ${id}: ${aclToString(a)}`);
  }

  /** ClusterMetadataAuthorizer.loadSnapshot: exactly these ACLs, nothing else. */
  loadSnapshot(acls: Iterable<readonly [string, AclBinding]>): void {
    this.byId.clear();
    this.byType.clear();
    for (const [id, acl] of acls) {
      const a = normalizeBinding(acl);
      this.byId.set(id, a);
      let list = this.byType.get(a.resourceType);
      if (!list) this.byType.set(a.resourceType, (list = []));
      list.push(a);
    }
    for (const list of this.byType.values()) list.sort(compareAcls);
    this.log?.info(`Initialized with ${this.byId.size} acl(s).`);
  }

  aclCount(): number {
    return this.byId.size;
  }

  /** Authorizer.acls: the matching ACLs in StandardAcl order (DescribeAcls). */
  acls(filter: AclBindingFilter): AclBinding[] {
    const f = normalizeFilter(filter);
    const out: AclBinding[] = [];
    for (const type of [...this.byType.keys()].sort((a, b) => a - b)) {
      for (const acl of this.byType.get(type)!) if (filterMatches(f, acl)) out.push({ ...acl });
    }
    return out;
  }

  authorize(ctx: AuthorizableRequestContext, actions: readonly Action[]): AuthorizationResult[] {
    return actions.map((a) => this.authorizeAction(ctx, a));
  }

  private authorizeAction(ctx: AuthorizableRequestContext, action: Action): AuthorizationResult {
    const p = ctx.principal;
    let rule: Rule;
    if (this.superUsers.has(`${p.principalType}:${p.name}`)) {
      rule = SUPER_USER_RULE;
    } else if (!this.loaded) {
      throw new AuthorizerNotReadyError();
    } else {
      rule = this.findAclRule({ principalType: p.principalType, name: p.name, host: ctx.clientAddress }, action);
    }
    this.logAuditMessage(ctx, action, rule);
    return rule.result;
  }

  /** StandardAuthorizerData.findAclRule: the resource's own section, then the LITERAL `*` one. */
  private findAclRule(caller: Caller, action: Action): Rule {
    const b = new RuleBuilder(this.noAclRule);
    const list = this.byType.get(action.resourceType);
    if (!list) return b.build();
    this.checkSection(list, action, action.resourceName, PatternType.UNKNOWN, caller, b);
    if (b.denyAcl) return b.build();
    this.checkSection(list, action, WILDCARD, PatternType.LITERAL, caller, b);
    return b.build();
  }

  /**
   * StandardAuthorizerData.checkSection: from the exemplar on, every ACL whose name is the resource
   * name or (PREFIXED) a prefix of it, or the LITERAL `*`; an ACL that shares only part of the name
   * makes the scan jump to that common prefix. Stops at the first DENY.
   */
  private checkSection(list: readonly AclBinding[], action: Action, startName: string, startPattern: number, caller: Caller, b: RuleBuilder): void {
    const name = action.resourceName;
    let i = lowerBound(list, exemplar(action.resourceType, startName, startPattern));
    while (i < list.length) {
      const acl = list[i];
      const upTo = matchesUpTo(name, acl.resourceName);
      if (upTo === acl.resourceName.length) {
        if (acl.patternType === PatternType.LITERAL && upTo !== name.length) {
          // A LITERAL ACL for a prefix of the name: not this resource, but PREFIXED ones may follow.
          i++;
          continue;
        }
      } else if (!(acl.resourceName === WILDCARD && acl.patternType === PatternType.LITERAL)) {
        // Past everything that shares this much of the name: continue at the common prefix.
        i = lowerBound(list, exemplar(action.resourceType, name.substring(0, upTo), startPattern));
        continue;
      }
      b.hasResourceAcls = true;
      const r = findResult(action.operation, caller, acl);
      if (r === 'ALLOWED') b.allowAcl = acl;
      else if (r === 'DENIED') {
        b.denyAcl = acl;
        return;
      }
      i++;
    }
  }

  /** StandardAuthorizerData.logAuditMessage: DENIED at info (if logIfDenied), ALLOWED at debug (if logIfAllowed), else trace. */
  private logAuditMessage(ctx: AuthorizableRequestContext, action: Action, rule: Rule): void {
    const log = this.auditLog;
    if (!log) return;
    const important = rule.result === 'ALLOWED' ? (action.logIfAllowed ?? true) : (action.logIfDenied ?? true);
    const level = !important ? 'trace' : rule.result === 'ALLOWED' ? 'debug' : 'info';
    if (!log.enabled(level)) return;
    log[level](auditMessage(ctx, action, rule));
  }

  /**
   * Kafka's Authorizer.authorizeByResourceType (the interface default StandardAuthorizer keeps):
   * whether `operation` is allowed on at least one resource of the type.
   */
  authorizeByResourceType(ctx: AuthorizableRequestContext, operation: AclOperationCode, resourceType: ResourceTypeCode): AuthorizationResult {
    if (resourceType === ResourceType.ANY) throw new Error('Must specify a non-filter resource type for authorizeByResourceType');
    if (resourceType === ResourceType.UNKNOWN) throw new Error('Unknown resource type');
    if (operation === AclOperation.ANY) throw new Error('Must specify a non-filter operation type for authorizeByResourceType');
    if (operation === AclOperation.UNKNOWN) throw new Error('Unknown operation type');
    // A hard-coded name first, so that super users (and the no-ACL default) pass whatever DENY ACLs say.
    const probe: Action = { operation, resourceType, resourceName: 'hardcode', resourceReferenceCount: 0, logIfAllowed: true, logIfDenied: false };
    if (this.authorize(ctx, [probe])[0] === 'ALLOWED') return 'ALLOWED';

    const denyLiteral = new Set<string>();
    const denyPrefixed = new Set<string>();
    const allowLiteral = new Set<string>();
    const allowPrefixed = new Set<string>();
    let wildcardAllow = false;
    const p = ctx.principal;
    for (const acl of this.byType.get(resourceType) ?? []) {
      if (acl.host !== ctx.clientAddress && acl.host !== WILDCARD) continue;
      const ap = aclPrincipal(acl.principal);
      const samePrincipal = ap !== null && ap.principalType === p.principalType && ap.name === p.name;
      if (!samePrincipal && acl.principal !== WILDCARD_PRINCIPAL) continue;
      if (acl.operation !== operation && acl.operation !== AclOperation.ALL) continue;
      if (acl.permissionType === AclPermissionType.DENY) {
        if (acl.patternType === PatternType.LITERAL) {
          if (acl.resourceName === WILDCARD) return 'DENIED';
          denyLiteral.add(acl.resourceName);
        } else if (acl.patternType === PatternType.PREFIXED) {
          denyPrefixed.add(acl.resourceName);
        }
        continue;
      }
      if (acl.permissionType !== AclPermissionType.ALLOW) continue;
      if (acl.patternType === PatternType.LITERAL) {
        if (acl.resourceName === WILDCARD) wildcardAllow = true;
        else allowLiteral.add(acl.resourceName);
      } else if (acl.patternType === PatternType.PREFIXED) {
        allowPrefixed.add(acl.resourceName);
      }
    }
    if (wildcardAllow) return 'ALLOWED';
    const dominated = (name: string): boolean => {
      for (let i = 1; i <= name.length; i++) if (denyPrefixed.has(name.slice(0, i))) return true;
      return false;
    };
    for (const name of allowLiteral) if (!denyLiteral.has(name) && !dominated(name)) return 'ALLOWED';
    for (const name of allowPrefixed) if (!dominated(name)) return 'ALLOWED';
    return 'DENIED';
  }
}

/** StandardAuthorizerData.buildAuditMessage. */
function auditMessage(ctx: AuthorizableRequestContext, action: Action, rule: Rule): string {
  const p = ctx.principal;
  return (
    `Principal = ${p.principalType}:${p.name} is ${rule.result === 'ALLOWED' ? 'Allowed' : 'Denied'} ` +
    `operation = ${operationName(action.operation)} from host = ${ctx.clientAddress} ` +
    `on resource = ${resourceTypePascalName(action.resourceType)}:${patternTypeName(PatternType.LITERAL)}:${action.resourceName} ` +
    `for request = ${apiByKey(ctx.requestType)?.name ?? ctx.requestType} with resourceRefCount = ${action.resourceReferenceCount ?? 1} ` +
    `based on rule ${rule.text()}`
  );
}

/**
 * The authorizer `authorizer.class.name` names, configured from the node's original config, or
 * null when it names none (KafkaConfig validated the name: StandardAuthorizer or empty).
 */
export function authorizerFromConfig(config: KafkaConfig, logger?: Logger): StandardAuthorizer | null {
  const className = (config.getString('authorizer.class.name') ?? '').trim();
  if (className === '') return null;
  if (className !== STANDARD_AUTHORIZER_CLASS_NAME) throw new Error(`ClassNotFoundException: ${className}`);
  return StandardAuthorizer.configure(config.originals(), { nodeId: config.nodeId, logger });
}
