import { ErrorCode, KafkaError } from '../protocol/errors';
import { DEFAULT_INTERVAL_MS, parseSubscription, validateClientMetricsConfigs } from './client-metrics-configs';

const configs = (o: Record<string, string>) => new Map(Object.entries(o));

function failure(name: string, o: Record<string, string>): { code: number; message: string } {
  try {
    validateClientMetricsConfigs(name, configs(o));
  } catch (err) {
    expect(err).toBeInstanceOf(KafkaError);
    return { code: (err as KafkaError).code, message: (err as Error).message };
  }
  throw new Error('accepted');
}

describe('client-metrics subscription configs (ClientMetricsConfigs)', () => {
  test('parses metrics, interval.ms and match with Kafka list parsing and defaults', () => {
    const s = parseSubscription('sub', configs({ metrics: ' org.apache.kafka.producer. , org.apache.kafka.consumer.', 'interval.ms': '1000', match: 'client_id=app-.*, client_software_name=librdkafka' }));
    expect([...s.metrics]).toEqual(['org.apache.kafka.producer.', 'org.apache.kafka.consumer.']);
    expect(s.intervalMs).toBe(1000);
    expect([...s.match.keys()]).toEqual(['client_id', 'client_software_name']);
    expect(s.match.get('client_id')!.test('app-1')).toBe(true);
    // Matcher.matches(): the whole value.
    expect(s.match.get('client_id')!.test('my-app-1')).toBe(false);
    const d = parseSubscription('sub', configs({ metrics: '' }));
    expect(d.metrics.size).toBe(0);
    expect(d.intervalMs).toBe(DEFAULT_INTERVAL_MS);
    expect(d.match.size).toBe(0);
  });

  test("Kafka's errors: empty name and unknown key INVALID_REQUEST, bad int INVALID_CONFIG, interval range INVALID_REQUEST", () => {
    expect(failure('', { metrics: '*' })).toEqual({ code: ErrorCode.INVALID_REQUEST, message: "Subscription name can't be empty" });
    expect(failure('s', { metric: '*' })).toEqual({ code: ErrorCode.INVALID_REQUEST, message: 'Unknown client metrics configuration: metric' });
    expect(failure('s', { 'interval.ms': 'soon' })).toEqual({ code: ErrorCode.INVALID_CONFIG, message: 'Invalid value soon for configuration interval.ms: Not a number of type INT' });
    expect(failure('s', { 'interval.ms': '99' })).toEqual({
      code: ErrorCode.INVALID_REQUEST,
      message: 'Invalid value 99 for interval.ms, interval must be between 100 and 3600000 (1 hour)',
    });
    expect(failure('s', { 'interval.ms': '3600001' }).code).toBe(ErrorCode.INVALID_REQUEST);
    expect(() => validateClientMetricsConfigs('s', configs({ 'interval.ms': '100' }))).not.toThrow();
    expect(() => validateClientMetricsConfigs('s', configs({ 'interval.ms': '3600000' }))).not.toThrow();
  });

  test('match patterns: selector=regex with a known selector and a valid regex, else INVALID_CONFIG', () => {
    for (const bad of ['client_id', 'client_id=', 'client_id=a=b', 'user=x', 'client_id=(']) {
      expect(failure('s', { match: bad })).toEqual({ code: ErrorCode.INVALID_CONFIG, message: `Illegal client matching pattern: ${bad}` });
    }
    for (const sel of ['client_instance_id', 'client_id', 'client_software_name', 'client_software_version', 'client_source_address', 'client_source_port']) {
      expect(() => validateClientMetricsConfigs('s', configs({ match: `${sel}=.*` }))).not.toThrow();
    }
  });
});
