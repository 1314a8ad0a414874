/**
 * Kafka UUIDs (topic ids, directory ids) are 16 raw bytes on the wire and print as 22 characters of
 * unpadded base64url (Uuid.toString in Kafka). krill keeps them as that string: comparable with ===,
 * usable as a map key, and what Kafka's tools print.
 */
import { randomBytes } from 'node:crypto';

export const ZERO_UUID = 'AAAAAAAAAAAAAAAAAAAAAA';

/** Kafka's Uuid.METADATA_TOPIC_ID (0, 1): the topic id of `__cluster_metadata`. */
export const METADATA_TOPIC_ID = 'AAAAAAAAAAAAAAAAAAAAAQ';

export function uuidFromBuffer(buf: Buffer, offset = 0): string {
  return buf.toString('base64url', offset, offset + 16);
}

export function uuidToBuffer(uuid: string, out?: Buffer, offset = 0): Buffer {
  const raw = Buffer.from(uuid, 'base64url');
  if (raw.length !== 16) throw new Error(`invalid uuid ${JSON.stringify(uuid)}`);
  if (out) {
    raw.copy(out, offset);
    return out;
  }
  return raw;
}

/**
 * A random version-4 UUID that Kafka would accept as a topic id: never the zero UUID nor the
 * reserved METADATA_TOPIC_ID (1), and (as Kafka does) never one whose string starts with '-'.
 */
export function randomUuid(): string {
  for (;;) {
    const b = randomBytes(16);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const s = uuidFromBuffer(b);
    if (!s.startsWith('-') && s !== ZERO_UUID && s !== METADATA_TOPIC_ID) return s;
  }
}

export function isUuid(s: string): boolean {
  return s.length === 22 && Buffer.from(s, 'base64url').length === 16;
}
