/**
 * Coordinator gauges, read from the coordinators at scrape time:
 *   kafka_coordinator_group_groupmetadatamanager_numgroups, _numoffsets, _numgroupsstable,
 *     _numgroupspreparingrebalance, _numgroupscompletingrebalance, _numgroupsempty, _numgroupsdead
 *     (kafka.coordinator.group:type=GroupMetadataManager, Strimzi's kafka_coordinator_$1_$2_$3 rule)
 *     (NumGroups counts classic and KIP-848 consumer groups, the state gauges classic ones, as Kafka
 *     4.0's GroupCoordinatorMetrics)
 *   kafka_server_group_coordinator_metrics_group_count{protocol}   groups by protocol, classic|consumer
 *   kafka_server_group_coordinator_metrics_consumer_group_count{state}   KIP-848 consumer groups by
 *     state, empty|assigning|reconciling|stable|dead (Kafka's group-count / consumer-group-count)
 *   kafka_server_group_coordinator_metrics_num_partitions{state}   __consumer_offsets partitions
 *     coordinated here, state loading|active|failed (Kafka's group-coordinator-metrics num-partitions)
 *   kafka_server_transaction_coordinator_metrics_num_partitions{state}  the same for
 *     __transaction_state (krill's twin of the group one: Kafka 4.0's transaction coordinator has
 *     no such gauge), and kafka_server_transaction_coordinator_metrics_num_transactional_ids.
 * krill never leaves a coordinator partition failed (a failed load is retried), so `failed` is 0.
 */
import type { Registry } from 'prom-client';
import { collectedGauge } from './collected';
import type { GroupCoordinator } from '../../coordinator/group/group-coordinator';
import type { TransactionCoordinator } from '../../coordinator/transaction/transaction-coordinator';
import type { ClassicGroupState } from '../../coordinator/group/classic-group';

const GROUP_STATE_METRICS: readonly [string, ClassicGroupState][] = [
  ['numgroupsstable', 'Stable'],
  ['numgroupspreparingrebalance', 'PreparingRebalance'],
  ['numgroupscompletingrebalance', 'CompletingRebalance'],
  ['numgroupsempty', 'Empty'],
  ['numgroupsdead', 'Dead'],
];

const CONSUMER_GROUP_STATES = ['empty', 'assigning', 'reconciling', 'stable', 'dead'];

export function registerCoordinatorMetrics(registry: Registry, groups: GroupCoordinator, txns: TransactionCoordinator): void {
  const gmm = (name: string, help: string, value: () => number) =>
    collectedGauge(registry, `kafka_coordinator_group_groupmetadatamanager_${name}`, `${help} (kafka.coordinator.group:type=GroupMetadataManager).`, [], (set) => set({}, value()));
  gmm('numgroups', 'NumGroups: groups coordinated here', () => groups.groupManager.groups.size + groups.consumerGroups.groups.size);
  gmm('numoffsets', 'NumOffsets: committed offsets held here', () => {
    let n = 0;
    for (const g of groups.offsetManager.groupIds()) for (const t of groups.offsetManager.fetchOffsets(g, null, false)) n += t.partitions.length;
    return n;
  });
  for (const [name, state] of GROUP_STATE_METRICS) {
    gmm(name, `NumGroups${state}: groups in state ${state}`, () => {
      let n = 0;
      for (const g of groups.groupManager.groups.values()) if (g.is(state)) n++;
      return n;
    });
  }
  collectedGauge(registry, 'kafka_server_group_coordinator_metrics_group_count', 'Groups coordinated here, by protocol (kafka.server:type=group-coordinator-metrics, group-count).', ['protocol'], (set) => {
    set({ protocol: 'classic' }, groups.groupManager.groups.size);
    set({ protocol: 'consumer' }, groups.consumerGroups.groups.size);
  });
  collectedGauge(
    registry,
    'kafka_server_group_coordinator_metrics_consumer_group_count',
    'KIP-848 consumer groups coordinated here, by state (kafka.server:type=group-coordinator-metrics, consumer-group-count).',
    ['state'],
    (set) => {
      const counts = new Map<string, number>(CONSUMER_GROUP_STATES.map((st) => [st, 0]));
      for (const g of groups.consumerGroups.groups.values()) {
        const st = g.state.toLowerCase();
        counts.set(st, (counts.get(st) ?? 0) + 1);
      }
      for (const [state, n] of counts) set({ state }, n);
    },
  );
  collectedGauge(
    registry,
    'kafka_server_group_coordinator_metrics_num_partitions',
    '__consumer_offsets partitions coordinated here, by state (kafka.server:type=group-coordinator-metrics, num-partitions).',
    ['state'],
    (set) => {
      const s = groups.partitionStates();
      set({ state: 'loading' }, s.loading);
      set({ state: 'active' }, s.active);
      set({ state: 'failed' }, 0);
    },
  );
  collectedGauge(registry, 'kafka_server_transaction_coordinator_metrics_num_partitions', '__transaction_state partitions coordinated here, by state.', ['state'], (set) => {
    const s = txns.stateManager.partitionStates();
    set({ state: 'loading' }, s.loading);
    set({ state: 'active' }, s.active);
    set({ state: 'failed' }, 0);
  });
  collectedGauge(registry, 'kafka_server_transaction_coordinator_metrics_num_transactional_ids', 'Transactional ids coordinated here.', [], (set) =>
    set({}, txns.stateManager.partitionStates().transactionalIds),
  );
}
