/**
 * A SIGKILL between COPY_SEGMENT_STARTED and COPY_SEGMENT_FINISHED (issue 12): the CLI broker
 * copies through a custom storage manager (a JS module named by remote.log.storage.manager.class.name,
 * wrapping krill's LocalTieredStorage) that, while a control file exists, announces the copy and
 * then never finishes it; the process is killed there. After the restart (the control file gone)
 * the dangling COPY_SEGMENT_STARTED is cleaned up (DELETE_SEGMENT_STARTED, FINISHED), the segment
 * is copied again under a new id, nothing acknowledged is lost, and a consumer reads everything
 * from offset 0 through remote storage.
 */
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { connect, fetchAll, produce } from '../../client/network-client';
import { startTestBroker, type TestBroker } from '../helpers/brokers';
import { deserializeRemoteLogMetadata } from '../../storage/remote/remote-log-metadata-serde';
import { RemoteLogSegmentState } from '../../storage/remote/remote-log-segment-metadata';
import { createTopic } from '../recovery/helpers';
import { waitFor } from '../replication/helpers';

jest.setTimeout(90_000);

const TOPIC = 'crash-copy';
const control = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-rsm-control-'));
const remote = fs.mkdtempSync(path.join(os.tmpdir(), 'krill-remote-crash-'));
let broker: TestBroker | undefined;

const LOCAL_TIERED_STORAGE_JS = path.resolve(__dirname, '..', '..', 'dist', 'storage', 'remote', 'local-tiered-storage.js');
const MODULE = path.join(control, 'hanging-rsm.js');
fs.writeFileSync(
  MODULE,
  `'use strict';
const fs = require('node:fs');
const path = require('node:path');
const { LocalTieredStorage } = require(${JSON.stringify(LOCAL_TIERED_STORAGE_JS)});
const CONTROL = ${JSON.stringify(control)};
// LocalTieredStorage, except that while CONTROL/hang exists a copy announces itself and never ends.
class HangingRemoteStorageManager extends LocalTieredStorage {
  async copyLogSegmentData(metadata, data) {
    if (fs.existsSync(path.join(CONTROL, 'hang'))) {
      fs.writeFileSync(path.join(CONTROL, 'hanging'), metadata.remoteLogSegmentId.id);
      return new Promise(() => {});
    }
    return super.copyLogSegmentData(metadata, data);
  }
}
module.exports = HangingRemoteStorageManager;
`,
);

afterAll(async () => {
  await broker?.close();
  fs.rmSync(control, { recursive: true, force: true });
  fs.rmSync(remote, { recursive: true, force: true });
});

test('SIGKILL between COPY_SEGMENT_STARTED and FINISHED: the dangling copy is cleaned up, the segment copied again, nothing lost', async () => {
  fs.writeFileSync(path.join(control, 'hang'), '');
  broker = await startTestBroker('cli', {
    config: {
      'remote.log.storage.system.enable': true,
      'remote.log.storage.manager.class.name': MODULE,
      'rsm.config.dir': remote,
      'remote.log.manager.task.interval.ms': 100,
      'log.retention.check.interval.ms': 100,
      'rlmm.config.remote.log.metadata.topic.num.partitions': 1,
    },
  });
  let conn = await connect(broker.host, broker.port);
  const values: string[] = [];
  try {
    await createTopic(conn, TOPIC, { 'remote.storage.enable': 'true', 'segment.bytes': '2048', 'local.retention.bytes': '1', 'retention.ms': '-1' });
    for (let i = 0; i < 30; i++) {
      const batch = Array.from({ length: 5 }, (_, j) => `v${i * 5 + j}-${'k'.repeat(100)}`);
      const r = await produce(conn, TOPIC, 0, batch.map((value) => ({ value })), { acks: -1 });
      expect(r?.baseOffset).toBe(BigInt(i * 5));
      values.push(...batch);
    }
  } finally {
    await conn.close();
  }
  // the first copy has published COPY_SEGMENT_STARTED and hangs: kill the process right there
  await waitFor('a copy under way', () => fs.existsSync(path.join(control, 'hanging')), 20_000, 20);
  const danglingId = fs.readFileSync(path.join(control, 'hanging'), 'utf8');
  await broker.kill9();
  fs.rmSync(path.join(control, 'hang'));
  await broker.start();

  conn = await connect(broker.host, broker.port);
  try {
    // the metadata topic tells the story of the dangling segment and of its second copy
    const states = async (): Promise<Map<string, RemoteLogSegmentState[]>> => {
      const all = await fetchAll(conn, '__remote_log_metadata', 0, 0n);
      const out = new Map<string, RemoteLogSegmentState[]>();
      for (const r of all.records) {
        const e = deserializeRemoteLogMetadata(r.value!);
        if (e.kind === 'segment') out.set(e.metadata.remoteLogSegmentId.id, [e.metadata.state]);
        else if (e.kind === 'segmentUpdate') out.get(e.update.remoteLogSegmentId.id)?.push(e.update.state);
      }
      return out;
    };
    const S = RemoteLogSegmentState;
    const seen = await waitFor('the dangling copy cleaned up and every rolled segment copied', async () => {
      const m = await states();
      const dangling = m.get(danglingId);
      const finished = [...m.values()].filter((s) => s[s.length - 1] === S.COPY_SEGMENT_FINISHED).length;
      return dangling && dangling[dangling.length - 1] === S.DELETE_SEGMENT_FINISHED && finished >= 5 ? m : null;
    }, 30_000, 200);
    expect(seen.get(danglingId)).toEqual([S.COPY_SEGMENT_STARTED, S.DELETE_SEGMENT_STARTED, S.DELETE_SEGMENT_FINISHED]);
    // everything acknowledged reads back from offset 0, most of it from remote storage
    const read = await fetchAll(conn, TOPIC, 0, 0n);
    expect(read.records.map((r) => r.value!.toString())).toEqual(values);
    expect(read.logStartOffset).toBe(0n);
  } finally {
    await conn.close();
  }
});
