// @platformatic/kafka (ESM only) sending AlterReplicaLogDirs v2 with its low-level API (its Admin
// has no such method); run in a child process by admin/alter-replica-log-dirs.test.ts:
//   node alter-replica-log-dirs.mjs HOST PORT DIR TOPIC BAD_DIR
// Moves TOPIC-0 to DIR, then asks for BAD_DIR (the client throws a ResponseError carrying the
// response), and prints both answers as one JSON line.
import { Connection, alterReplicaLogDirsV2 } from '@platformatic/kafka';

const [host, port, dir, topic, badDir] = process.argv.slice(2);
const conn = new Connection('krill-compat-alterdirs', { connectTimeout: 10_000 });
try {
  await conn.connect(host, Number(port));
  const ok = await alterReplicaLogDirsV2.api.async(conn, [{ path: dir, topics: [{ name: topic, partitions: [0] }] }]);
  let bad;
  try {
    bad = await alterReplicaLogDirsV2.api.async(conn, [{ path: badDir, topics: [{ name: topic, partitions: [0] }] }]);
  } catch (err) {
    if (!err.response) throw err;
    bad = err.response;
  }
  process.stdout.write(JSON.stringify({ ok, bad }) + '\n');
} finally {
  await conn.close();
}
