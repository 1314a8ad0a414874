/**
 * A KRaft controller quorum whose controller listener is SASL_SSL (PLAIN over mutual TLS): the three
 * voters reach each other with the controller listener's TLS stores and
 * `sasl.mechanism.controller.protocol` login (ControllerServer's voter connections), so they elect a
 * leader and commit; the broker registers over the same listener; the listener serves nothing
 * unauthenticated. Every Vote / BeginQuorumEpoch / raft Fetch a controller received came over
 * SASL_SSL from the JAAS login's principal. In-process (startCluster({ controllers: 3 })).
 */
import { startCluster, type RunningCluster } from '../../broker/cluster';
import { createTestCertificates, type RequestRecording, type TestCertificates } from '../../broker';
import { waitFor } from '../replication/helpers';
import { plainJaas } from './sasl-helpers';
import { RawSocket, requestFrame } from '../helpers/raw-socket';
import { connect } from '../../client/network-client';

jest.setTimeout(60_000);

let certs: TestCertificates;
let cluster: RunningCluster | undefined;

afterAll(async () => {
  await cluster?.close();
  certs?.cleanup();
});

test('voters of a SASL_SSL controller listener elect, commit and serve brokers; nothing unauthenticated is served', async () => {
  certs = createTestCertificates();
  const c = (cluster = await startCluster({
    brokers: 1,
    controllers: 3,
    logLevel: 'error',
    config: {
      'controller.quorum.election.timeout.ms': '300',
      'controller.quorum.fetch.timeout.ms': '800',
      'controller.quorum.election.backoff.max.ms': '300',
      'broker.heartbeat.interval.ms': '100',
      'offsets.topic.num.partitions': '1',
      'controller.listener.names': 'CONTROLLER',
      'listener.security.protocol.map': 'CONTROLLER:SASL_SSL,PLAINTEXT:PLAINTEXT',
      'sasl.enabled.mechanisms': 'PLAIN',
      'sasl.mechanism.controller.protocol': 'PLAIN',
      'listener.name.controller.plain.sasl.jaas.config': plainJaas(),
      ...certs.brokerSsl({ listener: 'CONTROLLER', format: 'PKCS12', clientAuth: 'required' }),
    },
  }));
  // What the first controller receives from the other voters (and, if it leads, the broker's metadata fetches).
  const recordings: RequestRecording[] = ['Vote', 'BeginQuorumEpoch', 'Fetch'].map((api) => c.control.controller.record({ api }, { bodies: false }));
  const active = await waitFor('an active controller', () => c.activeController(), 10_000, 10);
  await waitFor('the broker registered and unfenced', () => {
    const b = active.controller.image.broker(0);
    return b !== undefined && !b.fenced;
  }, 10_000, 10);

  // A topic through the broker (forwarded to the active controller over SASL_SSL).
  const [host, port] = c.bootstrapServers[0].split(':');
  const conn = await connect(host, Number(port), { clientId: 'quorum-security' });
  try {
    const res = await conn.send('CreateTopics', undefined, { topics: [{ name: 'secured', numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }], timeoutMs: 10_000, validateOnly: false });
    expect(res.topics[0].errorCode).toBe(0);
  } finally {
    await conn.close();
  }
  for (const s of c.controllers.values()) await waitFor(`controller ${s.nodeId} has the topic`, () => s.controller.image.topic('secured') !== undefined, 10_000, 10);

  // Every controller listener refuses a plaintext request: the voters' traffic was secured.
  for (const s of c.controllers.values()) {
    const raw = await RawSocket.connect(s.endpoint.host, s.endpoint.port);
    await raw.write(requestFrame(18, 3, 1, { clientSoftwareName: 'plain', clientSoftwareVersion: '1' }));
    await raw.waitForClose();
    expect(raw.bufferedFrames).toBe(0);
  }
  const seen = recordings.flatMap((r) => r.requests);
  // A leader receives the other voters' Fetches, a follower the leader's BeginQuorumEpoch (every fetch
  // timeout / 2) and the election's Votes: either way the first controller heard from its peers.
  expect(seen.length).toBeGreaterThan(0);
  for (const r of seen) {
    expect(r.securityProtocol).toBe('SASL_SSL');
    expect(r.principal).toBe('User:admin');
  }
});
