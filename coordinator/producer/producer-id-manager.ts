/**
 * Hands out producer ids to InitProducerId from blocks the controller allocates to this broker
 * (Kafka's RPCProducerIdManager with AllocateProducerIds, KIP-730; ControllerApi, so in-process on
 * a combined node and over the protocol on a cluster broker): one block of `blockSize` ids
 * at a time, the next block fetched when the current one is used up. Calls are serialized, so two
 * concurrent requests never get the same id, and a block is never fetched twice for one need.
 */
import type { ControllerApi } from '../../metadata/controller/controller';

export const PRODUCER_ID_BLOCK_SIZE = 1000;

export class ProducerIdManager {
  private next = 0n;
  private end = 0n;
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly controller: ControllerApi,
    private readonly brokerId: number,
    private readonly brokerEpoch: () => bigint,
    private readonly blockSize = PRODUCER_ID_BLOCK_SIZE,
  ) {}

  generateProducerId(): Promise<bigint> {
    const run = async (): Promise<bigint> => {
      if (this.next >= this.end) {
        const block = await this.controller.allocateProducerIds(this.brokerId, this.brokerEpoch(), this.blockSize);
        this.next = block.first;
        this.end = block.first + BigInt(block.size);
      }
      return this.next++;
    };
    const p = this.chain.then(run, run);
    this.chain = p.catch(() => undefined);
    return p;
  }
}
