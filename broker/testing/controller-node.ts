/**
 * Controller-listener handler tests' controller node: a ControllerServer alone (node 3000,
 * process.roles=controller, one CONTROLLER listener on a free port of 127.0.0.1, quiet logs) with
 * its metadata log in a directory the test owns, so that a restart on the same directory replays
 * it (requests go through a DispatchClient on its CONTROLLER listener); the versions the
 * controller's handlers advertise; and BrokerRegistration / BrokerHeartbeat bodies as a broker
 * sends them.
 */
import { supportedFeatureRecords } from '../../metadata/features';
import { ControllerServer, type ControllerServerOptions } from '../controller/controller-server';
import { CONTROLLER_HANDLERS } from '../controller/handlers';
import type { ConfigInput } from '../../config/kafka-config';

export interface TestControllerOptions extends Omit<ControllerServerOptions, 'props'> {
  /** Config over the node's own (process.roles, node.id, listeners, controller.listener.names, log.dirs). */
  props?: Readonly<Record<string, ConfigInput>>;
}

/** A controller node whose metadata log lives in `logDir`. */
export function startTestController(logDir: string, opts: TestControllerOptions = {}): Promise<ControllerServer> {
  const { props, ...rest } = opts;
  return ControllerServer.start({
    logLevel: 'error',
    ...rest,
    props: {
      'process.roles': 'controller',
      'node.id': '3000',
      listeners: 'CONTROLLER://127.0.0.1:0',
      'controller.listener.names': 'CONTROLLER',
      'log.dirs': logDir,
      ...props,
    },
  });
}

/** Every version the controller listener advertises for `apiKey`. */
export function controllerVersions(apiKey: number): number[] {
  const h = CONTROLLER_HANDLERS.find((x) => x.apiKey === apiKey);
  if (!h) throw new Error(`no controller handler for API key ${apiKey}`);
  return Array.from({ length: h.maxVersion - h.minVersion + 1 }, (_, i) => h.minVersion + i);
}

/** BrokerRegistration (62) for broker `brokerId` with one PLAINTEXT listener on `port` and krill's feature ranges. */
export function brokerRegistration(controller: ControllerServer, brokerId: number, port: number) {
  return {
    brokerId,
    clusterId: controller.clusterId,
    incarnationId: `AAAAAAAAAAAAAAAAAAAA${String(brokerId).padStart(2, 'A')}`,
    listeners: [{ name: 'PLAINTEXT', host: '127.0.0.1', port, securityProtocol: 0 }],
    features: supportedFeatureRecords(),
    rack: null,
  };
}

/** BrokerHeartbeat (63) of a running broker, caught up to `currentMetadataOffset` (default: the controller's last committed offset). */
export function brokerHeartbeat(controller: ControllerServer, brokerId: number, brokerEpoch: bigint, currentMetadataOffset = controller.controller.lastCommittedOffset) {
  return { brokerId, brokerEpoch, currentMetadataOffset, wantFence: false, wantShutDown: false };
}
