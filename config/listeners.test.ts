import { parseListeners, parseSecurityProtocolMap, resolveAdvertisedEndpoints } from './listeners';

const DEFAULT_MAP = parseSecurityProtocolMap('SASL_SSL:SASL_SSL,PLAINTEXT:PLAINTEXT,SSL:SSL,SASL_PLAINTEXT:SASL_PLAINTEXT');

describe('listeners', () => {
  test('security protocol map: names upper-cased, protocols case-insensitive, last colon separates', () => {
    const m = parseSecurityProtocolMap(' client : sasl_ssl , Internal:PLAINTEXT ');
    expect([...m.entries()]).toEqual([
      ['CLIENT', 'SASL_SSL'],
      ['INTERNAL', 'PLAINTEXT'],
    ]);
    expect(() => parseSecurityProtocolMap('CLIENT')).toThrow("Error parsing configuration property 'listener.security.protocol.map'");
    expect(parseSecurityProtocolMap('').size).toBe(0);
  });

  test('hosts: empty is null, IPv6 loses its brackets, names are kept distinct', () => {
    expect(parseListeners('PLAINTEXT://:9092, SSL://[fe80::1%eth0]:9093', DEFAULT_MAP, 'listeners')).toEqual([
      { listenerName: 'PLAINTEXT', host: null, port: 9092, securityProtocol: 'PLAINTEXT' },
      { listenerName: 'SSL', host: 'fe80::1%eth0', port: 9093, securityProtocol: 'SSL' },
    ]);
    expect(parseListeners('', DEFAULT_MAP, 'listeners')).toEqual([]);
  });

  test('advertised listeners may share ports', () => {
    expect(parseListeners('PLAINTEXT://a:9092,SSL://b:9092', DEFAULT_MAP, 'advertised.listeners', false)).toHaveLength(2);
    expect(() => parseListeners('PLAINTEXT://a:9092,SSL://b:9092', DEFAULT_MAP, 'listeners', true)).toThrow('different port');
  });

  test('resolving what a started broker advertises', () => {
    const eps = parseListeners('PLAINTEXT://:0,SSL://broker.example:9093', DEFAULT_MAP, 'listeners');
    const resolved = resolveAdvertisedEndpoints(eps, (name) => (name === 'PLAINTEXT' ? 41233 : undefined), '127.0.0.1');
    expect(resolved.map((e) => `${e.listenerName}://${e.host}:${e.port}`)).toEqual(['PLAINTEXT://127.0.0.1:41233', 'SSL://broker.example:9093']);
  });
});
