/**
 * The controller listener's handler registry: the APIs a Kafka controller serves to brokers and
 * admin clients. ApiVersions on the controller listener is built from this list.
 */
import type { HandlerSpec } from '../handlers/define-handler';
import type { ControllerNode } from '../controller-server';
import { controllerApiVersionsHandler } from './api-versions';
import { alterPartitionHandler } from './alter-partition';
import { brokerHeartbeatHandler } from './broker-heartbeat';
import { brokerRegistrationHandler } from './broker-registration';
import { controllerDescribeClusterHandler } from './describe-cluster';
import { controllerFetchHandler } from './fetch';
import {
  controllerAllocateProducerIdsHandler,
  controllerAlterConfigsHandler,
  controllerCreatePartitionsHandler,
  controllerCreateTopicsHandler,
  controllerDeleteTopicsHandler,
  controllerElectLeadersHandler,
  controllerIncrementalAlterConfigsHandler,
} from './admin';

export const CONTROLLER_HANDLERS: readonly HandlerSpec<any, any, ControllerNode>[] = [
  controllerFetchHandler,
  controllerApiVersionsHandler,
  controllerCreateTopicsHandler,
  controllerDeleteTopicsHandler,
  controllerAlterConfigsHandler,
  controllerCreatePartitionsHandler,
  controllerElectLeadersHandler,
  controllerIncrementalAlterConfigsHandler,
  alterPartitionHandler,
  controllerDescribeClusterHandler,
  brokerRegistrationHandler,
  brokerHeartbeatHandler,
  controllerAllocateProducerIdsHandler,
];
