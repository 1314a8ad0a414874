/**
 * Which __consumer_offsets partition owns a group: Kafka's `Utils.abs(groupId.hashCode()) %
 * offsets.topic.num.partitions`. The leader of that partition is the group's coordinator, so this
 * must match Kafka bit for bit (a client, a tool or a Kafka broker reading krill's log would
 * otherwise look for a group in the wrong place).
 *
 * Two Java details matter: String.hashCode works on UTF-16 code units with int32 overflow (JS
 * strings are UTF-16 too, so charCodeAt gives the same units), and Kafka's Utils.abs maps
 * Integer.MIN_VALUE to 0 and otherwise is Math.abs. That is not `h & 0x7fffffff` (Utils.toPositive,
 * used by the producer's partitioner): for negative hashes the two give different partitions.
 */

/** java.lang.String#hashCode. */
export function javaStringHashCode(s: string): number {
  let h = 0;
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0;
  return h;
}

/** org.apache.kafka.common.utils.Utils#abs. */
export function kafkaAbs(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n);
}

export function partitionForGroup(groupId: string, numPartitions: number): number {
  return kafkaAbs(javaStringHashCode(groupId)) % numPartitions;
}
