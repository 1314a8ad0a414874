// @platformatic/kafka (ESM only) managing a client-metrics subscription (KIP-714 CLIENT_METRICS
// resource, type 16) on krill; run in a child process by compat-tests/librdkafka/client-telemetry.test.ts:
//   node client-metrics.mjs HOST:PORT NAME CLIENT_ID
// Sets the subscription with incrementalAlterConfigs (metrics org.apache.kafka., interval.ms 500,
// matching CLIENT_ID), tries a bad interval (the broker's answer is reported), describes it with describeConfigs, and
// prints one JSON line: { described, refused }.
import { Admin } from '@platformatic/kafka';

const [bootstrap, name, clientId] = process.argv.slice(2);
const admin = new Admin({ clientId: 'krill-compat-client-metrics', bootstrapBrokers: [bootstrap], timeout: 10_000, retries: 1, retryDelay: 100 });
try {
  await admin.incrementalAlterConfigs({
    resources: [
      {
        resourceType: 16,
        resourceName: name,
        configs: [
          { name: 'metrics', configOperation: 0, value: 'org.apache.kafka.' },
          { name: 'interval.ms', configOperation: 0, value: '500' },
          { name: 'match', configOperation: 0, value: `client_id=${clientId}` },
        ],
      },
    ],
  });
  let refused = null;
  try {
    await admin.incrementalAlterConfigs({ resources: [{ resourceType: 16, resourceName: name, configs: [{ name: 'interval.ms', configOperation: 0, value: '10' }] }] });
  } catch (err) {
    // A ResponseError (the error itself or one in an AggregateError) carries the broker's response.
    const failed = [err, ...(err.errors ?? [])].find((e) => e.response?.responses);
    const r = failed?.response.responses[0];
    refused = r ? { errorCode: r.errorCode, errorMessage: r.errorMessage } : { error: String(err) };
  }
  const described = await admin.describeConfigs({ resources: [{ resourceType: 16, resourceName: name }] });
  process.stdout.write(JSON.stringify({ described, refused }) + '\n');
} finally {
  await admin.close();
}
