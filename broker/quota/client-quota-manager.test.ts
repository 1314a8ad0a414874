import { ClientQuotaManager, resolveQuota, type ClientQuotaSource } from './client-quota-manager';

/** Entities written as Kafka's config paths: 'users/alice/clients/app', 'users/<default>', 'clients/app'. */
function source(entries: Record<string, number>): ClientQuotaSource {
  return {
    quotaValue(entity, key) {
      if (key !== 'producer_byte_rate') return undefined;
      const part = (v: string | null | undefined) => (v === null ? '<default>' : v);
      const path = [entity.user !== undefined ? `users/${part(entity.user)}` : '', entity.clientId !== undefined ? `clients/${part(entity.clientId)}` : '']
        .filter(Boolean)
        .join('/');
      return entries[path];
    },
  };
}

describe('resolveQuota: Kafka precedence (KIP-55)', () => {
  const all = {
    'users/alice/clients/app': 1,
    'users/alice/clients/<default>': 2,
    'users/alice': 3,
    'users/<default>/clients/app': 4,
    'users/<default>/clients/<default>': 5,
    'users/<default>': 6,
    'clients/app': 7,
    'clients/<default>': 8,
  };
  const order = Object.keys(all);
  test.each(order.map((k, i) => [k, i]))('level %s wins over every later level', (k, i) => {
    const entries: Record<string, number> = {};
    for (const later of order.slice(i as number)) entries[later] = all[later as keyof typeof all];
    expect(resolveQuota(source(entries), 'producer_byte_rate', 'alice', 'app')?.bound).toBe(all[k as keyof typeof all]);
  });

  test('who shares a rate: the pair, the user, or the client id', () => {
    expect(resolveQuota(source({ 'users/alice/clients/app': 1 }), 'producer_byte_rate', 'alice', 'app')!.rateKey).toBe('alice\0app');
    expect(resolveQuota(source({ 'users/<default>': 1 }), 'producer_byte_rate', 'alice', 'app')!.rateKey).toBe('alice\0');
    expect(resolveQuota(source({ 'clients/<default>': 1 }), 'producer_byte_rate', 'alice', 'app')!.rateKey).toBe('\0app');
  });

  test('no entity: no quota; another key: no quota', () => {
    expect(resolveQuota(source({}), 'producer_byte_rate', 'alice', 'app')).toBeUndefined();
    expect(resolveQuota(source({ 'clients/app': 5 }), 'consumer_byte_rate', 'alice', 'app')).toBeUndefined();
  });
});

describe('ClientQuotaManager', () => {
  const cfg = { windowMs: 1000, samples: 11 };
  const time = { milliseconds: () => 0 };

  test('clients sharing a user-level quota share its rate; a client-level quota is per client id', () => {
    const m = new ClientQuotaManager('producer_byte_rate', source({ 'users/<default>': 100 }), cfg, time);
    expect(m.recordAndGetThrottleTimeMs('alice', 'a', 600, 0)).toBe(0); // 60/s over the padded 10 s
    expect(m.recordAndGetThrottleTimeMs('alice', 'b', 600, 0)).toBe(2000); // 120/s: (120-100)/100 * 10 s
    expect(m.recordAndGetThrottleTimeMs('bob', 'a', 600, 0)).toBe(0);
    const c = new ClientQuotaManager('producer_byte_rate', source({ 'clients/<default>': 100 }), cfg, time);
    expect(c.recordAndGetThrottleTimeMs('alice', 'a', 600, 0)).toBe(0);
    expect(c.recordAndGetThrottleTimeMs('alice', 'b', 600, 0)).toBe(0);
  });

  test('unrecord takes a value back; maxValueInQuotaWindow is bound * (samples - 1) * window', () => {
    const m = new ClientQuotaManager('producer_byte_rate', source({ 'clients/app': 100 }), cfg, time);
    expect(m.recordAndGetThrottleTimeMs('u', 'app', 2000, 0)).toBeGreaterThan(0);
    m.unrecord('u', 'app', 2000, 0);
    expect(m.recordAndGetThrottleTimeMs('u', 'app', 0, 0)).toBe(0);
    expect(m.maxValueInQuotaWindow('u', 'app')).toBe(1000);
    expect(m.maxValueInQuotaWindow('u', 'other')).toBe(Infinity);
  });

  test('the request-time quota caps its throttle at one window', () => {
    const m = new ClientQuotaManager('producer_byte_rate', source({ 'clients/app': 1 }), cfg, time, 1000);
    expect(m.recordAndGetThrottleTimeMs('u', 'app', 1e6, 0)).toBe(1000);
  });
});
