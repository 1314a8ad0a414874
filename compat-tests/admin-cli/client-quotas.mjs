// @platformatic/kafka (ESM only) describing client quotas, run in a child process by
// client-quotas.test.ts:  node client-quotas.mjs HOST:PORT COMPONENTS_JSON
// Prints the DescribeClientQuotas entries (strict) for the components as one JSON line.
import { Admin } from '@platformatic/kafka';

const [bootstrap, componentsJson] = process.argv.slice(2);
const admin = new Admin({ clientId: 'krill-cli-quotas', bootstrapBrokers: [bootstrap], timeout: 10_000, retries: 1, retryDelay: 100 });
try {
  const entries = await admin.describeClientQuotas({ components: JSON.parse(componentsJson), strict: true });
  process.stdout.write(JSON.stringify(entries) + '\n');
} catch (err) {
  process.stderr.write(`${err?.stack ?? err}\n`);
  process.exitCode = 1;
} finally {
  await admin.close();
}
