/**
 * Which KRaft node configurations krill can run, checked before a node starts
 * (`checkQuorumSupport`), so that a Kafka `server.properties` krill cannot honour stops startup with
 * a clear error instead of starting something else.
 *
 * krill runs one controller per cluster (the KRaft quorum is issue 16's open work), in one of three
 * shapes: a combined node (`process.roles=broker,controller`, its controller in-process), a
 * controller node (`process.roles=controller`, ControllerServer) and cluster brokers
 * (`process.roles=broker`) that follow it through `controller.quorum.bootstrap.servers` or a
 * one-entry `controller.quorum.voters`. Kafka's own KRaft rules come first, with Kafka's messages
 * (KafkaConfig.validateValues): a controller must be among the voters, a broker must not be, and a
 * broker needs voters or bootstrap servers. Then krill's limit: more than one voter (or, for a
 * controller, more than one bootstrap server, Kafka's dynamic quorum) is a quorum, refused with a
 * message that says so.
 *
 * Invariants: pure (reads the config, throws ConfigException naming the property); a config that
 * passes starts the node it describes; an empty `controller.quorum.voters` on a combined node is
 * krill's default (`npx krill`) and passes.
 */
import { ConfigException } from '../config/config-types';
import type { KafkaConfig } from '../config/kafka-config';
import { QUORUM_VOTERS_CONFIG, parseVoterConnections } from '../metadata/raft/quorum-config';

const BOOTSTRAP_SERVERS_CONFIG = 'controller.quorum.bootstrap.servers';

/** What the roles make of this node. */
export type NodeKind = 'combined' | 'controller' | 'broker';

export function nodeKind(config: KafkaConfig): NodeKind {
  const roles = new Set(config.processRoles());
  if (roles.has('controller')) return roles.has('broker') ? 'combined' : 'controller';
  return 'broker';
}

const setOf = (ids: Iterable<number>): string => `Set(${[...ids].join(', ')})`;

/** Throws ConfigException when krill cannot run the node `config` describes. */
export function checkQuorumSupport(config: KafkaConfig): NodeKind {
  const kind = nodeKind(config);
  const nodeId = config.nodeId;
  const voters = parseVoterConnections(config.getList(QUORUM_VOTERS_CONFIG) ?? [], false);
  const bootstrap = (config.getList(BOOTSTRAP_SERVERS_CONFIG) ?? []).map((s) => s.trim()).filter((s) => s !== '');
  const quorum = `krill runs a single controller per cluster, not a KRaft controller quorum yet`;

  if (kind === 'broker') {
    if (voters.size === 0 && bootstrap.length === 0) {
      throw new ConfigException(
        `If using process.roles, either ${BOOTSTRAP_SERVERS_CONFIG} must contain the set of bootstrap controllers or ${QUORUM_VOTERS_CONFIG} must contain a parseable set of controllers.`,
        BOOTSTRAP_SERVERS_CONFIG,
      );
    }
    if (voters.has(nodeId)) {
      throw new ConfigException(
        `If process.roles contains just the 'broker' role, the node id ${nodeId} must not be included in the set of voters ${QUORUM_VOTERS_CONFIG}=${setOf(voters.keys())}`,
        QUORUM_VOTERS_CONFIG,
      );
    }
    if (bootstrap.length === 0 && voters.size > 1) {
      throw new ConfigException(
        `${QUORUM_VOTERS_CONFIG} names ${voters.size} controllers (${setOf(voters.keys())}): ${quorum}, so a broker follows one controller. ` +
          `Name only that controller in ${QUORUM_VOTERS_CONFIG}, or give its address in ${BOOTSTRAP_SERVERS_CONFIG}.`,
        QUORUM_VOTERS_CONFIG,
      );
    }
    return kind;
  }

  // A controller (alone or combined with a broker).
  if (voters.size > 0 && !voters.has(nodeId)) {
    throw new ConfigException(
      `If process.roles contains the 'controller' role, the node id ${nodeId} must be included in the set of voters ${QUORUM_VOTERS_CONFIG}=${setOf(voters.keys())}`,
      QUORUM_VOTERS_CONFIG,
    );
  }
  if (voters.size > 1) {
    throw new ConfigException(
      `${QUORUM_VOTERS_CONFIG} names ${voters.size} voters (${setOf(voters.keys())}): ${quorum}, so node ${nodeId} cannot take part in one. ` +
        `Give ${QUORUM_VOTERS_CONFIG} only this node (${nodeId}@host:port) or leave it empty.`,
      QUORUM_VOTERS_CONFIG,
    );
  }
  if (voters.size === 0 && bootstrap.length > 1) {
    throw new ConfigException(
      `${BOOTSTRAP_SERVERS_CONFIG} names ${bootstrap.length} controllers (a dynamic KRaft quorum, KIP-853): ${quorum}. ` +
        `Leave ${BOOTSTRAP_SERVERS_CONFIG} empty on the controller, or give ${QUORUM_VOTERS_CONFIG} only this node.`,
      BOOTSTRAP_SERVERS_CONFIG,
    );
  }
  return kind;
}
