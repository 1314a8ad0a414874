import { ConnectionQuotas, type ConnectionQuotaConfig } from './connection-quotas';

const MAX = 0x7fffffff;

function quotas(over: Partial<ConnectionQuotaConfig> = {}, now = { t: 0 }) {
  const cfg: ConnectionQuotaConfig = {
    maxConnections: MAX,
    maxConnectionsPerIp: MAX,
    maxConnectionsPerIpOverrides: new Map(),
    maxConnectionCreationRate: MAX,
    listeners: new Map([
      ['CLIENT', { maxConnections: MAX, maxConnectionCreationRate: MAX }],
      ['INTERNAL', { maxConnections: MAX, maxConnectionCreationRate: MAX }],
    ]),
    interBrokerListenerName: 'INTERNAL',
    rate: { windowMs: 1000, samples: 2 },
    ...over,
  };
  return new ConnectionQuotas(cfg, { milliseconds: () => now.t });
}

describe('ConnectionQuotas', () => {
  test('per-IP limit and overrides; a rejection changes no count', () => {
    const q = quotas({ maxConnectionsPerIp: 2, maxConnectionsPerIpOverrides: new Map([['10.0.0.9', 1]]) });
    expect(q.admit('CLIENT', '10.0.0.1').kind).toBe('admitted');
    expect(q.admit('CLIENT', '10.0.0.1').kind).toBe('admitted');
    const r = q.admit('CLIENT', '10.0.0.1');
    expect(r).toEqual({ kind: 'rejected', reason: 'Rejected connection from 10.0.0.1, address already has the configured maximum of 2 connections.' });
    expect(q.countFor('10.0.0.1')).toBe(2);
    expect(q.totalCount).toBe(2);
    expect(q.admit('CLIENT', '10.0.0.9').kind).toBe('admitted');
    expect(q.admit('CLIENT', '10.0.0.9').kind).toBe('rejected');
    q.release('CLIENT', '10.0.0.1');
    expect(q.admit('CLIENT', '10.0.0.1').kind).toBe('admitted');
  });

  test('max.connections: no slot for ordinary listeners; the inter-broker listener is protected', () => {
    const q = quotas({ maxConnections: 1 });
    expect(q.slotAvailable('CLIENT')).toBe(true);
    q.admit('CLIENT', 'a');
    expect(q.slotAvailable('CLIENT')).toBe(false);
    expect(q.slotAvailable('INTERNAL')).toBe(true);
    q.admit('INTERNAL', 'b');
    expect(q.maxConnectionsExceeded('CLIENT')).toBe(true);
    expect(q.maxConnectionsExceeded('INTERNAL')).toBe(false);
  });

  test('with one listener, the inter-broker listener is not protected (Kafka\'s rule)', () => {
    const q = quotas({ maxConnections: 1, listeners: new Map([['INTERNAL', { maxConnections: MAX, maxConnectionCreationRate: MAX }]]) });
    q.admit('INTERNAL', 'a');
    expect(q.slotAvailable('INTERNAL')).toBe(false);
  });

  test('listener limits', () => {
    const q = quotas({ listeners: new Map([['CLIENT', { maxConnections: 1, maxConnectionCreationRate: MAX }]]) });
    q.admit('CLIENT', 'a');
    expect(q.slotAvailable('CLIENT')).toBe(false);
    q.release('CLIENT', 'a');
    expect(q.slotAvailable('CLIENT')).toBe(true);
  });

  test('creation rate: a throttle once above the rate, capped at one window', () => {
    const q = quotas({ maxConnectionCreationRate: 2 });
    expect(q.recordCreation('CLIENT')).toBe(0);
    expect(q.recordCreation('CLIENT')).toBe(0);
    const t = q.recordCreation('CLIENT');
    expect(t).toBeGreaterThan(0);
    expect(t).toBeLessThanOrEqual(1000);
    // the protected listener ignores the broker-wide rate
    expect(q.recordCreation('INTERNAL')).toBe(0);
  });

  test('IP connection rate: a throttled connection is un-recorded everywhere and not counted', () => {
    const q = quotas({ maxConnectionCreationRate: 3, ipConnectionRate: (a) => (a === '10.0.0.1' ? 1 : undefined) });
    q.recordCreation('CLIENT');
    expect(q.admit('CLIENT', '10.0.0.1').kind).toBe('admitted');
    q.recordCreation('CLIENT');
    const d = q.admit('CLIENT', '10.0.0.1');
    expect(d.kind).toBe('throttled');
    expect(q.countFor('10.0.0.1')).toBe(1);
    // The throttled one no longer counts against the broker rate: two more fit under 3/s.
    expect(q.recordCreation('CLIENT')).toBe(0);
    expect(q.admit('CLIENT', '10.0.0.2').kind).toBe('admitted');
  });
});
