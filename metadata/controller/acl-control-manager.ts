/**
 * AclControlManager: the controller's half of CreateAcls and DeleteAcls, after Kafka's class of the
 * same name. It turns bindings into AccessControlEntryRecords and filters into
 * RemoveAccessControlEntryRecords, with one result per binding / filter; it changes nothing itself
 * (the Controller commits the records and the image applies them). It knows the current ACLs by
 * replaying the controller image's ACL changes (`replay`, subscribed to MetadataCache.subscribeAcls).
 *
 * Kafka's rules, with its error codes and messages:
 * - createAcls, per binding in order (validateNewAcl): resource type UNKNOWN or ANY "Invalid
 *   resourceType T", pattern type other than LITERAL / PREFIXED "Invalid patternType P", operation
 *   UNKNOWN or ANY "Invalid operation O", permission type other than DENY / ALLOW "Invalid
 *   permissionType P", an empty name "Resource name should not be empty" (all INVALID_REQUEST); an
 *   ACL that exists already, or earlier in the request, succeeds without a record; a new one gets a
 *   fresh random Uuid (never one in use) and a record;
 * - more than MAX_RECORDS_PER_USER_OP (10000) records for one request: nothing is written and every
 *   binding fails with POLICY_VIOLATION "Unable to perform excessively large batch operation." (the
 *   controller's answer to a batch over its bound);
 * - deleteAcls, per filter (validateFilter): resource or pattern type UNKNOWN "Unknown
 *   patternFilter.", operation or permission type UNKNOWN "Unknown entryFilter." (INVALID_REQUEST);
 *   otherwise every ACL the filter matches is listed in its result (an ACL two filters match is in
 *   both, removed once). Filters are matched against the ACLs as they were before the request.
 *   More than 10000 distinct ACLs to remove: Kafka's controller refuses to commit the oversized
 *   atomic batch, so nothing is removed and every filter fails with UNKNOWN_SERVER_ERROR (no
 *   message).
 * There is no other limit on the number of ACLs (Kafka has none).
 *
 * Where krill can differ from Kafka only in order: Kafka lists a filter's matching ACLs in its
 * HashMap's order of ACL ids; krill lists them in creation order.
 */
import { ErrorCode } from '../../protocol/errors';
import { randomUuid } from '../../protocol/primitives/uuid';
import { AclOperation, AclPermissionType, PatternType, ResourceType, type AclBinding, type AclBindingFilter } from '../authorizer/authorizer';
import {
  aclKey,
  entryFilterIsUnknown,
  filterMatches,
  normalizeBinding,
  normalizeFilter,
  operationName,
  patternFilterIsUnknown,
  patternTypeName,
  permissionTypeName,
  resourceTypeName,
} from '../authorizer/acl';
import type { AclChange } from '../authorizer/acls-image';
import type { MetadataRecord } from '../metadata-records';

/** Kafka's QuorumController.MAX_RECORDS_PER_USER_OP. */
export const MAX_RECORDS_PER_USER_OP = 10_000;

/** The message of Kafka's PolicyViolationException for an operation over MAX_RECORDS_PER_USER_OP. */
export const EXCESSIVE_BATCH_MESSAGE = 'Unable to perform excessively large batch operation.';

/** One binding's outcome (Kafka's AclCreateResult). */
export interface AclCreateResult {
  errorCode: number;
  errorMessage: string | null;
}

/** One filter's outcome (Kafka's AclDeleteResult): the ACLs it matched, each with its own outcome. */
export interface AclDeleteResult {
  errorCode: number;
  errorMessage: string | null;
  matchingAcls: { acl: AclBinding; errorCode: number; errorMessage: string | null }[];
}

class InvalidRequest extends Error {}

/** Kafka's AclControlManager.validateNewAcl: throws the first problem. */
export function validateNewAcl(b: AclBinding): void {
  if (b.resourceType === ResourceType.UNKNOWN || b.resourceType === ResourceType.ANY) {
    throw new InvalidRequest(`Invalid resourceType ${resourceTypeName(b.resourceType)}`);
  }
  if (b.patternType !== PatternType.LITERAL && b.patternType !== PatternType.PREFIXED) {
    throw new InvalidRequest(`Invalid patternType ${patternTypeName(b.patternType)}`);
  }
  if (b.operation === AclOperation.UNKNOWN || b.operation === AclOperation.ANY) {
    throw new InvalidRequest(`Invalid operation ${operationName(b.operation)}`);
  }
  if (b.permissionType !== AclPermissionType.DENY && b.permissionType !== AclPermissionType.ALLOW) {
    throw new InvalidRequest(`Invalid permissionType ${permissionTypeName(b.permissionType)}`);
  }
  if (b.resourceName === '') throw new InvalidRequest('Resource name should not be empty');
}

/** Kafka's AclControlManager.validateFilter. */
export function validateFilter(f: AclBindingFilter): void {
  if (patternFilterIsUnknown(f)) throw new InvalidRequest('Unknown patternFilter.');
  if (entryFilterIsUnknown(f)) throw new InvalidRequest('Unknown entryFilter.');
}

export class AclControlManager {
  /** ACL id -> ACL, in creation order. */
  private readonly idToAcl = new Map<string, AclBinding>();
  /** aclKey -> how many ids carry that ACL (one, unless a log was written by something else). */
  private readonly existing = new Map<string, number>();

  constructor(private readonly newId: () => string = randomUuid) {}

  /** Follows the controller image (MetadataCache.subscribeAcls). */
  replay(changes: readonly AclChange[], snapshot: boolean): void {
    if (snapshot) {
      this.idToAcl.clear();
      this.existing.clear();
    }
    for (const c of changes) {
      const prev = this.idToAcl.get(c.id);
      if (prev) {
        this.idToAcl.delete(c.id);
        const key = aclKey(prev);
        const n = (this.existing.get(key) ?? 1) - 1;
        if (n <= 0) this.existing.delete(key);
        else this.existing.set(key, n);
      }
      if (c.acl) {
        const acl = normalizeBinding(c.acl);
        this.idToAcl.set(c.id, acl);
        const key = aclKey(acl);
        this.existing.set(key, (this.existing.get(key) ?? 0) + 1);
      }
    }
  }

  get aclCount(): number {
    return this.idToAcl.size;
  }

  /** Kafka's newAclId: a random Uuid no ACL has. */
  private newAclId(taken: ReadonlySet<string>): string {
    for (;;) {
      const id = this.newId();
      if (!this.idToAcl.has(id) && !taken.has(id)) return id;
    }
  }

  /** Kafka's createAcls: the records to commit (all or none) and one result per binding, in order. */
  createAcls(bindings: readonly AclBinding[]): { records: MetadataRecord[]; results: AclCreateResult[] } {
    const records: MetadataRecord[] = [];
    const results: AclCreateResult[] = [];
    const added = new Set<string>();
    const ids = new Set<string>();
    for (const raw of bindings) {
      const b = normalizeBinding(raw);
      try {
        validateNewAcl(b);
      } catch (err) {
        results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: (err as Error).message });
        continue;
      }
      const key = aclKey(b);
      if (!this.existing.has(key) && !added.has(key)) {
        added.add(key);
        if (records.length >= MAX_RECORDS_PER_USER_OP) {
          return { records: [], results: bindings.map(() => ({ errorCode: ErrorCode.POLICY_VIOLATION, errorMessage: EXCESSIVE_BATCH_MESSAGE })) };
        }
        const id = this.newAclId(ids);
        ids.add(id);
        records.push({ type: 'AccessControlEntryRecord', data: { id, ...b } });
      }
      results.push({ errorCode: ErrorCode.NONE, errorMessage: null });
    }
    return { records, results };
  }

  /** Kafka's deleteAcls: the removals to commit (all or none) and one result per filter, in order. */
  deleteAcls(filters: readonly AclBindingFilter[]): { records: MetadataRecord[]; results: AclDeleteResult[] } {
    const removed = new Set<string>();
    const results: AclDeleteResult[] = [];
    for (const raw of filters) {
      const f = normalizeFilter(raw);
      try {
        validateFilter(f);
      } catch (err) {
        results.push({ errorCode: ErrorCode.INVALID_REQUEST, errorMessage: (err as Error).message, matchingAcls: [] });
        continue;
      }
      const matching: AclDeleteResult['matchingAcls'] = [];
      for (const [id, acl] of this.idToAcl) {
        if (!filterMatches(f, acl)) continue;
        matching.push({ acl: { ...acl }, errorCode: ErrorCode.NONE, errorMessage: null });
        removed.add(id);
        if (removed.size > MAX_RECORDS_PER_USER_OP) {
          // Kafka's controller refuses to commit an atomic batch over its bound: the whole operation fails.
          return { records: [], results: filters.map(() => ({ errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: null, matchingAcls: [] })) };
        }
      }
      results.push({ errorCode: ErrorCode.NONE, errorMessage: null, matchingAcls: matching });
    }
    return { records: [...removed].map((id) => ({ type: 'RemoveAccessControlEntryRecord' as const, data: { id } })), results };
  }
}
