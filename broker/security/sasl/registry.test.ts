/**
 * The mechanism registry: which mechanisms a listener enables (listener override first), what is
 * refused at startup (GSSAPI, mechanisms krill does not implement, SCRAM without its store, a
 * missing or foreign JAAS entry, custom callback handlers), the per-mechanism and per-listener
 * settings with Kafka's precedence, the handshake's Java HashSet order, and the broker's own client
 * credentials.
 */
import { KafkaConfig } from '../../../config/kafka-config';
import { ConfigException } from '../../../config/config-types';
import type { SaslServerMechanism } from './mechanism';
import {
  brokerClientSasl,
  controllerClientSasl,
  enabledSaslMechanisms,
  interBrokerClientSasl,
  javaHashSetOrder,
  listenerSaslSettings,
  saslServerMechanisms,
} from './registry';

const PLAIN_JAAS = 'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret";';
const OAUTH_JAAS = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin";';
const SCRAM_JAAS = 'org.apache.kafka.common.security.scram.ScramLoginModule required username="admin" password="admin-secret";';

function config(props: Record<string, string>): KafkaConfig {
  return new KafkaConfig({ listeners: 'PLAINTEXT://:9092,SASL_PLAINTEXT://:9093', ...props });
}

function configError(fn: () => unknown): ConfigException {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigException);
    return err as ConfigException;
  }
  throw new Error('no error');
}

describe('enabled mechanisms and startup refusals', () => {
  test("Kafka's default GSSAPI alone stops startup with a clear error", () => {
    const err = configError(() => saslServerMechanisms(config({}), 'SASL_PLAINTEXT'));
    expect(err.message).toContain('Listener SASL_PLAINTEXT enables SASL mechanism GSSAPI (Kerberos), which krill does not implement');
    expect(err.message).toContain('listener.name.sasl_plaintext.sasl.enabled.mechanisms');
    expect(err.configName).toBe('listener.name.sasl_plaintext.sasl.enabled.mechanisms');
  });

  test('GSSAPI next to PLAIN, and a mechanism krill does not implement, are refused too', () => {
    expect(configError(() => saslServerMechanisms(config({ 'sasl.enabled.mechanisms': 'PLAIN,GSSAPI' }), 'SASL_PLAINTEXT')).message).toContain('GSSAPI (Kerberos)');
    expect(configError(() => saslServerMechanisms(config({ 'sasl.enabled.mechanisms': 'PLAIN,DIGEST-MD5' }), 'SASL_PLAINTEXT')).message).toBe(
      'Listener SASL_PLAINTEXT enables SASL mechanism DIGEST-MD5, which krill does not implement. Supported mechanisms: PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER',
    );
    expect(configError(() => saslServerMechanisms(config({ 'sasl.enabled.mechanisms': '' }), 'SASL_PLAINTEXT')).message).toContain('No SASL mechanisms are enabled');
  });

  test('the listener override wins over sasl.enabled.mechanisms', () => {
    const c = config({ 'sasl.enabled.mechanisms': 'GSSAPI', 'listener.name.sasl_plaintext.sasl.enabled.mechanisms': 'PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS });
    expect(enabledSaslMechanisms(c, 'SASL_PLAINTEXT')).toEqual(['PLAIN']);
    expect([...saslServerMechanisms(c, 'SASL_PLAINTEXT').keys()]).toEqual(['PLAIN']);
  });

  test('a mechanism without its listener JAAS entry, or with another login module, is refused', () => {
    expect(configError(() => saslServerMechanisms(config({ 'sasl.enabled.mechanisms': 'PLAIN' }), 'SASL_PLAINTEXT')).configName).toBe(
      'listener.name.sasl_plaintext.plain.sasl.jaas.config',
    );
    const foreign = config({ 'sasl.enabled.mechanisms': 'PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': OAUTH_JAAS });
    expect(configError(() => saslServerMechanisms(foreign, 'SASL_PLAINTEXT')).message).toContain("krill's PLAIN uses org.apache.kafka.common.security.plain.PlainLoginModule");
  });

  test('only the default server callback handler of a mechanism is accepted', () => {
    const base = { 'sasl.enabled.mechanisms': 'PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS };
    const custom = config({ ...base, 'listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class': 'com.example.Handler' });
    expect(configError(() => saslServerMechanisms(custom, 'SASL_PLAINTEXT')).message).toContain('krill runs no custom SASL callback handlers');
    const dflt = config({ ...base, 'listener.name.sasl_plaintext.plain.sasl.server.callback.handler.class': 'org.apache.kafka.common.security.plain.internals.PlainServerCallbackHandler' });
    expect(saslServerMechanisms(dflt, 'SASL_PLAINTEXT').has('PLAIN')).toBe(true);
  });

  test('OAUTHBEARER validator options are checked at startup', () => {
    const c = config({
      'sasl.enabled.mechanisms': 'OAUTHBEARER',
      'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required unsecuredLoginStringClaim_sub="admin" unsecuredValidatorAllowableClockSkewMs="-5";',
    });
    expect(configError(() => saslServerMechanisms(c, 'SASL_PLAINTEXT')).message).toContain('Allowable clock skew millis must not be negative: -5');
  });

  test("OAUTHBEARER: the broker's own login with the entry must work, as in Kafka (no options, or a principal claim)", () => {
    const entry = (opts: string) =>
      config({ 'sasl.enabled.mechanisms': 'OAUTHBEARER', 'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': `org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule required ${opts};` });
    expect(saslServerMechanisms(entry(''), 'SASL_PLAINTEXT').has('OAUTHBEARER')).toBe(true);
    expect(configError(() => saslServerMechanisms(entry('unsecuredValidatorRequiredScope="x"'), 'SASL_PLAINTEXT')).message).toContain('No principal name in JWT claim: sub');
    expect(configError(() => saslServerMechanisms(entry('unsecuredLoginExtension_a="b"'), 'SASL_PLAINTEXT')).message).toContain('Extensions provided in login context without a token');
  });

  test('SCRAM needs its slot (engineer C\'s credential store); with it, the factory builds each SCRAM mechanism', () => {
    const c = config({ 'sasl.enabled.mechanisms': 'SCRAM-SHA-256,SCRAM-SHA-512', 'listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config': SCRAM_JAAS, 'listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config': SCRAM_JAAS });
    expect(configError(() => saslServerMechanisms(c, 'SASL_PLAINTEXT')).message).toContain('not available in this broker');
    const built: string[] = [];
    const scramServer = (ctx: { mechanism: string; listenerName: string }): SaslServerMechanism => {
      built.push(`${ctx.listenerName}/${ctx.mechanism}`);
      return { name: ctx.mechanism, newServer: () => { throw new Error('unused'); } };
    };
    expect([...saslServerMechanisms(c, 'SASL_PLAINTEXT', { scramServer }).keys()]).toEqual(['SCRAM-SHA-256', 'SCRAM-SHA-512']);
    expect(built).toEqual(['SASL_PLAINTEXT/SCRAM-SHA-256', 'SASL_PLAINTEXT/SCRAM-SHA-512']);
  });
});

describe('listener settings', () => {
  const both = {
    'sasl.enabled.mechanisms': 'PLAIN,OAUTHBEARER',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
    'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': OAUTH_JAAS,
  };

  test('connections.max.reauth.ms: mechanism-prefixed, then listener-prefixed, then broker-wide', () => {
    expect([...listenerSaslSettings(config(both), 'SASL_PLAINTEXT').connectionsMaxReauthMs]).toEqual([
      ['PLAIN', 0],
      ['OAUTHBEARER', 0],
    ]);
    const s = listenerSaslSettings(
      config({ ...both, 'connections.max.reauth.ms': '1000', 'listener.name.sasl_plaintext.connections.max.reauth.ms': '2000', 'listener.name.sasl_plaintext.oauthbearer.connections.max.reauth.ms': '3000' }),
      'SASL_PLAINTEXT',
    );
    expect(s.connectionsMaxReauthMs.get('PLAIN')).toBe(2000);
    expect(s.connectionsMaxReauthMs.get('OAUTHBEARER')).toBe(3000);
    expect(listenerSaslSettings(config({ ...both, 'connections.max.reauth.ms': '1000' }), 'SASL_PLAINTEXT').connectionsMaxReauthMs.get('PLAIN')).toBe(1000);
    expect(configError(() => listenerSaslSettings(config({ ...both, 'listener.name.sasl_plaintext.connections.max.reauth.ms': 'soon' }), 'SASL_PLAINTEXT')).configName).toBe(
      'listener.name.sasl_plaintext.connections.max.reauth.ms',
    );
  });

  test('sasl.server.max.receive.size: listener override, else broker-wide (default 524288)', () => {
    expect(listenerSaslSettings(config(both), 'SASL_PLAINTEXT').maxReceiveSize).toBe(524288);
    expect(listenerSaslSettings(config({ ...both, 'sasl.server.max.receive.size': '1000' }), 'SASL_PLAINTEXT').maxReceiveSize).toBe(1000);
    expect(listenerSaslSettings(config({ ...both, 'sasl.server.max.receive.size': '1000', 'listener.name.sasl_plaintext.sasl.server.max.receive.size': '2000' }), 'SASL_PLAINTEXT').maxReceiveSize).toBe(2000);
  });

  test("the handshake lists mechanisms in Java's HashSet order, as Kafka does", () => {
    // Orders printed by `new ArrayList<>(new HashSet<>(Arrays.asList(...)))` on a JVM.
    expect(javaHashSetOrder(['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'])).toEqual(['PLAIN', 'SCRAM-SHA-512', 'SCRAM-SHA-256', 'OAUTHBEARER']);
    expect(javaHashSetOrder(['OAUTHBEARER', 'PLAIN'])).toEqual(['PLAIN', 'OAUTHBEARER']);
    expect(javaHashSetOrder(['SCRAM-SHA-512', 'PLAIN', 'SCRAM-SHA-256'])).toEqual(['SCRAM-SHA-512', 'PLAIN', 'SCRAM-SHA-256']);
    expect(javaHashSetOrder(['PLAIN', 'PLAIN', 'OAUTHBEARER'])).toEqual(['PLAIN', 'OAUTHBEARER']);
    expect(listenerSaslSettings(config({ ...both, 'sasl.enabled.mechanisms': 'OAUTHBEARER,PLAIN' }), 'SASL_PLAINTEXT').enabledMechanisms).toEqual(['PLAIN', 'OAUTHBEARER']);
  });
});

describe("the broker's own credentials", () => {
  const ib = {
    listeners: 'SASL_PLAINTEXT://:9093',
    'security.inter.broker.protocol': 'SASL_PLAINTEXT',
    'sasl.enabled.mechanisms': 'PLAIN',
    'sasl.mechanism.inter.broker.protocol': 'PLAIN',
    'listener.name.sasl_plaintext.plain.sasl.jaas.config': PLAIN_JAAS,
  };

  test('PLAIN on the inter-broker listener: username/password of its JAAS entry', () => {
    const sasl = interBrokerClientSasl(new KafkaConfig(ib))!;
    expect(sasl.mechanism).toBe('PLAIN');
    expect(sasl.newClient().initialResponse().toString()).toBe('\u0000admin\u0000admin-secret');
    expect(interBrokerClientSasl(new KafkaConfig({ listeners: 'PLAINTEXT://:9092' }))).toBeUndefined();
  });

  test('missing credentials, or GSSAPI (Kafka\'s default), stop startup', () => {
    const noCreds = { ...ib, 'listener.name.sasl_plaintext.plain.sasl.jaas.config': 'org.apache.kafka.common.security.plain.PlainLoginModule required user_a="b";' };
    expect(configError(() => interBrokerClientSasl(new KafkaConfig(noCreds))).message).toContain('needs username and password options');
    expect(configError(() => brokerClientSasl(new KafkaConfig(ib), 'SASL_PLAINTEXT', 'GSSAPI', 'sasl.mechanism.inter.broker.protocol')).configName).toBe('sasl.mechanism.inter.broker.protocol');
  });

  test('the inter-broker listener must enable sasl.mechanism.inter.broker.protocol (its own override counts)', () => {
    expect(() => new KafkaConfig({ ...ib, 'sasl.enabled.mechanisms': 'GSSAPI' })).toThrow('sasl.mechanism.inter.broker.protocol must be included in sasl.enabled.mechanisms');
    expect(() => new KafkaConfig({ ...ib, 'sasl.enabled.mechanisms': 'GSSAPI', 'listener.name.sasl_plaintext.sasl.enabled.mechanisms': 'PLAIN' })).not.toThrow();
  });

  test('OAUTHBEARER: an unsecured login token from unsecuredLogin* options', () => {
    const c = new KafkaConfig({ ...ib, 'sasl.enabled.mechanisms': 'OAUTHBEARER', 'sasl.mechanism.inter.broker.protocol': 'OAUTHBEARER', 'listener.name.sasl_plaintext.oauthbearer.sasl.jaas.config': OAUTH_JAAS });
    const first = interBrokerClientSasl(c)!.newClient().initialResponse().toString();
    expect(first).toMatch(/^n,,\u0001auth=Bearer [A-Za-z0-9+/]+\.[A-Za-z0-9+/]+\.\u0001\u0001$/);
  });

  test('the controller listener: its protocol from listener.security.protocol.map, sasl.mechanism.controller.protocol', () => {
    const c = new KafkaConfig({
      'process.roles': 'broker',
      listeners: 'PLAINTEXT://:9092',
      'controller.listener.names': 'CONTROLLER',
      'listener.security.protocol.map': 'PLAINTEXT:PLAINTEXT,CONTROLLER:SASL_PLAINTEXT',
      'sasl.mechanism.controller.protocol': 'PLAIN',
      'listener.name.controller.plain.sasl.jaas.config': PLAIN_JAAS,
    });
    expect(controllerClientSasl(c)?.mechanism).toBe('PLAIN');
    expect(configError(() => controllerClientSasl(new KafkaConfig({ ...Object.fromEntries(c.originals()), 'sasl.mechanism.controller.protocol': 'GSSAPI' }))).configName).toBe(
      'sasl.mechanism.controller.protocol',
    );
  });
});
