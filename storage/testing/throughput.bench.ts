/**
 * Opt-in throughput measurement, not part of npm test (its name is not *.test.ts): npm run bench:storage
 * Appends 1000-record batches of 1 KiB values through UnifiedLog, then reads them back.
 */
import * as path from 'node:path';
import { logConfig } from '../log-config';
import { nodeFs } from '../fs';
import { UnifiedLog } from '../unified-log';
import { testBatch } from './batches';
import { removeTempDirs, tempDir } from './temp-dir';

const run = describe;
afterAll(removeTempDirs);

run('storage throughput', () => {
  test('append and read, 1000 x 1 KiB records per batch', () => {
    const batches = Number(process.env.KRILL_BENCH_BATCHES ?? 300);
    const template = testBatch({ count: 1000, valueSize: 1024, timestamp: Date.now() });
    const results: string[] = [];
    for (const origin of (process.env.KRILL_BENCH_ORIGINS ?? 'client,coordinator').split(',') as ('client' | 'coordinator')[]) {
      const log = UnifiedLog.load({ dir: path.join(tempDir(), 't-0'), tp: { topic: 't', partition: 0 }, config: logConfig(), fs: nodeFs });
      const t0 = process.hrtime.bigint();
      for (let i = 0; i < batches; i++) {
        template.fill(0, 0, 8); // clients send baseOffset 0; the log patched it last time
        log.appendAsLeader(template, { leaderEpoch: 0, origin });
      }
      const t1 = process.hrtime.bigint();
      const bytes = template.length * batches;
      results.push(`append (${origin} validation): ${((bytes / 1e6) / (Number(t1 - t0) / 1e9)).toFixed(0)} MB/s`);
      log.updateHighWatermark(log.logEndOffset);
      let next = 0n;
      let read = 0;
      const r0 = process.hrtime.bigint();
      while (next < log.logEndOffset) {
        const r = log.read(next, 4 * 1024 * 1024, { minOneMessage: true });
        read += r.sizeInBytes;
        const last = r.records[r.records.length - 1];
        next = last.readBigInt64BE(last.length - template.length) + 1000n;
      }
      const r1 = process.hrtime.bigint();
      results.push(`read (4 MiB fetches, page cache): ${((read / 1e6) / (Number(r1 - r0) / 1e9)).toFixed(0)} MB/s`);
      log.close();
    }
    // eslint-disable-next-line no-console
    console.log(results.join('\n'));
  });
});
