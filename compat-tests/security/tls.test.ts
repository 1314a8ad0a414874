/**
 * TLS listeners with real clients: KafkaJS 2.2.4 (node:tls underneath) over SSL with and without a
 * client certificate, produce and consume; mutual TLS with ssl.client.auth=required refusing a
 * client without a certificate or with one from another CA, and transaction markers going over the
 * SSL inter-broker listener; the principal of a certificate, by ssl.principal.mapping.rules;
 * ssl.client.auth=requested; a plaintext client on an SSL listener closed without a Kafka answer;
 * PLAINTEXT and SSL listeners served at once, each handing out its own endpoints; krill's own client
 * with host name verification, TLS versions and cipher suites; connection limits applied before the
 * handshake; inline PEM stores; a Kafka server.properties as is; SASL_SSL (SASL inside TLS); and
 * startup stopping with the key named when a listener cannot be set up.
 */
import * as tls from 'node:tls';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createTestCertificates, type TestCertificates } from '../../broker';
import { startBroker } from '../../broker';
import { KafkaConfig } from '../../config/kafka-config';
import { connect, metadata } from '../../client/network-client';
import { clientTlsOptions } from '../../broker/security/ssl/ssl-settings';
import { RawSocket, requestFrame } from '../helpers/raw-socket';
import { kafkaJs, startTlsBroker, type TlsBroker } from './tls-helpers';
import { produceAndConsume, rejection, sorted, values } from './kafkajs-helpers';

jest.setTimeout(60_000);

let certs: TestCertificates;
let otherCa: TestCertificates;

beforeAll(() => {
  certs = createTestCertificates();
  otherCa = createTestCertificates();
});

afterAll(() => {
  certs?.cleanup();
  otherCa?.cleanup();
});

const hostPort = (bootstrap: string) => {
  const i = bootstrap.lastIndexOf(':');
  return { host: bootstrap.slice(0, i), port: Number(bootstrap.slice(i + 1)) };
};

describe('an SSL listener without client authentication', () => {
  let b: TlsBroker;
  beforeAll(async () => {
    b = await startTlsBroker(certs, {});
  });
  afterAll(async () => b?.close());

  test('KafkaJS without a client certificate produces and consumes; it is User:ANONYMOUS', async () => {
    const kafka = kafkaJs(b.broker.bootstrapServers, 'tls-anon', { ssl: { ca: [certs.ca.cert] } });
    expect(sorted(await produceAndConsume(kafka, 'tls-anon', values(50)))).toEqual(sorted(values(50)));
    const mine = b.callers.filter((c) => c.clientId === 'tls-anon');
    expect(mine.length).toBeGreaterThan(5);
    expect(new Set(mine.map((c) => `${c.principal} ${c.listener} ${c.securityProtocol}`))).toEqual(new Set(['User:ANONYMOUS SSL SSL']));
  });

  test('a client that does not trust the broker certificate cannot connect', async () => {
    const kafka = kafkaJs(b.broker.bootstrapServers, 'tls-untrusting', { ssl: { ca: [otherCa.ca.cert] }, retry: { retries: 0 } });
    const admin = kafka.admin();
    const err = await rejection(admin.connect());
    await admin.disconnect().catch(() => undefined);
    expect(err.message).toMatch(/self[- ]signed|unable to verify|certificate/i);
  });

  test('a plaintext client on the SSL listener gets no Kafka answer: the handshake fails and the connection is closed, logged', async () => {
    const { host, port } = hostPort(b.broker.bootstrapServers[0]);
    const raw = await RawSocket.connect(host, port);
    await raw.write(requestFrame(18, 3, 1, { clientSoftwareName: 'plain', clientSoftwareVersion: '1' }));
    await raw.waitForClose();
    expect(raw.bufferedFrames).toBe(0);
    // All a TLS server may send a non-TLS peer is one alert record (7 bytes), never a Kafka frame.
    expect(raw.partialBytes).toBeLessThanOrEqual(7);
    await b.log.waitFor(/Failed authentication with .* \(SSL handshake failed\)/);
    expect(b.callers.some((c) => c.clientId === 'plain')).toBe(false);
  });

  test("krill's own client over TLS, with host name verification", async () => {
    const { host, port } = hostPort(b.broker.bootstrapServers[0]);
    const cfg = KafkaConfig.load({ props: { listeners: 'SSL://127.0.0.1:0', 'security.inter.broker.protocol': 'SSL', ...certs.brokerSsl() } });
    const conn = await connect(host, port, { clientId: 'krill-tls', tls: clientTlsOptions(cfg, 'SSL', 'SSL', 'test') });
    try {
      const md = await metadata(conn, null);
      expect(md.brokers.map((x) => `${x.host}:${x.port}`)).toEqual(b.broker.bootstrapServers);
    } finally {
      await conn.close();
    }
    // Without a trust store the platform's CAs are used, which do not know the test CA.
    const noTrust = KafkaConfig.load({ props: { listeners: 'SSL://127.0.0.1:0', 'security.inter.broker.protocol': 'SSL' } });
    const err = await rejection(connect(host, port, { tls: clientTlsOptions(noTrust, 'SSL', 'SSL', 'test'), timeoutMs: 3_000 }));
    expect(err.message).toMatch(/TLS connection to .* failed: .*(self[- ]signed|unable to (get|verify))/i);
  });
});

describe('mutual TLS (ssl.client.auth=required, PKCS12 stores)', () => {
  let b: TlsBroker;
  beforeAll(async () => {
    b = await startTlsBroker(certs, {}, { format: 'PKCS12', clientAuth: 'required' });
  });
  afterAll(async () => b?.close());

  test('KafkaJS with a client certificate produces and consumes as User:CN=client,OU=test,O=krill', async () => {
    const kafka = kafkaJs(b.broker.bootstrapServers, 'mtls', { ssl: { ca: [certs.ca.cert], cert: certs.client.cert, key: certs.client.key } });
    expect(sorted(await produceAndConsume(kafka, 'mtls', values(30)))).toEqual(sorted(values(30)));
    const mine = b.callers.filter((c) => c.clientId === 'mtls');
    expect(new Set(mine.map((c) => c.principal))).toEqual(new Set(['User:CN=client,OU=test,O=krill']));
  });

  test('a transaction commits: the markers go over the SSL inter-broker listener with the broker certificate', async () => {
    const kafka = kafkaJs(b.broker.bootstrapServers, 'mtls-txn', { ssl: { ca: [certs.ca.cert], cert: certs.client.cert, key: certs.client.key } });
    const admin = kafka.admin();
    await admin.connect();
    await admin.createTopics({ topics: [{ topic: 'mtls-txn', numPartitions: 1, replicationFactor: 1 }], waitForLeaders: true });
    await admin.disconnect();
    const producer = kafka.producer({ transactionalId: 'mtls-txn-id', idempotent: true, maxInFlightRequests: 1 });
    await producer.connect();
    const txn = await producer.transaction();
    await txn.send({ topic: 'mtls-txn', messages: [{ value: 'committed-1' }, { value: 'committed-2' }] });
    await txn.commit();
    await producer.disconnect();
    // read_committed sees the records only once the commit marker is in.
    const consumer = kafka.consumer({ groupId: 'mtls-txn-reader', sessionTimeout: 10_000, heartbeatInterval: 500 });
    await consumer.connect();
    const seen: string[] = [];
    try {
      await consumer.subscribe({ topic: 'mtls-txn', fromBeginning: true });
      await new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`read ${seen.length} of 2`)), 30_000);
        consumer
          .run({
            eachMessage: async ({ message }) => {
              seen.push(message.value!.toString());
              if (seen.length === 2) {
                clearTimeout(timer);
                resolve();
              }
            },
          })
          .catch(reject);
      });
    } finally {
      await consumer.disconnect();
    }
    expect(seen).toEqual(['committed-1', 'committed-2']);
    // The marker came with WriteTxnMarkers, which the broker sent itself, as User:CN=localhost over TLS.
    const markers = b.callers.filter((c) => c.clientId?.endsWith('-txn-markers'));
    expect(markers.length).toBeGreaterThan(0);
    expect(new Set(markers.map((c) => `${c.principal} ${c.securityProtocol}`))).toEqual(new Set(['User:CN=localhost SSL']));
  });

  test('a client without a certificate, or with one of another CA, is refused before any request', async () => {
    const attempts: [string, tls.ConnectionOptions][] = [
      ['mtls-nocert', { ca: [certs.ca.cert] }],
      ['mtls-othercert', { ca: [certs.ca.cert], cert: otherCa.client.cert, key: otherCa.client.key }],
    ];
    for (const [clientId, ssl] of attempts) {
      const kafka = kafkaJs(b.broker.bootstrapServers, clientId, { ssl, retry: { retries: 0 } });
      const admin = kafka.admin();
      const err = await rejection(admin.connect());
      await admin.disconnect().catch(() => undefined);
      expect(err.name).toMatch(/^KafkaJS/);
      expect(b.callers.some((c) => c.clientId === clientId)).toBe(false);
    }
    await b.log.waitFor(/Failed authentication with .* \(SSL handshake failed\)/, 2);
  });
});

describe('principal mapping and ssl.client.auth=requested', () => {
  let b: TlsBroker;
  beforeAll(async () => {
    b = await startTlsBroker(certs, { 'ssl.principal.mapping.rules': 'RULE:^CN=([^,]+),OU=test,.*$/$1@test/U,DEFAULT' }, { clientAuth: 'requested' });
  });
  afterAll(async () => b?.close());

  test('with a certificate the mapped name, without one ANONYMOUS; a certificate that does not verify is refused', async () => {
    const admin1 = kafkaJs(b.broker.bootstrapServers, 'requested-cert', { ssl: { ca: [certs.ca.cert], cert: certs.client.cert, key: certs.client.key } }).admin();
    await admin1.connect();
    await admin1.listTopics();
    await admin1.disconnect();
    const admin2 = kafkaJs(b.broker.bootstrapServers, 'requested-nocert', { ssl: { ca: [certs.ca.cert] } }).admin();
    await admin2.connect();
    await admin2.listTopics();
    await admin2.disconnect();
    const principals = (id: string) => new Set(b.callers.filter((c) => c.clientId === id).map((c) => c.principal));
    expect(principals('requested-cert')).toEqual(new Set(['User:CLIENT@TEST']));
    expect(principals('requested-nocert')).toEqual(new Set(['User:ANONYMOUS']));
    const admin3 = kafkaJs(b.broker.bootstrapServers, 'requested-bad', {
      ssl: { ca: [certs.ca.cert], cert: otherCa.client.cert, key: otherCa.client.key },
      retry: { retries: 0 },
    }).admin();
    await rejection(admin3.connect());
    await admin3.disconnect().catch(() => undefined);
    expect(principals('requested-bad').size).toBe(0);
  });
});

test('PLAINTEXT and SSL listeners at once: both served, each handing out its own endpoints', async () => {
  const b = await startTlsBroker(certs, {
    listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.1:0',
    'security.inter.broker.protocol': 'PLAINTEXT',
  });
  try {
    const plain = kafkaJs([b.broker.listeners.PLAINTEXT], 'two-plain');
    const secure = kafkaJs([b.broker.listeners.SSL], 'two-ssl', { ssl: { ca: [certs.ca.cert] } });
    // Produced over PLAINTEXT, consumed over SSL.
    expect(sorted(await produceAndConsume(plain, 'two-listeners', values(40), { consumer: secure }))).toEqual(sorted(values(40)));
    const seen = (id: string) => new Set(b.callers.filter((c) => c.clientId === id).map((c) => `${c.listener}/${c.securityProtocol}`));
    expect(seen('two-plain')).toEqual(new Set(['PLAINTEXT/PLAINTEXT']));
    expect(seen('two-ssl')).toEqual(new Set(['SSL/SSL']));
    for (const [name, opts] of [
      ['PLAINTEXT', {}],
      ['SSL', { tls: { secureContext: tls.createSecureContext({ ca: certs.ca.cert }), verifyHostname: true } }],
    ] as const) {
      const { host, port } = hostPort(b.broker.listeners[name]);
      const conn = await connect(host, port, opts);
      const md = await metadata(conn, null);
      await conn.close();
      expect(md.brokers.map((x) => `${x.host}:${x.port}`)).toEqual([b.broker.listeners[name]]);
    }
  } finally {
    await b.close();
  }
});

test('ssl.enabled.protocols and ssl.cipher.suites (Java names) decide what is negotiated; ssl.endpoint.identification.algorithm', async () => {
  // The SSL listener is on 127.0.0.2, which the broker certificate does not name (it names
  // localhost and 127.0.0.1): a client that verifies host names refuses it, one that does not connects.
  const b = await startTlsBroker(certs, {
    listeners: 'PLAINTEXT://127.0.0.1:0,SSL://127.0.0.2:0',
    'security.inter.broker.protocol': 'PLAINTEXT',
    'ssl.enabled.protocols': 'TLSv1.2',
    'ssl.cipher.suites': 'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  });
  try {
    const { host, port } = hostPort(b.broker.listeners.SSL);
    expect(host).toBe('127.0.0.2');
    const s = tls.connect({ host, port, ca: certs.ca.cert, checkServerIdentity: () => undefined });
    await new Promise<void>((resolve, reject) => {
      s.once('secureConnect', () => resolve());
      s.once('error', reject);
    });
    expect(s.getProtocol()).toBe('TLSv1.2');
    expect(s.getCipher().standardName).toBe('TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384');
    s.destroy();
    // A client that offers only TLSv1.3 gets no handshake.
    const v13 = tls.connect({ host, port, ca: certs.ca.cert, minVersion: 'TLSv1.3', checkServerIdentity: () => undefined });
    expect((await new Promise<Error>((resolve) => v13.once('error', resolve))).message).toMatch(/protocol|version/i);
    const strict = KafkaConfig.load({ props: { listeners: 'SSL://127.0.0.1:0', 'security.inter.broker.protocol': 'SSL', ...certs.brokerSsl() } });
    const err = await rejection(connect(host, port, { tls: clientTlsOptions(strict, 'SSL', 'SSL', 'test'), timeoutMs: 3_000 }));
    expect(err.message).toMatch(/IP: 127\.0\.0\.2 is not in the cert's list/);
    const lax = KafkaConfig.load({
      props: { listeners: 'SSL://127.0.0.1:0', 'security.inter.broker.protocol': 'SSL', ...certs.brokerSsl(), 'ssl.endpoint.identification.algorithm': '' },
    });
    const conn = await connect(host, port, { tls: clientTlsOptions(lax, 'SSL', 'SSL', 'test') });
    expect(conn.apiVersions.size).toBeGreaterThan(10);
    await conn.close();
  } finally {
    await b.close();
  }
});

test('connection limits apply to a TLS listener before the handshake; a socket in its handshake holds its slot', async () => {
  const b = await startTlsBroker(certs, { 'max.connections.per.ip': '1' });
  try {
    const { host, port } = hostPort(b.broker.bootstrapServers[0]);
    const tlsOpts = { secureContext: tls.createSecureContext({ ca: certs.ca.cert }), verifyHostname: true };
    // A socket that never starts its handshake takes the one slot of this address...
    const idle = await RawSocket.connect(host, port);
    // ...so a TLS client from the same address is turned away at accept, without a handshake.
    const refused = await rejection(connect(host, port, { tls: tlsOpts, timeoutMs: 3_000 }));
    expect(refused.message).toMatch(/closed before it was established|ECONNRESET|socket disconnected/);
    await b.log.waitFor(/Rejected connection from/);
    idle.destroy();
    await idle.waitForClose();
    // The broker sees the idle socket end its handshake unfinished; its slot is free again then.
    await b.log.waitFor(/Failed authentication with .*connection closed during the TLS handshake/);
    const conn = await connect(host, port, { tls: tlsOpts, timeoutMs: 3_000 });
    expect(conn.apiVersions.size).toBeGreaterThan(10);
    await conn.close();
  } finally {
    await b.close();
  }
});

test('inline PEM stores with an encrypted key, and a listener-prefixed setup', async () => {
  const b = await startTlsBroker(
    certs,
    { listeners: 'INTERNAL://127.0.0.1:0', 'listener.security.protocol.map': 'INTERNAL:SSL', 'inter.broker.listener.name': 'INTERNAL', 'security.inter.broker.protocol': null },
    { listener: 'INTERNAL', format: 'PEM-inline' },
  );
  try {
    const kafka = kafkaJs(b.broker.bootstrapServers, 'inline', { ssl: { ca: [certs.ca.cert] } });
    expect(sorted(await produceAndConsume(kafka, 'inline', values(10)))).toEqual(sorted(values(10)));
  } finally {
    await b.close();
  }
});

test('a server.properties written for Kafka (KRaft combined node, mTLS, PKCS12 stores typed JKS, advertised port 0) works as is', async () => {
  const file = path.join(certs.dir, 'server.properties');
  fs.writeFileSync(
    file,
    [
      'process.roles=broker,controller',
      'node.id=1',
      'controller.quorum.voters=1@127.0.0.1:19093',
      'listeners=SSL://127.0.0.1:0,CONTROLLER://127.0.0.1:0',
      'advertised.listeners=SSL://127.0.0.1:0',
      'controller.listener.names=CONTROLLER',
      'listener.security.protocol.map=CONTROLLER:PLAINTEXT,SSL:SSL',
      'inter.broker.listener.name=SSL',
      `log.dirs=${path.join(certs.dir, 'kafka-logs')}`,
      '# Java 9+ keytool writes PKCS12 even for the default JKS type',
      'ssl.keystore.type=JKS',
      `ssl.keystore.location=${certs.broker.pkcs12File}`,
      `ssl.keystore.password=${certs.password}`,
      `ssl.key.password=${certs.password}`,
      `ssl.truststore.location=${certs.ca.pkcs12TruststoreFile}`,
      `ssl.truststore.password=${certs.password}`,
      'ssl.client.auth=required',
      'ssl.endpoint.identification.algorithm=https',
      'ssl.enabled.protocols=TLSv1.2,TLSv1.3',
      'ssl.protocol=TLSv1.3',
      'ssl.keymanager.algorithm=SunX509',
      'ssl.trustmanager.algorithm=PKIX',
      'ssl.principal.mapping.rules=RULE:^CN=([^,]+),.*$/$1/,DEFAULT',
      '',
    ].join('\n'),
  );
  const broker = await startBroker({ configFile: file, logLevel: 'error' });
  try {
    const ssl = broker.listeners.SSL;
    expect(ssl).toMatch(/^127\.0\.0\.1:(\d+)$/);
    expect(ssl.endsWith(':0')).toBe(false);
    const kafka = kafkaJs([ssl], 'kafka-properties', { ssl: { ca: [certs.ca.cert], cert: certs.client.cert, key: certs.client.key } });
    expect(sorted(await produceAndConsume(kafka, 'kafka-properties', values(10)))).toEqual(sorted(values(10)));
  } finally {
    await broker.close();
  }
});

test('SASL_SSL: SASL inside TLS; mTLS only with the listener-prefixed ssl.client.auth; the principal is the SASL user', async () => {
  const jaas =
    'org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" user_admin="admin-secret" user_alice="alice-secret";';
  const b = await startTlsBroker(certs, {
    listeners: 'SASL_SSL://127.0.0.1:0',
    'security.inter.broker.protocol': 'SASL_SSL',
    'sasl.enabled.mechanisms': 'PLAIN',
    'sasl.mechanism.inter.broker.protocol': 'PLAIN',
    'listener.name.sasl_ssl.plain.sasl.jaas.config': jaas,
    'listener.name.sasl_ssl.ssl.client.auth': 'required',
  });
  try {
    const sasl = { mechanism: 'plain' as const, username: 'alice', password: 'alice-secret' };
    const kafka = kafkaJs(b.broker.bootstrapServers, 'sasl-ssl', { ssl: { ca: [certs.ca.cert], cert: certs.client.cert, key: certs.client.key }, sasl });
    expect(sorted(await produceAndConsume(kafka, 'sasl-ssl', values(10)))).toEqual(sorted(values(10)));
    // Past ApiVersions (18), SaslHandshake (17) and SaslAuthenticate (36), every request is alice's.
    const mine = b.callers.filter((c) => c.clientId === 'sasl-ssl' && ![17, 18, 36].includes(c.apiKey));
    expect(mine.length).toBeGreaterThan(5);
    expect(new Set(mine.map((c) => `${c.principal} ${c.securityProtocol}`))).toEqual(new Set(['User:alice SASL_SSL']));
    // Without a client certificate the TLS handshake fails before SASL starts.
    const admin = kafkaJs(b.broker.bootstrapServers, 'sasl-ssl-nocert', { ssl: { ca: [certs.ca.cert] }, sasl, retry: { retries: 0 } }).admin();
    await rejection(admin.connect());
    await admin.disconnect().catch(() => undefined);
    expect(b.callers.some((c) => c.clientId === 'sasl-ssl-nocert')).toBe(false);
  } finally {
    await b.close();
  }
});

describe('a listener that cannot be set up stops startup, naming the key', () => {
  const attempt = (config: Record<string, string>) => rejection(startBroker({ logLevel: 'error', config: { listeners: 'SSL://127.0.0.1:0', 'security.inter.broker.protocol': 'SSL', ...config } }));

  test.each([
    ['no key store', {}, 'ssl.keystore.location'],
    ['a missing file', { 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': '/nonexistent/ks.p12', 'ssl.keystore.password': 'x' }, 'ssl.keystore.location'],
    ['a wrong password', { 'ssl.keystore.type': 'PKCS12', 'ssl.keystore.location': 'BROKER_P12', 'ssl.keystore.password': 'wrong' }, 'ssl.keystore.password'],
    ['an unsupported type', { 'ssl.keystore.type': 'BKS', 'ssl.keystore.location': 'BROKER_P12', 'ssl.keystore.password': 'x' }, 'ssl.keystore.type'],
    ['a bad mapping rule', { 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': 'BROKER_PEM', 'ssl.truststore.type': 'PEM', 'ssl.truststore.location': 'CA', 'ssl.principal.mapping.rules': 'RULE:nope' }, 'ssl.principal.mapping.rules'],
  ])('%s', async (_name, config, key) => {
    const resolved = Object.fromEntries(
      Object.entries(config).map(([k, v]) => [k, v === 'BROKER_P12' ? certs.broker.pkcs12File : v === 'BROKER_PEM' ? certs.broker.pemKeystoreFile : v === 'CA' ? certs.ca.certFile : v]),
    );
    const err = await attempt(resolved);
    expect(err.message).toContain(key);
  });

  test('an inter-broker listener whose trust store does not trust its own key store', async () => {
    const err = await attempt({
      'ssl.keystore.type': 'PEM',
      'ssl.keystore.location': certs.broker.pemKeystoreFile,
      'ssl.truststore.type': 'PEM',
      'ssl.truststore.location': path.join(otherCa.dir, 'ca.pem'),
    });
    expect(err.message).toContain("A client SSLEngine created with the provided settings can't connect to a server SSLEngine created with those settings");
  });
});
