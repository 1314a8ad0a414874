// @platformatic/kafka (ESM only) altering and describing GROUP (32) config resources on krill;
// run in a child process by group-configs.test.ts:  node group-configs.mjs HOST:PORT GROUP OUT.json
// Sets GROUP's consumer.session.timeout.ms / consumer.heartbeat.interval.ms with
// incrementalAlterConfigs, replaces GROUP-legacy's set with alterConfigs, describes both (with
// synonyms), tries an unknown config name and an out-of-bounds value, writes what it saw to
// OUT.json (errors as their messages and serialized form), then prints "ok".
import { writeFileSync } from 'node:fs';
import { Admin } from '@platformatic/kafka';

const GROUP = 32;
const [bootstrap, group, outFile] = process.argv.slice(2);
const admin = new Admin({ clientId: 'krill-compat-group-configs', bootstrapBrokers: [bootstrap], timeout: 10_000, retries: 0, retryDelay: 100 });
const failure = async (fn) => {
  try {
    await fn();
    return null;
  } catch (err) {
    // An AggregateError: the broker's answers are in its nested errors.
    const flat = (e) => ({ message: e?.message, code: e?.code, response: e?.response, errors: Array.isArray(e?.errors) ? e.errors.map(flat) : undefined });
    return { message: err.message, detail: JSON.stringify(flat(err), (_k, v) => (typeof v === 'bigint' ? v.toString() : v)) };
  }
};
try {
  await admin.incrementalAlterConfigs({
    resources: [
      {
        resourceType: GROUP,
        resourceName: group,
        configs: [
          { name: 'consumer.session.timeout.ms', configOperation: 0, value: '50000' },
          { name: 'consumer.heartbeat.interval.ms', configOperation: 0, value: '6000' },
        ],
      },
    ],
  });
  await admin.alterConfigs({ resources: [{ resourceType: GROUP, resourceName: `${group}-legacy`, configs: [{ name: 'consumer.heartbeat.interval.ms', value: '7000' }] }] });
  const described = await admin.describeConfigs({
    resources: [
      { resourceType: GROUP, resourceName: group },
      { resourceType: GROUP, resourceName: `${group}-legacy`, configurationKeys: ['consumer.heartbeat.interval.ms'] },
    ],
    includeSynonyms: true,
    includeDocumentation: true,
  });
  const unknown = await failure(() =>
    admin.incrementalAlterConfigs({ resources: [{ resourceType: GROUP, resourceName: group, configs: [{ name: 'nope.ms', configOperation: 0, value: '1' }] }] }),
  );
  const bound = await failure(() =>
    admin.incrementalAlterConfigs({ resources: [{ resourceType: GROUP, resourceName: group, configs: [{ name: 'consumer.heartbeat.interval.ms', configOperation: 0, value: '20000' }] }] }),
  );
  writeFileSync(outFile, JSON.stringify({ described, unknown, bound }, (_k, v) => (typeof v === 'bigint' ? v.toString() : v)));
  process.stdout.write('ok\n');
} finally {
  await admin.close();
}
