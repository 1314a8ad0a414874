/**
 * The controller listener's handler registry: the APIs a Kafka controller serves to brokers and
 * admin clients. ApiVersions on the controller listener is built from this list.
 */
import type { HandlerSpec } from '../../handlers/define-handler';
import type { ControllerNode } from '../controller-server';
import { controllerApiVersionsHandler } from './api-versions';
import { alterPartitionHandler } from './alter-partition';
import { brokerHeartbeatHandler } from './broker-heartbeat';
import { brokerRegistrationHandler } from './broker-registration';
import { controllerDescribeClusterHandler } from './describe-cluster';
import { controllerFetchHandler } from './fetch';
import { controllerAllocateProducerIdsHandler } from './allocate-producer-ids';
import { controllerAlterClientQuotasHandler } from './alter-client-quotas';
import { controllerAlterConfigsHandler } from './alter-configs';
import { controllerAlterUserScramCredentialsHandler } from './alter-user-scram-credentials';
import { controllerCreateAclsHandler } from './create-acls';
import { controllerCreatePartitionsHandler } from './create-partitions';
import { controllerCreateTopicsHandler } from './create-topics';
import { controllerDeleteAclsHandler } from './delete-acls';
import { controllerDeleteTopicsHandler } from './delete-topics';
import { controllerDescribeAclsHandler } from './describe-acls';
import { controllerElectLeadersHandler } from './elect-leaders';
import { controllerAlterPartitionReassignmentsHandler } from './alter-partition-reassignments';
import { controllerListPartitionReassignmentsHandler } from './list-partition-reassignments';
import { controllerIncrementalAlterConfigsHandler } from './incremental-alter-configs';
import { controllerUpdateFeaturesHandler } from './update-features';
import { saslAuthenticateHandlerFor } from '../../handlers/sasl-authenticate';
import { saslHandshakeHandlerFor } from '../../handlers/sasl-handshake';

export const CONTROLLER_HANDLERS: readonly HandlerSpec<any, any, ControllerNode>[] = [
  controllerFetchHandler,
  controllerApiVersionsHandler,
  controllerCreateTopicsHandler,
  controllerDeleteTopicsHandler,
  controllerAlterConfigsHandler,
  controllerCreatePartitionsHandler,
  controllerElectLeadersHandler,
  controllerIncrementalAlterConfigsHandler,
  controllerAlterPartitionReassignmentsHandler,
  controllerListPartitionReassignmentsHandler,
  alterPartitionHandler,
  controllerDescribeClusterHandler,
  brokerRegistrationHandler,
  brokerHeartbeatHandler,
  controllerAllocateProducerIdsHandler,
  controllerAlterClientQuotasHandler,
  controllerDescribeAclsHandler,
  controllerCreateAclsHandler,
  controllerDeleteAclsHandler,
  controllerAlterUserScramCredentialsHandler,
  controllerUpdateFeaturesHandler,
  // SASL on the controller listener (the connection's authenticator does the work).
  saslHandshakeHandlerFor<ControllerNode>(),
  saslAuthenticateHandlerFor<ControllerNode>(),
];
