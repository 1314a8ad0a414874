// @platformatic/kafka (ESM only) changing a krill broker's log levels at run time through the
// BROKER_LOGGER config resource (type 8); run in a child process by metrics.test.ts:
//   node broker-logger.mjs HOST:PORT NODE_ID
// Prints one JSON line: what DescribeConfigs said before and after each IncrementalAlterConfigs,
// and the error codes and messages of the requests krill must refuse.
import { Admin } from '@platformatic/kafka';

const [bootstrap, nodeId] = process.argv.slice(2);
const admin = new Admin({ clientId: 'krill-compat-broker-logger', bootstrapBrokers: [bootstrap], timeout: 10_000, retries: 0 });
const BROKER_LOGGER = 8;
const SET = 0;
const DELETE = 1;
const APPEND = 2;
const resource = (configs) => ({ resourceType: BROKER_LOGGER, resourceName: nodeId, configs });

async function levels(names) {
  const [d] = await admin.describeConfigs({ resources: [{ resourceType: BROKER_LOGGER, resourceName: nodeId, configurationKeys: names }] });
  return Object.fromEntries(d.configs.map((c) => [c.name, c.value]));
}

/** The per-resource errors a refused request carried (found in the error's response). */
function refusal(err) {
  const found = [];
  const walk = (e, depth) => {
    if (!e || depth > 5) return;
    for (const r of e.response?.responses ?? []) if (r.errorCode) found.push({ errorCode: r.errorCode, errorMessage: r.errorMessage });
    for (const inner of e.errors ?? []) walk(inner, depth + 1);
  };
  walk(err, 0);
  return found.length > 0 ? found : [{ message: String(err?.message ?? err) }];
}

async function alter(configs) {
  try {
    await admin.incrementalAlterConfigs({ resources: [resource(configs)] });
    return 'ok';
  } catch (err) {
    return refusal(err);
  }
}

const report = {};
try {
  const names = ['root', 'kafka.server.ReplicaManager', 'kafka.log.LogManager'];
  const [all] = await admin.describeConfigs({ resources: [{ resourceType: BROKER_LOGGER, resourceName: nodeId }] });
  report.loggerCount = all.configs.length;
  report.before = await levels(names);
  report.setTrace = await alter([{ name: 'kafka.server.ReplicaManager', configOperation: SET, value: 'TRACE' }]);
  report.afterSet = await levels(names);
  report.setParent = await alter([{ name: 'kafka', configOperation: SET, value: 'DEBUG' }]);
  report.afterParent = await levels(names);
  report.badLevel = await alter([{ name: 'root', configOperation: SET, value: 'verbose' }]);
  report.unknownLogger = await alter([{ name: 'no.such.Logger', configOperation: SET, value: 'INFO' }]);
  report.append = await alter([{ name: 'root', configOperation: APPEND, value: 'INFO' }]);
  report.deleteRoot = await alter([{ name: 'root', configOperation: DELETE }]);
  report.afterRefusals = await levels(names);
  report.delete = await alter([{ name: 'kafka.server.ReplicaManager', configOperation: DELETE }]);
  report.afterDelete = await levels(names);
  report.deleteParent = await alter([{ name: 'kafka', configOperation: DELETE }]);
  report.afterAll = await levels(names);
} finally {
  await admin.close();
}
process.stdout.write(JSON.stringify(report) + '\n');
