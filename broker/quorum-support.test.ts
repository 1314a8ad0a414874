/**
 * checkQuorumSupport: which KRaft node configurations krill runs (a combined node, a controller
 * alone or as one voter of a controller quorum,
 * brokers following one controller or a quorum's active controller) and the errors for the ones it cannot honour, with Kafka's
 * messages where Kafka has one.
 */
import { KafkaConfig } from '../config/kafka-config';
import { ConfigException } from '../config/config-types';
import { checkQuorumSupport, isCombinedQuorumVoter } from './quorum-support';

const config = (p: Record<string, string>) =>
  new KafkaConfig({ 'node.id': '1', 'broker.id': '1', 'log.dirs': '/tmp/krill-quorum-support', listeners: 'PLAINTEXT://:9092', ...p });

function refusal(p: Record<string, string>): ConfigException {
  try {
    checkQuorumSupport(config(p));
  } catch (err) {
    if (err instanceof ConfigException) return err;
    throw err;
  }
  throw new Error('accepted');
}

test('the shapes krill runs', () => {
  expect(checkQuorumSupport(config({ 'process.roles': 'broker,controller' }))).toBe('combined');
  expect(checkQuorumSupport(config({ 'process.roles': 'broker,controller', 'controller.quorum.voters': '1@localhost:9093' }))).toBe('combined');
  expect(checkQuorumSupport(config({ 'process.roles': 'controller', 'controller.quorum.voters': '1@localhost:9093' }))).toBe('controller');
  // One voter of a static controller quorum.
  expect(checkQuorumSupport(config({ 'process.roles': 'controller', 'controller.quorum.voters': '1@a:9093,2@b:9093,3@c:9093' }))).toBe('controller');
  expect(checkQuorumSupport(config({ 'process.roles': 'broker', 'controller.quorum.voters': '3000@ctl:9093' }))).toBe('broker');
  expect(checkQuorumSupport(config({ 'process.roles': 'broker', 'controller.quorum.bootstrap.servers': 'ctl:9093,ctl2:9093' }))).toBe('broker');
  // A combined node as one voter of a quorum: its controller in-process, its broker following the active controller.
  const combinedVoter = config({ 'process.roles': 'broker,controller', 'controller.quorum.voters': '1@a:9093,2@b:9093,3@c:9093' });
  expect(checkQuorumSupport(combinedVoter)).toBe('combined');
  expect(isCombinedQuorumVoter(combinedVoter)).toBe(true);
  expect(isCombinedQuorumVoter(config({ 'process.roles': 'broker,controller', 'controller.quorum.voters': '1@a:9093' }))).toBe(false);
  // Brokers of a KRaft controller quorum: they follow its active controller.
  expect(checkQuorumSupport(config({ 'process.roles': 'broker', 'controller.quorum.voters': '3000@a:9093,3001@b:9093,3002@c:9093' }))).toBe('broker');
  expect(
    checkQuorumSupport(config({ 'process.roles': 'broker', 'controller.quorum.voters': '3000@a:9093,3001@b:9093', 'controller.quorum.bootstrap.servers': 'a:9093,b:9093' })),
  ).toBe('broker');
});

test('the quorum shapes krill does not run are refused, saying why', () => {
  const combined = refusal({ 'process.roles': 'broker,controller', 'controller.quorum.bootstrap.servers': 'a:9093,b:9093' });
  expect(combined.configName).toBe('controller.quorum.bootstrap.servers');
  expect(combined.message).toMatch(/^controller\.quorum\.bootstrap\.servers names 2 controllers \(a dynamic KRaft quorum, KIP-853\): krill runs dynamic quorums on controller-only nodes/);
  // A controller of a dynamic quorum (KIP-853) is a shape krill runs.
  expect(checkQuorumSupport(config({ 'process.roles': 'controller', 'controller.quorum.bootstrap.servers': 'a:9093,b:9093' }))).toBe('controller');
});

test("Kafka's own KRaft rules, with its messages", () => {
  expect(refusal({ 'process.roles': 'controller', 'controller.quorum.voters': '2@a:9093' }).message).toBe(
    "If process.roles contains the 'controller' role, the node id 1 must be included in the set of voters controller.quorum.voters=Set(2)",
  );
  expect(refusal({ 'process.roles': 'broker', 'controller.quorum.voters': '1@a:9093' }).message).toBe(
    "If process.roles contains just the 'broker' role, the node id 1 must not be included in the set of voters controller.quorum.voters=Set(1)",
  );
  expect(refusal({ 'process.roles': 'broker' }).message).toBe(
    'If using process.roles, either controller.quorum.bootstrap.servers must contain the set of bootstrap controllers or controller.quorum.voters must contain a parseable set of controllers.',
  );
});
