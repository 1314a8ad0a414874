// @platformatic/kafka (ESM only) altering and describing client quotas on krill; run in a child
// process by client-quotas-api.test.ts:  node client-quotas.mjs HOST:PORT PREFIX OUT.json
// Every step's answer (or the protocol errors it failed with) goes to OUT.json, for the test to
// compare with what Kafka answers; user / client-id names start with PREFIX so runs do not mix.
import { writeFileSync } from 'node:fs';
import { Admin } from '@platformatic/kafka';

const [bootstrap, prefix, outFile] = process.argv.slice(2);
const admin = new Admin({ clientId: 'krill-compat-quotas', bootstrapBrokers: [bootstrap], timeout: 10_000, retries: 1, retryDelay: 100 });
const EXACT = 0;
const DEFAULT = 1;
const ANY = 2;

/** The protocol errors inside a client error (the client nests them in MultipleErrors). */
function protocolErrors(err) {
  const out = [];
  const walk = (e) => {
    if (!e) return;
    if (e.apiId !== undefined) out.push({ apiId: e.apiId, apiCode: e.apiCode, serverErrorMessage: e.serverErrorMessage ?? null });
    for (const inner of e.errors ?? []) walk(inner);
  };
  walk(err);
  return out;
}

async function attempt(fn) {
  try {
    return { ok: await fn() };
  } catch (err) {
    const errors = protocolErrors(err);
    if (errors.length === 0) throw err;
    return { errors };
  }
}

const steps = {};
try {
  const user = `${prefix}-alice`;
  steps.set = await admin.alterClientQuotas({
    entries: [
      { entities: [{ entityType: 'user', entityName: user }], ops: [{ key: 'producer_byte_rate', value: 1048576, remove: false }, { key: 'consumer_byte_rate', value: 2097152, remove: false }] },
      { entities: [{ entityType: 'user', entityName: user }, { entityType: 'client-id', entityName: `${prefix}-app` }], ops: [{ key: 'request_percentage', value: 25.5, remove: false }] },
      { entities: [{ entityType: 'client-id', entityName: null }], ops: [{ key: 'controller_mutation_rate', value: 10, remove: false }] },
    ],
  });
  steps.describeUser = await admin.describeClientQuotas({ components: [{ entityType: 'user', matchType: EXACT, match: user }] });
  steps.describeUserStrict = await admin.describeClientQuotas({ components: [{ entityType: 'user', matchType: EXACT, match: user }], strict: true });
  steps.describeDefaultClient = await admin.describeClientQuotas({ components: [{ entityType: 'client-id', matchType: DEFAULT }], strict: true });
  steps.validateOnly = await admin.alterClientQuotas({
    entries: [{ entities: [{ entityType: 'user', entityName: `${prefix}-bob` }], ops: [{ key: 'producer_byte_rate', value: 5, remove: false }] }],
    validateOnly: true,
  });
  steps.describeBob = await admin.describeClientQuotas({ components: [{ entityType: 'user', matchType: EXACT, match: `${prefix}-bob` }] });
  steps.invalid = await attempt(() =>
    admin.alterClientQuotas({ entries: [{ entities: [{ entityType: 'user', entityName: `${prefix}-carol` }], ops: [{ key: 'producer_byte_rate', value: 1.5, remove: false }] }] }),
  );
  steps.badFilter = await attempt(() => admin.describeClientQuotas({ components: [{ entityType: 'ip', matchType: ANY }, { entityType: 'user', matchType: ANY }] }));
  steps.remove = await admin.alterClientQuotas({
    entries: [{ entities: [{ entityType: 'user', entityName: user }], ops: [{ key: 'consumer_byte_rate', remove: true }] }],
  });
  steps.describeAfterRemove = await admin.describeClientQuotas({ components: [{ entityType: 'user', matchType: EXACT, match: user }], strict: true });
  writeFileSync(outFile, JSON.stringify(steps));
  process.stdout.write('ok\n');
} catch (err) {
  process.stderr.write(`${err?.stack ?? err}\n${JSON.stringify(protocolErrors(err))}\n`);
  process.exitCode = 1;
} finally {
  await admin.close();
}
