/**
 * The subscription id of a client's telemetry subscription, computed as Kafka's
 * ClientMetricsManager.computeSubscriptionId does: the CRC32C of the UTF-8 bytes of
 * `metrics.toString() + pushIntervalMs`, as an int32, XOR the client instance id's hashCode.
 *
 * `metrics.toString()` is that of a java.util.HashSet, so its order is the HashSet's iteration
 * order: by bucket (String.hashCode spread by `h ^ (h >>> 16)`, masked to the table size, which
 * starts at 16 and doubles whenever the set grows past 3/4 of it), then by insertion within a
 * bucket. Strings sharing a bucket keep the order given here; Kafka's insertion order there
 * depends on its ConcurrentHashMap of subscriptions, so in that case alone the id may differ from
 * the one a Kafka broker would hand out. A client only ever echoes the id back to the broker that
 * gave it, so an id is correct as long as it is stable for the same subscription, which it is.
 */
import { crc32c } from '../../protocol/records/crc32c';
import { uuidToBuffer } from '../../protocol/primitives/uuid';

/** java.lang.String.hashCode (UTF-16 code units). */
export function javaStringHash(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** java.util.HashSet<String>.toString() of a set built by adding `items` in order. */
export function javaHashSetToString(items: Iterable<string>): string {
  const unique = [...new Set(items)];
  let capacity = 16;
  while (unique.length > capacity * 0.75) capacity *= 2;
  const bucket = (s: string): number => {
    const h = javaStringHash(s);
    return (h ^ (h >>> 16)) & (capacity - 1);
  };
  const ordered = unique.map((s, i) => ({ s, i, b: bucket(s) })).sort((x, y) => x.b - y.b || x.i - y.i);
  return `[${ordered.map((e) => e.s).join(', ')}]`;
}

/** org.apache.kafka.common.Uuid.hashCode of a krill (base64url) UUID. */
export function kafkaUuidHash(uuid: string): number {
  const b = uuidToBuffer(uuid);
  return b.readInt32BE(0) ^ b.readInt32BE(4) ^ b.readInt32BE(8) ^ b.readInt32BE(12);
}

export function computeSubscriptionId(metrics: Iterable<string>, pushIntervalMs: number, clientInstanceId: string): number {
  const crc = crc32c(Buffer.from(javaHashSetToString(metrics) + String(pushIntervalMs), 'utf8'));
  return (crc | 0) ^ kafkaUuidHash(clientInstanceId);
}
