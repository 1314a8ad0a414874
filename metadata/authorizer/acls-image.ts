/**
 * The ACLs of a metadata image (Kafka's AclsImage and AclsDelta), kept by MetadataCache: ACL id ->
 * ACL, built only from AccessControlEntryRecord / RemoveAccessControlEntryRecord in log order.
 *
 * A batch's changes are collected as Kafka's AclsDelta collects them, in the order they were made
 * (an id added and removed within one batch is no change at all; an id added again replaces its
 * ACL in place) and then handed to every subscriber once the whole batch is in the image: the
 * StandardAuthorizer of the node (broker or controller) and the controller's AclControlManager
 * follow the image this way, the startup replay included, so nothing polls.
 *
 * Invariants: codes are stored as Kafka's fromCode reads them (unknown codes become UNKNOWN); a
 * removal of an id the image does not have changes nothing (Kafka's delta would fail the batch;
 * the controller never writes one); listeners are called synchronously, a throwing one does not
 * stop the others or the image.
 */
import type { AclBinding } from './authorizer';
import { normalizeBinding } from './acl';
import type { AccessControlEntryRecordData } from '../metadata-records';

/** One ACL a batch added (acl) or removed (null). */
export interface AclChange {
  id: string;
  acl: AclBinding | null;
}

/**
 * Called with one batch's changes (`snapshot` false), or, when subscribing with replay, once with
 * every current ACL (`snapshot` true: exactly these, nothing else).
 */
export type AclListener = (changes: readonly AclChange[], snapshot: boolean) => void;

/** The changes of one batch being applied (Kafka's AclsDelta). */
export interface AclsDelta {
  replay(record: AccessControlEntryRecordData): void;
  replayRemove(id: string): void;
  /** The batch is applied: its changes in order, after every listener has been told (empty: nothing changed). */
  finish(): AclChange[];
}

export class AclsImage {
  private readonly byId = new Map<string, AclBinding>();
  private readonly listeners: { listener: AclListener; onError: (err: unknown) => void }[] = [];

  /** Starts collecting the changes of one batch. */
  delta(): AclsDelta {
    const changes = new Map<string, AclBinding | null>();
    /** Whether an id the batch touched was in the image before the batch. */
    const before = new Map<string, boolean>();
    const touch = (id: string): void => {
      if (!before.has(id)) before.set(id, this.byId.has(id));
    };
    return {
      replay: (r) => {
        touch(r.id);
        const acl = normalizeBinding(r);
        this.byId.set(r.id, acl);
        changes.set(r.id, acl);
      },
      replayRemove: (id) => {
        if (!this.byId.has(id)) return;
        touch(id);
        this.byId.delete(id);
        if (before.get(id)) changes.set(id, null);
        else changes.delete(id);
      },
      finish: () => {
        const out = [...changes].map(([id, acl]) => ({ id, acl }));
        if (out.length > 0) this.notify(this.listeners, out, false);
        return out;
      },
    };
  }

  get size(): number {
    return this.byId.size;
  }

  /** Every ACL by id, in the order they were created (a copy). */
  acls(): Map<string, AclBinding> {
    return new Map([...this.byId].map(([id, a]) => [id, { ...a }]));
  }

  acl(id: string): AclBinding | undefined {
    const a = this.byId.get(id);
    return a && { ...a };
  }

  /**
   * Calls `listener` after every applied batch that changed ACLs. With `replay` (the default) it is
   * first called once with the current ACLs as a snapshot. Returns the unsubscribe function.
   */
  subscribe(listener: AclListener, opts: { replay?: boolean; onError?: (err: unknown) => void } = {}): () => void {
    const entry = {
      listener,
      onError: opts.onError ?? ((err: unknown) => process.emitWarning(`ACL listener failed: ${(err as Error)?.stack ?? String(err)}`)),
    };
    if (opts.replay ?? true) this.notify([entry], [...this.byId].map(([id, acl]) => ({ id, acl: { ...acl } })), true);
    this.listeners.push(entry);
    return () => {
      const i = this.listeners.indexOf(entry);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  private notify(listeners: readonly { listener: AclListener; onError: (err: unknown) => void }[], changes: readonly AclChange[], snapshot: boolean): void {
    for (const l of [...listeners]) {
      try {
        l.listener(changes, snapshot);
      } catch (err) {
        l.onError(err);
      }
    }
  }
}
