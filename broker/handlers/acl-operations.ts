/**
 * Authorized-operations bit sets (KIP-430). krill has no ACLs yet, so a client that asks is told
 * it may do everything a resource type supports. Bits are Kafka's AclOperation codes:
 * READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10,
 * ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12, CREATE_TOKENS 13, DESCRIBE_TOKENS 14.
 */
const bits = (...ops: number[]): number => ops.reduce((m, op) => m | (1 << op), 0);

/** Kafka's value when the client did not ask for authorized operations. */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;
export const TOPIC_ALL_OPERATIONS = bits(3, 4, 5, 6, 7, 8, 10, 11);
export const GROUP_ALL_OPERATIONS = bits(3, 6, 8);
export const CLUSTER_ALL_OPERATIONS = bits(5, 7, 8, 9, 10, 11, 12, 13, 14);
