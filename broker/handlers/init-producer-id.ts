/**
 * InitProducerId (22), v0-5, for idempotent (non-transactional) producers.
 * transactional_id null: a fresh producer id from this broker's block (allocated by the controller,
 * AllocateProducerIds, 1000 ids per block) with epoch 0. This is also Kafka's answer when the request
 * carries an existing producer id/epoch (v3+, KIP-360): for a null transactional id Kafka's
 * TransactionCoordinator blindly hands out a new id; an idempotent producer bumps its epoch itself
 * (client side) and asks for a new id only when the epoch would overflow. producer_id and
 * producer_epoch must be both set or both unset (-1), else INVALID_REQUEST, as Kafka checks.
 * transactional_id set: krill has no transaction coordinator yet, so this is answered with
 * COORDINATOR_NOT_AVAILABLE (what FindCoordinator(TRANSACTION) answers too); an empty
 * transactional_id is INVALID_REQUEST, as Kafka's coordinator answers it.
 * Not implemented: the transactional path (epoch bumps/fencing with PRODUCER_FENCED,
 * transaction.max.timeout.ms checks, __transaction_state).
 */
import { ErrorCode, KafkaError } from '../../protocol/errors';
import type { InitProducerIdRequest, InitProducerIdResponse } from '../../protocol/generated/init-producer-id';
import type { Broker } from '../broker';
import { ProducerIdManager } from '../coordinator/producer/producer-id-manager';
import { defineHandler } from './define-handler';

const managers = new WeakMap<Broker, ProducerIdManager>();

function managerFor(broker: Broker): ProducerIdManager {
  let m = managers.get(broker);
  if (!m) {
    m = new ProducerIdManager(broker.controller, broker.nodeId, () => broker.metadata.broker(broker.nodeId)?.epoch ?? -1n);
    managers.set(broker, m);
  }
  return m;
}

const fail = (errorCode: number): InitProducerIdResponse => ({ throttleTimeMs: 0, errorCode, producerId: -1n, producerEpoch: -1 });

export const initProducerIdHandler = defineHandler<InitProducerIdRequest, InitProducerIdResponse>({
  apiKey: 22,
  name: 'InitProducerId',
  minVersion: 0,
  maxVersion: 5,
  async handle(broker, _ctx, req) {
    const pidSet = req.producerId !== -1n;
    const epochSet = req.producerEpoch !== -1;
    if (pidSet !== epochSet) return fail(ErrorCode.INVALID_REQUEST);
    if (req.transactionalId !== null) {
      return fail(req.transactionalId === '' ? ErrorCode.INVALID_REQUEST : ErrorCode.COORDINATOR_NOT_AVAILABLE);
    }
    try {
      const producerId = await managerFor(broker).generateProducerId();
      return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, producerId, producerEpoch: 0 };
    } catch (e) {
      broker.logger.warn('producer id allocation failed', { err: e });
      // Kafka's RPCProducerIdManager answers a missing block with a retriable error.
      return fail(e instanceof KafkaError && e.code === ErrorCode.NOT_CONTROLLER ? ErrorCode.NOT_CONTROLLER : ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
    }
  },
});
