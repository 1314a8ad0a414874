/**
 * Kafka's FetchMetadata rules for the session fields of a Fetch request (KIP-227), shared by the
 * leader's session cache (broker/fetch-session.ts) and the follower's session (replication/
 * replica-fetcher.ts): epoch 0 opens a session with a full request, epoch -1 is a full request
 * without one, any other epoch is an incremental request at exactly that epoch; a session's epoch
 * advances by one per served request and wraps after Int32 max to 1. Session id 0 is no session.
 */
export const INITIAL_EPOCH = 0;
export const FINAL_EPOCH = -1;
export const INVALID_SESSION_ID = 0;

/** The epoch after `epoch` (FINAL_EPOCH stays final). */
export function nextEpoch(epoch: number): number {
  if (epoch < 0) return FINAL_EPOCH;
  return epoch === 0x7fffffff ? 1 : epoch + 1;
}
