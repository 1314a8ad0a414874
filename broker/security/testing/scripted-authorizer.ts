/**
 * A scripted Authorizer for handler tests: a table of allowed (operation, resource type, resource
 * name) entries, everything else DENIED (like an ACL-backed authorizer with no ACLs and
 * allow.everyone.if.no.acl.found=false). A name of '*' allows the operation on every resource of
 * the type. It records every action asked, so tests can check which operations a handler checked
 * and with which logIfAllowed / logIfDenied.
 *
 * The table applies to the test's own requests. Requests from the broker's own clients (client id
 * `krill-broker-...`: transaction markers, transaction verification), which a real cluster runs as
 * a super user, are always ALLOWED and not recorded, so a test that denies CLUSTER_ACTION to its
 * client does not also stop the broker's markers.
 *
 * Invariant: decisions depend only on the table at the moment of the call; `authorizeByResourceType`
 * is ALLOWED exactly when some entry allows the operation on the type (Kafka's rule when no DENY
 * ACLs exist).
 */
import {
  AclOperation,
  ResourceType,
  type AclOperationCode,
  type Action,
  type AuthorizableRequestContext,
  type AuthorizationResult,
  type Authorizer,
  type ResourceTypeCode,
} from '../../../metadata/authorizer/authorizer';

const opName = (op: number): string => Object.entries(AclOperation).find(([, v]) => v === op)?.[0] ?? String(op);
const typeName = (t: number): string => Object.entries(ResourceType).find(([, v]) => v === t)?.[0] ?? String(t);

export interface AskedAction extends Action {
  principal: string;
}

export class ScriptedAuthorizer implements Authorizer {
  private readonly allowed = new Set<string>();
  readonly asked: AskedAction[] = [];
  readonly askedByResourceType: { operation: AclOperationCode; resourceType: ResourceTypeCode }[] = [];

  private static key(operation: number, resourceType: number, name: string): string {
    return `${operation}\u0000${resourceType}\u0000${name}`;
  }

  allow(operation: AclOperationCode, resourceType: ResourceTypeCode, name = '*'): this {
    this.allowed.add(ScriptedAuthorizer.key(operation, resourceType, name));
    return this;
  }

  revoke(operation: AclOperationCode, resourceType: ResourceTypeCode, name = '*'): this {
    this.allowed.delete(ScriptedAuthorizer.key(operation, resourceType, name));
    return this;
  }

  /** Denies everything again and forgets what was asked. */
  reset(): this {
    this.allowed.clear();
    this.asked.length = 0;
    this.askedByResourceType.length = 0;
    return this;
  }

  private allows(operation: number, resourceType: number, name: string): boolean {
    return this.allowed.has(ScriptedAuthorizer.key(operation, resourceType, name)) || this.allowed.has(ScriptedAuthorizer.key(operation, resourceType, '*'));
  }

  /** Allows every operation on every resource (setting up) until the next `reset`. */
  allowEverything(): this {
    for (const op of Object.values(AclOperation)) for (const t of Object.values(ResourceType)) this.allow(op, t);
    return this;
  }

  private static internal(ctx: AuthorizableRequestContext): boolean {
    return ctx.clientId?.startsWith('krill-broker-') ?? false;
  }

  authorize(ctx: AuthorizableRequestContext, actions: readonly Action[]): AuthorizationResult[] {
    if (ScriptedAuthorizer.internal(ctx)) return actions.map(() => 'ALLOWED');
    return actions.map((a) => {
      this.asked.push({ ...a, principal: `${ctx.principal.principalType}:${ctx.principal.name}` });
      return this.allows(a.operation, a.resourceType, a.resourceName) ? 'ALLOWED' : 'DENIED';
    });
  }

  authorizeByResourceType(ctx: AuthorizableRequestContext, operation: AclOperationCode, resourceType: ResourceTypeCode): AuthorizationResult {
    if (ScriptedAuthorizer.internal(ctx)) return 'ALLOWED';
    this.askedByResourceType.push({ operation, resourceType });
    const prefix = `${operation}\u0000${resourceType}\u0000`;
    for (const k of this.allowed) if (k.startsWith(prefix)) return 'ALLOWED';
    return 'DENIED';
  }

  /** What was asked, as "OPERATION TYPE name" lines (for readable assertions). */
  askedLines(): string[] {
    return this.asked.map((a) => `${opName(a.operation)} ${typeName(a.resourceType)} ${a.resourceName}`);
  }

  clearAsked(): void {
    this.asked.length = 0;
    this.askedByResourceType.length = 0;
  }
}
