/**
 * group.consumer.assignors resolution: short names and Kafka's class names, the default (uniform
 * then range, as Kafka 4.0), and the config errors.
 */
import { ConfigException } from '../../../config/config-types';
import { KafkaConfig } from '../../../config/kafka-config';
import { CONSUMER_GROUP_ASSIGNORS_DEFAULT, RANGE_ASSIGNOR_CLASS, UNIFORM_ASSIGNOR_CLASS } from './assignor';
import { consumerGroupAssignors, resolveConsumerGroupAssignors } from './assignors';
import { RangeAssignor } from './range-assignor';
import { UniformAssignor } from './uniform-assignor';

test('short names and class names resolve to the built-in assignors, in order', () => {
  const a = resolveConsumerGroupAssignors(['range', ' uniform ']);
  expect(a.map((x) => x.name())).toEqual(['range', 'uniform']);
  expect(a[0]).toBeInstanceOf(RangeAssignor);
  expect(a[1]).toBeInstanceOf(UniformAssignor);
  expect(resolveConsumerGroupAssignors([UNIFORM_ASSIGNOR_CLASS, RANGE_ASSIGNOR_CLASS]).map((x) => x.name())).toEqual(['uniform', 'range']);
});

test('the default is uniform then range', () => {
  expect(CONSUMER_GROUP_ASSIGNORS_DEFAULT).toEqual(['uniform', 'range']);
  const assignors = consumerGroupAssignors(new KafkaConfig({ 'log.dirs': '/tmp/krill-assignors' }));
  expect([...assignors.keys()]).toEqual(['uniform', 'range']);
});

test('the configured list is used, the first being the default', () => {
  const assignors = consumerGroupAssignors(new KafkaConfig({ 'log.dirs': '/tmp/krill-assignors', 'group.consumer.assignors': 'range' }));
  expect([...assignors.keys()]).toEqual(['range']);
});

test('unknown classes, empty lists and duplicates are config errors', () => {
  expect(() => resolveConsumerGroupAssignors(['com.example.MyAssignor'])).toThrow(ConfigException);
  expect(() => resolveConsumerGroupAssignors(['com.example.MyAssignor'])).toThrow(/group\.consumer\.assignors.*unknown assignor com\.example\.MyAssignor/);
  expect(() => resolveConsumerGroupAssignors([])).toThrow(/at least one assignor/);
  expect(() => resolveConsumerGroupAssignors(['uniform', UNIFORM_ASSIGNOR_CLASS])).toThrow(/listed twice/);
});
