/**
 * SCRAM credentials on the controller (Kafka's ScramControlManager), and the SCRAM arithmetic of RFC
 * 5802 / RFC 7677 that the controller, the SASL mechanisms (broker/security/sasl/scram-*.ts) and the
 * `--add-scram` bootstrap share (Kafka's ScramMechanism and ScramFormatter). It lives here, the
 * lowest layer that needs it, so the broker side imports it downward.
 *
 * ScramControlManager turns one AlterUserScramCredentials request into the records to commit and one
 * result per user. It changes nothing itself: the Controller commits the records as one batch and
 * every image (MetadataCache) applies them. Kafka's rules, codes and messages:
 * - a user is altered at most once per request, whatever the mechanisms: a second deletion or
 *   upsertion of the same name fails that user with DUPLICATE_RESOURCE "A user credential cannot be
 *   altered twice in the same request" and nothing is written for it; once a user has an error,
 *   later entries for it are ignored (the first error stands);
 * - an empty name: UNACCEPTABLE_CREDENTIAL "Username must not be empty"; a mechanism byte other than
 *   1 (SCRAM-SHA-256) or 2 (SCRAM-SHA-512): UNSUPPORTED_SASL_MECHANISM "Unknown SCRAM mechanism";
 * - a deletion of a credential the image does not have: RESOURCE_NOT_FOUND "Attempt to delete a
 *   user credential that does not exist";
 * - an upsertion with fewer than 4096 iterations: UNACCEPTABLE_CREDENTIAL "Too few iterations";
 *   more than 16384: "Too many iterations". The client salts the password (the request carries the
 *   salt and salted_password); the controller stores StoredKey and ServerKey derived from it. An
 *   empty salted_password cannot key an HMAC in Kafka (Java refuses an empty key) and fails with
 *   UNKNOWN_SERVER_ERROR and no message, as Kafka's does;
 * - users are independent: the good ones are written even when others fail.
 * Results: successful deletions, then successful upsertions, then errors, each in request order
 * (Kafka's groups come out in Java HashMap order, which is unspecified). Kafka's metadata.version
 * check (SCRAM needs 3.5+) has no counterpart: krill's metadata always supports SCRAM.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes, timingSafeEqual } from 'node:crypto';
import { ErrorCode } from '../../protocol/errors';
import { ScramMechanismType, type MetadataRecord, type UserScramCredentialRecordData } from '../metadata-records';

/** One SCRAM mechanism (Kafka's ScramMechanism: type byte, hash, iteration bounds). */
export interface ScramMechanismInfo {
  /** The SASL name: 'SCRAM-SHA-256' or 'SCRAM-SHA-512'. */
  readonly mechanismName: string;
  /** The record / API type byte (ScramMechanismType). */
  readonly type: number;
  /** node:crypto's digest name. */
  readonly hash: 'sha256' | 'sha512';
  /** Digest length in bytes (also the salted password's length). */
  readonly keyLength: number;
  readonly minIterations: number;
  readonly maxIterations: number;
  /** Java's enum name, as Kafka's messages print the mechanism: SCRAM_SHA_256. */
  readonly javaName: string;
}

export const SCRAM_SHA_256: ScramMechanismInfo = {
  mechanismName: 'SCRAM-SHA-256',
  type: ScramMechanismType.SCRAM_SHA_256,
  hash: 'sha256',
  keyLength: 32,
  minIterations: 4096,
  maxIterations: 16384,
  javaName: 'SCRAM_SHA_256',
};

export const SCRAM_SHA_512: ScramMechanismInfo = {
  mechanismName: 'SCRAM-SHA-512',
  type: ScramMechanismType.SCRAM_SHA_512,
  hash: 'sha512',
  keyLength: 64,
  minIterations: 4096,
  maxIterations: 16384,
  javaName: 'SCRAM_SHA_512',
};

export const SCRAM_MECHANISMS: readonly ScramMechanismInfo[] = [SCRAM_SHA_256, SCRAM_SHA_512];

/** Kafka's ScramControlManager.MAX_ITERATIONS. */
export const MAX_SCRAM_ITERATIONS = 16384;

export function scramMechanismByName(name: string): ScramMechanismInfo | undefined {
  return SCRAM_MECHANISMS.find((m) => m.mechanismName === name);
}

export function scramMechanismByType(type: number): ScramMechanismInfo | undefined {
  return SCRAM_MECHANISMS.find((m) => m.type === type);
}

// ---------------------------------------------------------------------------------------------
// RFC 5802 section 3 (Kafka's ScramFormatter)

export function scramHmac(m: ScramMechanismInfo, key: Buffer, data: Buffer | string): Buffer {
  return createHmac(m.hash, key).update(data).digest();
}

export function scramHash(m: ScramMechanismInfo, data: Buffer): Buffer {
  return createHash(m.hash).update(data).digest();
}

export function scramXor(a: Buffer, b: Buffer): Buffer {
  if (a.length !== b.length) throw new RangeError('Argument arrays must be of the same length');
  const out = Buffer.allocUnsafe(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i] ^ b[i];
  return out;
}

/** SaltedPassword := Hi(Normalize(password), salt, i); Hi is PBKDF2 with the mechanism's HMAC. Normalize is UTF-8, as Kafka's. */
export function saltedPassword(m: ScramMechanismInfo, password: string, salt: Buffer, iterations: number): Buffer {
  return pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, m.keyLength, m.hash);
}

/** ClientKey := HMAC(SaltedPassword, "Client Key"). */
export function clientKey(m: ScramMechanismInfo, salted: Buffer): Buffer {
  return scramHmac(m, salted, 'Client Key');
}

/** StoredKey := H(ClientKey). */
export function storedKey(m: ScramMechanismInfo, key: Buffer): Buffer {
  return scramHash(m, key);
}

/** ServerKey := HMAC(SaltedPassword, "Server Key"). */
export function serverKey(m: ScramMechanismInfo, salted: Buffer): Buffer {
  return scramHmac(m, salted, 'Server Key');
}

/** Constant-time equality of two keys or signatures (Java's MessageDigest.isEqual). */
export function scramEqual(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * Kafka's ScramFormatter.secureRandomString: a 130-bit random number in base 36 (nonces, and as
 * UTF-8 bytes the salt Kafka's tools generate).
 */
export function secureRandomString(): string {
  const bytes = randomBytes(17);
  bytes[0] &= 0x03; // 136 bits -> 130
  return BigInt(`0x${bytes.toString('hex')}`).toString(36);
}

/** The record for a credential given its salted password (Kafka's finishUpsertion / ScramParser.toRecord). */
export function scramCredentialRecord(m: ScramMechanismInfo, name: string, salt: Buffer, salted: Buffer, iterations: number): UserScramCredentialRecordData {
  return {
    name,
    mechanism: m.type,
    salt: Buffer.from(salt),
    storedKey: storedKey(m, clientKey(m, salted)),
    serverKey: serverKey(m, salted),
    iterations,
  };
}

// ---------------------------------------------------------------------------------------------
// AlterUserScramCredentials on the controller

export interface ScramCredentialDeletion {
  name: string;
  mechanism: number;
}

export interface ScramCredentialUpsertion {
  name: string;
  mechanism: number;
  iterations: number;
  salt: Buffer;
  saltedPassword: Buffer;
}

/** One user's outcome (AlterUserScramCredentialsResult). */
export interface ScramAlterationResult {
  user: string;
  errorCode: number;
  errorMessage: string | null;
}

export interface ScramControlManagerOptions {
  /** Whether the controller's image has `user`'s credential for this mechanism type. */
  exists: (user: string, mechanism: number) => boolean;
}

interface ApiError {
  code: number;
  message: string | null;
}

const DUPLICATE: ApiError = { code: ErrorCode.DUPLICATE_RESOURCE, message: 'A user credential cannot be altered twice in the same request' };

/** Kafka's validateScramUsernameAndMechanism. */
function validateNameAndMechanism(name: string, mechanism: number): ApiError | null {
  if (name === '') return { code: ErrorCode.UNACCEPTABLE_CREDENTIAL, message: 'Username must not be empty' };
  if (!scramMechanismByType(mechanism)) return { code: ErrorCode.UNSUPPORTED_SASL_MECHANISM, message: 'Unknown SCRAM mechanism' };
  return null;
}

export class ScramControlManager {
  constructor(private readonly opts: ScramControlManagerOptions) {}

  /** Kafka's alterCredentials: the records to commit (atomically) and one result per user. */
  alterCredentials(
    deletions: readonly ScramCredentialDeletion[],
    upsertions: readonly ScramCredentialUpsertion[],
  ): { records: MetadataRecord[]; results: ScramAlterationResult[] } {
    const toDelete = new Map<string, ScramCredentialDeletion>();
    const toUpsert = new Map<string, ScramCredentialUpsertion>();
    const errors = new Map<string, ApiError>();
    for (const d of deletions) {
      if (errors.has(d.name)) continue;
      if (toDelete.delete(d.name)) {
        errors.set(d.name, DUPLICATE);
        continue;
      }
      const err = this.validateDeletion(d);
      if (err) errors.set(d.name, err);
      else toDelete.set(d.name, d);
    }
    for (const u of upsertions) {
      if (errors.has(u.name)) continue;
      if (toDelete.delete(u.name) || toUpsert.delete(u.name)) {
        errors.set(u.name, DUPLICATE);
        continue;
      }
      const err = validateUpsertion(u);
      if (err) errors.set(u.name, err);
      else toUpsert.set(u.name, u);
    }
    const records: MetadataRecord[] = [];
    const results: ScramAlterationResult[] = [];
    for (const d of toDelete.values()) {
      results.push({ user: d.name, errorCode: ErrorCode.NONE, errorMessage: null });
      records.push({ type: 'RemoveUserScramCredentialRecord', data: { name: d.name, mechanism: d.mechanism } });
    }
    for (const u of toUpsert.values()) {
      if (u.saltedPassword.length === 0) {
        errors.set(u.name, { code: ErrorCode.UNKNOWN_SERVER_ERROR, message: null });
        continue;
      }
      const m = scramMechanismByType(u.mechanism)!;
      records.push({ type: 'UserScramCredentialRecord', data: scramCredentialRecord(m, u.name, u.salt, u.saltedPassword, u.iterations) });
      results.push({ user: u.name, errorCode: ErrorCode.NONE, errorMessage: null });
    }
    for (const [user, e] of errors) results.push({ user, errorCode: e.code, errorMessage: e.message });
    return { records, results };
  }

  private validateDeletion(d: ScramCredentialDeletion): ApiError | null {
    const err = validateNameAndMechanism(d.name, d.mechanism);
    if (err) return err;
    if (!this.opts.exists(d.name, d.mechanism)) {
      return { code: ErrorCode.RESOURCE_NOT_FOUND, message: 'Attempt to delete a user credential that does not exist' };
    }
    return null;
  }
}

/** Kafka's validateUpsertion. */
function validateUpsertion(u: ScramCredentialUpsertion): ApiError | null {
  const err = validateNameAndMechanism(u.name, u.mechanism);
  if (err) return err;
  const m = scramMechanismByType(u.mechanism)!;
  if (u.iterations < m.minIterations) return { code: ErrorCode.UNACCEPTABLE_CREDENTIAL, message: 'Too few iterations' };
  if (u.iterations > MAX_SCRAM_ITERATIONS) return { code: ErrorCode.UNACCEPTABLE_CREDENTIAL, message: 'Too many iterations' };
  return null;
}
