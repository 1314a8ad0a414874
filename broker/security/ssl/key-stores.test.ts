/**
 * Key and trust stores and the TLS settings of a listener: each format loads to the key, chain and
 * trust anchors it holds; each way a store can be wrong (missing, unreadable, wrong password, wrong
 * type, Java JKS, Kafka's forbidden combinations) is a ConfigException naming the key, listener
 * prefixed when the value came from the prefix; the listener settings (protocols, cipher names,
 * client auth, mapping rules) are checked the same way.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { KafkaConfig } from '../../../config/kafka-config';
import { ConfigException } from '../../../config/config-types';
import { createTestCertificates, type TestCertificates } from '../../testing/certificates';
import { loadKeyStore, loadTrustStore } from './key-stores';
import { SslConfigView, serverSslSettings, clientTlsOptions } from './ssl-settings';

let certs: TestCertificates;

beforeAll(() => {
  certs = createTestCertificates();
});

afterAll(() => certs?.cleanup());

const LISTENERS = { listeners: 'SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0', 'inter.broker.listener.name': 'PLAINTEXT' };

function view(props: Record<string, string>, listener: string | null = 'SSL'): SslConfigView {
  return new SslConfigView(KafkaConfig.load({ props: { ...LISTENERS, ...props } }), listener, `listener ${listener}`);
}

/** The ConfigException `fn` throws, for its key and message. */
function configError(fn: () => unknown): ConfigException {
  try {
    fn();
  } catch (err) {
    if (err instanceof ConfigException) return err;
    throw err;
  }
  throw new Error('expected a ConfigException');
}

describe('key stores', () => {
  test('a PEM file with key and chain', () => {
    const ks = loadKeyStore(view({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': certs.broker.pemKeystoreFile }))!;
    expect(ks.chain.map((c) => c.subject)).toEqual(['CN=localhost', 'CN=krill-test-ca']);
    expect(ks.chain[0].checkPrivateKey(ks.key)).toBe(true);
  });

  test('inline PEM with an encrypted key and ssl.key.password; the base64 may be on one line', () => {
    const oneLine = certs.broker.encryptedKey.replace(/\n/g, ' ');
    const ks = loadKeyStore(
      view({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': certs.broker.cert, 'ssl.keystore.key': oneLine, 'ssl.key.password': certs.password }),
    )!;
    expect(ks.chain[0].subject).toBe('CN=localhost');
  });

  test('an encrypted PEM key without its password, or with a wrong one, names ssl.key.password', () => {
    const base = { 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': certs.broker.cert, 'ssl.keystore.key': certs.broker.encryptedKey };
    const none = configError(() => loadKeyStore(view(base)));
    expect(none.configName).toBe('ssl.key.password');
    expect(none.message).toContain('encrypted');
    const wrong = configError(() => loadKeyStore(view({ ...base, 'ssl.key.password': 'nope' })));
    expect(wrong.configName).toBe('ssl.key.password');
  });

  test('a key that belongs to no certificate of the chain is refused', () => {
    const e = configError(() => loadKeyStore(view({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': certs.broker.cert, 'ssl.keystore.key': certs.client.key })));
    expect(e.configName).toBe('ssl.keystore.key');
    expect(e.message).toContain('no certificate in the chain belongs to the private key');
  });

  test('PKCS12, and a PKCS12 file declared JKS (what keytool writes since Java 9)', () => {
    for (const type of ['PKCS12', 'JKS']) {
      const ks = loadKeyStore(view({ 'ssl.keystore.type': type, 'ssl.keystore.location': certs.client.pkcs12File, 'ssl.keystore.password': certs.password }))!;
      expect(ks.chain.map((c) => c.subject)).toEqual(['O=krill\nOU=test\nCN=client', 'CN=krill-test-ca']);
      expect(ks.key.asymmetricKeyType).toBe('ec');
    }
  });

  test('a wrong PKCS12 password names ssl.keystore.password', () => {
    const e = configError(() => loadKeyStore(view({ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': certs.broker.pkcs12File, 'ssl.keystore.password': 'wrong' })));
    expect(e.configName).toBe('ssl.keystore.password');
    expect(e.message).toContain(`Failed to load SSL keystore ${certs.broker.pkcs12File} of type PKCS12: keystore password was incorrect`);
  });

  test('a missing or unreadable file names ssl.keystore.location and the path', () => {
    const missing = path.join(certs.dir, 'nope.p12');
    const e = configError(() => loadKeyStore(view({ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': missing, 'ssl.keystore.password': 'x' })));
    expect(e.configName).toBe('ssl.keystore.location');
    expect(e.message).toContain(missing);
    const pem = configError(() => loadKeyStore(view({ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': certs.dir })));
    expect(pem.configName).toBe('ssl.keystore.location');
    expect(pem.message).toContain(`Failed to load PEM SSL keystore ${certs.dir}`);
  });

  test('a real Java JKS (magic 0xFEEDFEED) stops with the keytool command that converts it', () => {
    const jks = path.join(certs.dir, 'real.jks');
    fs.writeFileSync(jks, Buffer.concat([Buffer.from('feedfeed00000002', 'hex'), Buffer.alloc(64)]));
    const e = configError(() => loadKeyStore(view({ 'ssl.keystore.location': jks, 'ssl.keystore.password': 'x' })));
    expect(e.configName).toBe('ssl.keystore.location');
    expect(e.message).toContain('Java JKS key store, which krill cannot read');
    expect(e.message).toContain(`keytool -importkeystore -srckeystore ${jks} -srcstoretype JKS`);
    const t = configError(() => loadTrustStore(view({ 'ssl.truststore.location': jks })));
    expect(t.configName).toBe('ssl.truststore.location');
  });

  test('an unsupported store type names ssl.keystore.type', () => {
    const e = configError(() => loadKeyStore(view({ 'ssl.keystore.type': 'BCFKS', 'ssl.keystore.location': certs.broker.pkcs12File, 'ssl.keystore.password': 'x' })));
    expect(e.configName).toBe('ssl.keystore.type');
    expect(e.message).toContain('BCFKS not found');
  });

  test("Kafka's combination rules, with Kafka's messages", () => {
    const cases: [Record<string, string>, string, string][] = [
      [{ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': certs.broker.pkcs12File }, 'ssl.keystore.password', 'SSL key store is specified, but key store password is not specified.'],
      [{ 'ssl.keystore.password': 'x' }, 'ssl.keystore.location', 'SSL key store is not specified, but key store password is specified.'],
      [{ 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': certs.broker.pemKeystoreFile, 'ssl.keystore.password': 'x' }, 'ssl.keystore.password', 'SSL key store password cannot be specified with PEM format'],
      [{ 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.key': certs.broker.key, 'ssl.keystore.certificate.chain': certs.broker.cert }, 'ssl.keystore.type', 'SSL private key can be specified only for PEM, but key store type is PKCS12.'],
      [{ 'ssl.keystore.type': 'PEM', 'ssl.keystore.key': certs.broker.key }, 'ssl.keystore.certificate.chain', 'SSL private key is specified, but certificate chain is not specified.'],
      [{ 'ssl.keystore.type': 'PEM', 'ssl.keystore.certificate.chain': certs.broker.cert }, 'ssl.keystore.key', 'SSL certificate chain is specified, but private key is not specified'],
      [
        { 'ssl.keystore.type': 'PEM', 'ssl.keystore.key': certs.broker.key, 'ssl.keystore.certificate.chain': certs.broker.cert, 'ssl.keystore.location': certs.broker.pemKeystoreFile },
        'ssl.keystore.location',
        'Both SSL key store location and separate private key are specified.',
      ],
    ];
    for (const [props, key, message] of cases) {
      const e = configError(() => loadKeyStore(view(props)));
      expect([e.configName, e.message]).toEqual([key, expect.stringContaining(message)]);
    }
    const t = configError(() => loadTrustStore(view({ 'ssl.truststore.type': 'PKCS12', 'ssl.truststore.certificates': certs.ca.cert })));
    expect([t.configName, t.message]).toEqual(['ssl.truststore.type', expect.stringContaining('SSL trust store certs can be specified only for PEM, but trust store type is PKCS12.')]);
  });

  test('listener-prefixed values win over the plain keys, and errors name the prefixed key', () => {
    const v = view({
      'ssl.keystore.type': 'PKCS12',
      'ssl.keystore.location': '/nowhere.p12',
      'ssl.keystore.password': 'x',
      'listener.name.ssl.ssl.keystore.type': 'PEM',
      'listener.name.ssl.ssl.keystore.location': certs.broker.pemKeystoreFile,
    });
    expect(v.source('ssl.keystore.location')).toBe('listener.name.ssl.ssl.keystore.location');
    const e = configError(() => loadKeyStore(v)); // the plain password still applies, and PEM takes none
    expect(e.configName).toBe('ssl.keystore.password');
    const ok = loadKeyStore(view({ 'ssl.keystore.location': '/nowhere.p12', 'listener.name.ssl.ssl.keystore.type': 'PEM', 'listener.name.ssl.ssl.keystore.location': certs.broker.pemKeystoreFile }))!;
    expect(ok.chain[0].subject).toBe('CN=localhost');
    const bad = configError(() => loadKeyStore(view({ 'listener.name.ssl.ssl.keystore.type': 'PEM', 'listener.name.ssl.ssl.keystore.location': '/nowhere.pem' })));
    expect(bad.configName).toBe('listener.name.ssl.ssl.keystore.location');
    expect(bad.message).toContain('listener SSL');
  });
});

describe('trust stores', () => {
  test('PEM file, inline PEM and PKCS12 all give the CA as the one trust anchor', () => {
    const subjects = (props: Record<string, string>) => loadTrustStore(view(props))!.map((c) => c.subject);
    expect(subjects({ 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': certs.ca.certFile })).toEqual(['CN=krill-test-ca']);
    expect(subjects({ 'ssl.truststore.type': 'PEM', 'ssl.truststore.certificates': certs.ca.cert })).toEqual(['CN=krill-test-ca']);
    expect(subjects({ 'ssl.truststore.type': 'PKCS12', 'ssl.truststore.location': certs.ca.pkcs12TruststoreFile, 'ssl.truststore.password': certs.password })).toEqual([
      'CN=krill-test-ca',
    ]);
    expect(loadTrustStore(view({}))).toBeNull();
  });

  test('a wrong trust store password names ssl.truststore.password', () => {
    const e = configError(() =>
      loadTrustStore(view({ 'ssl.truststore.type': 'PKCS12', 'ssl.truststore.location': certs.ca.pkcs12TruststoreFile, 'ssl.truststore.password': 'wrong' })),
    );
    expect(e.configName).toBe('ssl.truststore.password');
    expect(e.message).toContain('truststore password was incorrect');
  });
});

describe('listener settings', () => {
  const cfg = (props: Record<string, string>) => KafkaConfig.load({ props: { ...LISTENERS, ...certs.brokerSsl(), ...props } });

  test('an SSL listener without a key store stops with the key to set', () => {
    const e = configError(() => serverSslSettings(KafkaConfig.load({ props: LISTENERS }), 'SSL', 'SSL'));
    expect(e.configName).toBe('ssl.keystore.location');
    expect(e.message).toContain('the SSL listener SSL has no key store');
  });

  test('protocols, Java cipher names, client auth and mapping rules', () => {
    const s = serverSslSettings(
      cfg({
        'ssl.enabled.protocols': 'TLSv1.2',
        'ssl.cipher.suites': 'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_AES_128_GCM_SHA256',
        'ssl.client.auth': 'requested',
        'ssl.principal.mapping.rules': 'RULE:^CN=(.*?),.*$/$1/,DEFAULT',
      }),
      'SSL',
      'SSL',
    );
    expect(s.contextOptions).toMatchObject({ minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2', ciphers: 'ECDHE-RSA-AES128-GCM-SHA256:TLS_AES_128_GCM_SHA256' });
    expect(s.clientAuth).toBe('requested');
    expect(s.principalMapper!.getName('CN=client,OU=test,O=krill')).toBe('client');
    expect(configError(() => serverSslSettings(cfg({ 'ssl.enabled.protocols': 'SSLv3' }), 'SSL', 'SSL')).configName).toBe('ssl.enabled.protocols');
    expect(configError(() => serverSslSettings(cfg({ 'ssl.cipher.suites': 'TLS_FOO_WITH_BAR' }), 'SSL', 'SSL')).message).toContain('Unsupported CipherSuite: TLS_FOO_WITH_BAR');
    expect(configError(() => serverSslSettings(cfg({ 'ssl.principal.mapping.rules': 'RULE:x/y/Z' }), 'SSL', 'SSL')).configName).toBe('ssl.principal.mapping.rules');
    expect(configError(() => serverSslSettings(cfg({ 'listener.name.ssl.ssl.client.auth': 'maybe' }), 'SSL', 'SSL')).configName).toBe('listener.name.ssl.ssl.client.auth');
    expect(configError(() => serverSslSettings(cfg({ 'ssl.engine.factory.class': 'com.example.MyFactory' }), 'SSL', 'SSL')).configName).toBe('ssl.engine.factory.class');
  });

  test('SASL_SSL listeners take ssl.client.auth only listener-prefixed (with a warning otherwise), and leave the principal to SASL', () => {
    const props = { listeners: 'SASL_SSL://127.0.0.1:0,PLAINTEXT://127.0.0.1:0', 'sasl.enabled.mechanisms': 'PLAIN' };
    const plain = serverSslSettings(cfg({ ...props, 'ssl.client.auth': 'required' }), 'SASL_SSL', 'SASL_SSL');
    expect(plain.clientAuth).toBe('none');
    expect(plain.warnings.join()).toContain("'ssl.client.auth' is applied only to SSL listeners");
    expect(plain.principalMapper).toBeNull();
    const prefixed = serverSslSettings(cfg({ ...props, 'listener.name.sasl_ssl.ssl.client.auth': 'required' }), 'SASL_SSL', 'SASL_SSL');
    expect(prefixed.clientAuth).toBe('required');
  });

  test('the client side: ssl.protocol caps the version offered; endpoint identification https or none', () => {
    const c = KafkaConfig.load({ props: { ...LISTENERS, ...certs.brokerSsl(), 'ssl.protocol': 'TLSv1.2' } });
    expect(clientTlsOptions(c, 'SSL', 'SSL', 'test')!.verifyHostname).toBe(true);
    expect(clientTlsOptions(c, 'PLAINTEXT', 'PLAINTEXT', 'test')).toBeUndefined();
    const none = KafkaConfig.load({ props: { ...LISTENERS, ...certs.brokerSsl(), 'ssl.endpoint.identification.algorithm': '' } });
    expect(clientTlsOptions(none, 'SSL', 'SSL', 'test')!.verifyHostname).toBe(false);
    const bad = KafkaConfig.load({ props: { ...LISTENERS, ...certs.brokerSsl(), 'ssl.protocol': 'TLSv1.2', 'ssl.enabled.protocols': 'TLSv1.3' } });
    expect(configError(() => clientTlsOptions(bad, 'SSL', 'SSL', 'test')).configName).toBe('ssl.protocol');
  });
});

const keytool = (() => {
  try {
    execFileSync('keytool', ['-help'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
})();

// keytool is there when a JDK is; the formats it writes are what Kafka users have.
(keytool ? describe : describe.skip)('stores written by keytool', () => {
  test('a PKCS12 key store and trust store from keytool load; a JKS one is refused with the conversion', () => {
    const p12 = path.join(certs.dir, 'kt.p12');
    const jks = path.join(certs.dir, 'kt.jks');
    const run = (args: string[]) => execFileSync('keytool', args, { stdio: 'ignore' });
    run(['-genkeypair', '-alias', 'b', '-keyalg', 'RSA', '-keysize', '2048', '-dname', 'CN=kt', '-validity', '2', '-keystore', p12, '-storepass', 'secret123', '-storetype', 'PKCS12']);
    run(['-importcert', '-noprompt', '-alias', 'ca', '-file', certs.ca.certFile, '-keystore', p12, '-storepass', 'secret123', '-storetype', 'PKCS12']);
    run(['-genkeypair', '-alias', 'b', '-keyalg', 'EC', '-dname', 'CN=ktj', '-validity', '2', '-keystore', jks, '-storepass', 'secret123', '-storetype', 'JKS']);
    const ks = loadKeyStore(view({ 'ssl.keystore.type': 'JKS', 'ssl.keystore.location': p12, 'ssl.keystore.password': 'secret123' }))!;
    expect(ks.chain[0].subject).toBe('CN=kt');
    const ts = loadTrustStore(view({ 'ssl.truststore.type': 'PKCS12', 'ssl.truststore.location': p12, 'ssl.truststore.password': 'secret123' }))!;
    expect(ts.map((c) => c.subject).sort()).toEqual(['CN=krill-test-ca', 'CN=kt']);
    expect(configError(() => loadKeyStore(view({ 'ssl.keystore.location': jks, 'ssl.keystore.password': 'secret123' }))).message).toContain('keytool -importkeystore');
  });
});
