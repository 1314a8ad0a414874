/**
 * The `quorum-state` file of a KRaft replica (Kafka's FileQuorumStateStore): the durable part of
 * the election state, i.e. the epoch, the leader known for it and the vote cast in it. It is the
 * JSON form of Kafka's QuorumStateData (raft/QuorumStateData.json) on one line, plus the extra
 * field `data_version`:
 *
 *   version 0 (static voters, kraft.version 0):
 *     {"clusterId":"","leaderId":1,"leaderEpoch":2,"votedId":-1,"appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}
 *   version 1 (KIP-853):
 *     {"leaderId":-1,"leaderEpoch":2,"votedId":1,"votedDirectoryId":"J8aAPcfLQt2bqs1JT_rMgQ","data_version":1}
 *
 * Invariants: a write is atomic and durable when `write` returns (temp file `quorum-state.tmp`,
 * fsync, rename over the file, fsync of the directory), so a crash leaves either the old or the new
 * state, never a mix; a read validates every field and throws QuorumStateFileError naming the file
 * and the problem rather than guessing; a missing file means "no state yet" (null). The RaftNode
 * writes through this store before it acts on a transition (in particular before it answers a
 * granted vote), so the state on disk is never behind what other replicas were told.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';
import { nodeFs, writeFileAtomic } from '../../storage/fs';

/** Kafka's ReplicaKey.NO_DIRECTORY_ID (Uuid.ZERO_UUID in Kafka's base64 form). */
export const NO_DIRECTORY_ID = 'AAAAAAAAAAAAAAAAAAAAAA';
export const QUORUM_STATE_FILE_NAME = 'quorum-state';
export const LOWEST_SUPPORTED_VERSION = 0;
export const HIGHEST_SUPPORTED_VERSION = 1;

/** Kafka's ElectionState: -1 is "unknown leader" / "not voted", as in the file. */
export interface ElectionState {
  epoch: number;
  leaderId: number;
  votedId: number;
  /** Only in version 1; NO_DIRECTORY_ID when unknown. */
  votedDirectoryId: string;
}

export function electionState(epoch: number, leaderId = -1, votedId = -1, votedDirectoryId = NO_DIRECTORY_ID): ElectionState {
  return { epoch, leaderId, votedId, votedDirectoryId };
}

export interface QuorumStateStore {
  /** The stored state, or null when nothing was ever written. */
  read(): ElectionState | null;
  /** Replaces the stored state; durable when it returns. */
  write(state: ElectionState): void;
  clear(): void;
}

export class QuorumStateFileError extends Error {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(`Error while reading the Quorum status from the file ${file}: ${reason}`);
    this.name = 'QuorumStateFileError';
  }
}

const UUID_RE = /^[A-Za-z0-9_-]{22}$/;

function isInt32(v: unknown): v is number {
  return typeof v === 'number' && Number.isInteger(v) && v >= -0x80000000 && v <= 0x7fffffff;
}

/** The file's text for `state` at `version` (0 needs the static voter ids). */
export function encodeQuorumState(state: ElectionState, version: number, voterIds: readonly number[] = []): string {
  if (version === 0) {
    return JSON.stringify({
      clusterId: '',
      leaderId: state.leaderId,
      leaderEpoch: state.epoch,
      votedId: state.votedId,
      appliedOffset: 0,
      currentVoters: voterIds.map((voterId) => ({ voterId })),
      data_version: 0,
    });
  }
  if (version === 1) {
    return JSON.stringify({
      leaderId: state.leaderId,
      leaderEpoch: state.epoch,
      votedId: state.votedId,
      votedDirectoryId: state.votedDirectoryId,
      data_version: 1,
    });
  }
  throw new Error(`Quorum state data version (${version}) is greater than the supported version (${HIGHEST_SUPPORTED_VERSION})`);
}

/** Parses and validates the file's text; throws QuorumStateFileError (with `file` for the message). */
export function decodeQuorumState(text: string, file = QUORUM_STATE_FILE_NAME): ElectionState {
  const fail = (reason: string): never => {
    throw new QuorumStateFileError(file, reason);
  };
  const nl = text.indexOf('\n');
  const line = nl < 0 ? text : text.slice(0, nl);
  if (line.trim() === '') fail('File ended prematurely.');
  let node: unknown;
  try {
    node = JSON.parse(line);
  } catch (e) {
    return fail(`invalid JSON (${(e as Error).message})`);
  }
  if (node === null || typeof node !== 'object' || Array.isArray(node)) return fail(`Deserialized node ${line} is not an object node`);
  const o = node as Record<string, unknown>;
  if (!('data_version' in o)) fail(`Deserialized node ${line} does not have data_version field`);
  const version = o.data_version;
  if (!isInt32(version)) return fail(`data_version ${JSON.stringify(version)} is not an integer`);
  if (version < LOWEST_SUPPORTED_VERSION || version > HIGHEST_SUPPORTED_VERSION) {
    fail(`data_version (${version}) is not within the min (${LOWEST_SUPPORTED_VERSION}) and max (${HIGHEST_SUPPORTED_VERSION}) supported version`);
  }
  const int = (name: string, dflt: number): number => {
    if (!(name in o)) return dflt;
    const v = o[name];
    if (!isInt32(v)) fail(`field ${name} is ${JSON.stringify(v)}, expected an int32`);
    return v as number;
  };
  const leaderId = int('leaderId', -1);
  const epoch = int('leaderEpoch', -1);
  const votedId = int('votedId', -1);
  let votedDirectoryId = NO_DIRECTORY_ID;
  if (version === 0) {
    // Required in version 0 (QuorumStateData has no defaults for them); their values are unused.
    if (typeof o.clusterId !== 'string') fail('field clusterId is missing or not a string');
    if (typeof o.appliedOffset !== 'number' || !Number.isInteger(o.appliedOffset)) fail('field appliedOffset is missing or not an int64');
    const cv = o.currentVoters;
    if (cv !== null && !Array.isArray(cv)) fail('field currentVoters is not an array');
    for (const v of (cv as unknown[] | null) ?? []) {
      if (v === null || typeof v !== 'object' || !isInt32((v as Record<string, unknown>).voterId)) fail(`invalid currentVoters entry ${JSON.stringify(v)}`);
    }
  } else {
    const d = o.votedDirectoryId;
    if (typeof d !== 'string' || !UUID_RE.test(d)) fail(`field votedDirectoryId is ${JSON.stringify(d)}, expected a uuid`);
    votedDirectoryId = d as string;
  }
  if (epoch < 0 && (leaderId >= 0 || votedId >= 0)) fail(`leaderEpoch ${epoch} with leaderId ${leaderId} / votedId ${votedId}`);
  if (leaderId < -1 || votedId < -1) fail(`negative leaderId ${leaderId} / votedId ${votedId}`);
  return { epoch, leaderId, votedId, votedDirectoryId };
}

export interface FileQuorumStateStoreOptions {
  /** data_version to write: 0 for a static voter set (kraft.version 0), 1 with KIP-853. */
  version?: number;
  /** The static voter ids, written as currentVoters in version 0. */
  voterIds?: readonly number[];
}

export class FileQuorumStateStore implements QuorumStateStore {
  readonly file: string;
  private readonly version: number;
  private readonly voterIds: readonly number[];

  constructor(file: string, opts: FileQuorumStateStoreOptions = {}) {
    this.file = file;
    this.version = opts.version ?? 0;
    this.voterIds = opts.voterIds ?? [];
    if (this.version < LOWEST_SUPPORTED_VERSION || this.version > HIGHEST_SUPPORTED_VERSION) {
      throw new Error(`Quorum state data version (${this.version}) is not supported`);
    }
  }

  /** `<dir>/quorum-state`, Kafka's location inside the metadata log directory (`__cluster_metadata-0`). */
  static inDir(dir: string, opts?: FileQuorumStateStoreOptions): FileQuorumStateStore {
    return new FileQuorumStateStore(path.join(dir, QUORUM_STATE_FILE_NAME), opts);
  }

  read(): ElectionState | null {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw new QuorumStateFileError(this.file, (e as Error).message);
    }
    return decodeQuorumState(text, this.file);
  }

  write(state: ElectionState): void {
    const text = encodeQuorumState(state, this.version, this.voterIds);
    try {
      writeFileAtomic(nodeFs, this.file, text);
    } catch (e) {
      throw new Error(`Error while writing the Quorum status from the file ${this.file}: ${(e as Error).message}`);
    } finally {
      fs.rmSync(`${this.file}.tmp`, { force: true });
    }
  }

  clear(): void {
    fs.rmSync(this.file, { force: true });
    fs.rmSync(`${this.file}.tmp`, { force: true });
  }
}

/** A store that keeps the state in memory (tests, the simulation: it survives a simulated crash). */
export class InMemoryQuorumStateStore implements QuorumStateStore {
  private state: ElectionState | null = null;
  writes = 0;

  read(): ElectionState | null {
    return this.state && { ...this.state };
  }

  write(state: ElectionState): void {
    this.state = { ...state };
    this.writes++;
  }

  clear(): void {
    this.state = null;
  }
}
