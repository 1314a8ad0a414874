/**
 * JAAS config parsing as Kafka's JaasConfig (StreamTokenizer) does it, and where a broker finds a
 * listener's JAAS for a mechanism (JaasContext.loadServerContext).
 */
import { KafkaConfig } from '../../../config/kafka-config';
import { ConfigException } from '../../../config/config-types';
import { CapturingLogger } from '../../../common/testing/mock-time';
import { jaasOption, JaasConfigError, loadJaasProperty, loadServerJaas, parseJaasConfig } from './jaas';

const PLAIN = 'org.apache.kafka.common.security.plain.PlainLoginModule';

describe('parseJaasConfig', () => {
  test("Kafka's PLAIN example", () => {
    const [e] = parseJaasConfig(`${PLAIN} required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";`);
    expect(e.loginModule).toBe(PLAIN);
    expect(e.controlFlag).toBe('REQUIRED');
    expect([...e.options]).toEqual([
      ['username', 'admin'],
      ['password', 'admin-secret'],
      ['user_admin', 'admin-secret'],
      ['user_alice', 'alice-secret'],
    ]);
  });

  test('control flags are case-insensitive; every flag Kafka knows', () => {
    for (const f of ['required', 'Requisite', 'SUFFICIENT', 'optional']) {
      expect(parseJaasConfig(`${PLAIN} ${f};`)[0].controlFlag).toBe(f.toUpperCase());
    }
    expect(() => parseJaasConfig(`${PLAIN} mandatory;`)).toThrow("Invalid login module control flag 'mandatory' in JAAS config");
  });

  test('quoted values: both quote kinds, Java escapes, separators inside quotes', () => {
    const [e] = parseJaasConfig(`${PLAIN} required a="x;y=z" b='single "quoted"' c="tab\\there" d="q\\"uote" e="back\\\\slash" f="\\101\\60";`);
    expect(e.options.get('a')).toBe('x;y=z');
    expect(e.options.get('b')).toBe('single "quoted"');
    expect(e.options.get('c')).toBe('tab\there');
    expect(e.options.get('d')).toBe('q"uote');
    expect(e.options.get('e')).toBe('back\\slash');
    expect(e.options.get('f')).toBe('A0');
  });

  test('unquoted words may hold letters, digits, ".", "-", "_" and "$" after the first character', () => {
    const [e] = parseJaasConfig(`${PLAIN} required user_bob=bob-secret_2$.x ;`);
    expect(e.options.get('user_bob')).toBe('bob-secret_2$.x');
  });

  test('an unquoted number has no value (StreamTokenizer reads it as a number): quote it', () => {
    expect(() => parseJaasConfig(`${PLAIN} required unsecuredLoginLifetimeSeconds=60;`)).toThrow(
      "Value not specified for key 'unsecuredLoginLifetimeSeconds' in JAAS config",
    );
    expect(parseJaasConfig(`${PLAIN} required unsecuredLoginLifetimeSeconds="60";`)[0].options.get('unsecuredLoginLifetimeSeconds')).toBe('60');
  });

  test('comments: //, /* */ and a lone / to the end of the line', () => {
    const text = `/* the broker */ ${PLAIN} required // users follow\n user_a="1" /* b */ user_c="3";`;
    expect([...parseJaasConfig(text)[0].options.keys()]).toEqual(['user_a', 'user_c']);
  });

  test('several entries, and a newline inside a quoted value ends it', () => {
    const entries = parseJaasConfig(`${PLAIN} required a="1";\n com.example.Other optional;`);
    expect(entries.map((e) => e.loginModule)).toEqual([PLAIN, 'com.example.Other']);
    expect(parseJaasConfig(`${PLAIN} required a="open\n;`)[0].options.get('a')).toBe('open');
  });

  test("Kafka's errors", () => {
    expect(() => parseJaasConfig('')).toThrow('Login module not specified in JAAS config');
    expect(() => parseJaasConfig(PLAIN)).toThrow('Login module control flag not specified in JAAS config');
    expect(() => parseJaasConfig(`${PLAIN} required a="1"`)).toThrow('JAAS config entry not terminated by semi-colon');
    expect(() => parseJaasConfig(`${PLAIN} required a;`)).toThrow("Value not specified for key 'a' in JAAS config");
    expect(() => parseJaasConfig(`${PLAIN} required a=;`)).toThrow("Value not specified for key 'a' in JAAS config");
    expect(() => parseJaasConfig(`${PLAIN} required a=`)).toThrow("Value not specified for key 'a' in JAAS config");
  });
});

describe('loadJaasProperty and options', () => {
  test('exactly one login module, not a disallowed one', () => {
    expect(() => loadJaasProperty(`${PLAIN} required; ${PLAIN} required;`)).toThrow('JAAS config property contains 2 login modules, should be 1 module');
    expect(() => loadJaasProperty('com.sun.security.auth.module.JndiLoginModule required;')).toThrow(JaasConfigError);
  });

  test('configEntryOption looks only at the named login module', () => {
    const entries = parseJaasConfig(`com.example.Other required user_a="x"; ${PLAIN} required user_a="y";`);
    expect(jaasOption(entries, 'user_a')).toBe('x');
    expect(jaasOption(entries, 'user_a', PLAIN)).toBe('y');
    expect(jaasOption(entries, 'user_b', PLAIN)).toBeUndefined();
  });
});

describe('loadServerJaas: listener.name.<listener>.<mechanism>.sasl.jaas.config', () => {
  const base = { 'listeners': 'SASL_PLAINTEXT://:9092', 'security.inter.broker.protocol': 'SASL_PLAINTEXT', 'sasl.enabled.mechanisms': 'PLAIN', 'sasl.mechanism.inter.broker.protocol': 'PLAIN' };

  test('the listener- and mechanism-prefixed property, both lower-cased', () => {
    const config = new KafkaConfig({ ...base, 'listener.name.sasl_plaintext.plain.sasl.jaas.config': `${PLAIN} required user_a="b";` });
    expect(loadServerJaas(config, 'SASL_PLAINTEXT', 'PLAIN').options.get('user_a')).toBe('b');
  });

  test('an unprefixed sasl.jaas.config is ignored with Kafka\'s warning, and startup fails as Kafka\'s does without a JAAS file', () => {
    const log = new CapturingLogger();
    const config = new KafkaConfig({ ...base, 'sasl.jaas.config': `${PLAIN} required user_a="b";` });
    expect(() => loadServerJaas(config, 'SASL_PLAINTEXT', 'PLAIN', log)).toThrow(
      "Could not find a 'KafkaServer' or 'sasl_plaintext.KafkaServer' entry in the JAAS configuration. System property 'java.security.auth.login.config' is not set",
    );
    expect(log.lines.some((l) => l.level === 'warn' && l.msg.includes('Server config sasl.jaas.config should be prefixed with SASL mechanism name, ignoring config'))).toBe(true);
  });

  test('a malformed property is a ConfigException naming the key', () => {
    const config = new KafkaConfig({ ...base, 'listener.name.sasl_plaintext.plain.sasl.jaas.config': `${PLAIN} required user_a="b"` });
    let err: unknown;
    try {
      loadServerJaas(config, 'SASL_PLAINTEXT', 'PLAIN');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigException);
    expect((err as ConfigException).configName).toBe('listener.name.sasl_plaintext.plain.sasl.jaas.config');
    expect((err as Error).message).toContain('JAAS config entry not terminated by semi-colon');
  });

  test('the secondary prefix is not an unknown key', () => {
    const config = new KafkaConfig({ ...base, 'listener.name.sasl_plaintext.plain.sasl.jaas.config': `${PLAIN} required;`, 'listener.name.sasl_plaintext.plain.connections.max.reauth.ms': '1000' });
    expect(config.unknownKeys()).toEqual([]);
  });
});
