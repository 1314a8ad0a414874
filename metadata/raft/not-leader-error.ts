/**
 * NotLeaderError: what a replicated-log write gets on a node that is not (or is no longer) the
 * leader of the epoch it was written in. Its own module so that code which only needs to recognise
 * it (the controller, through quorum-log.ts) does not load the raft core at start-up.
 */
export class NotLeaderError extends Error {
  constructor(
    readonly epoch: number,
    readonly leaderId: number,
  ) {
    super(`not the leader (epoch ${epoch}, leader ${leaderId})`);
    this.name = 'NotLeaderError';
  }
}
