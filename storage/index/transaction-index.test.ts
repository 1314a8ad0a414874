import * as nodefs from 'node:fs';
import * as path from 'node:path';
import { FaultyFs } from '../testing/faulty-fs';
import { removeTempDirs, tempDir } from '../testing/temp-dir';
import { TXN_INDEX_ENTRY_SIZE, TransactionIndex, decodeAbortedTxn } from './transaction-index';

afterAll(removeTempDirs);

const t = (pid: bigint, first: bigint, last: bigint, lso: bigint) => ({ producerId: pid, firstOffset: first, lastOffset: last, lastStableOffset: lso });

describe('TransactionIndex', () => {
  test('34-byte Kafka entries, file created on the first append only', () => {
    const file = path.join(tempDir(), '00000000000000000000.txnindex');
    const idx = new TransactionIndex(new FaultyFs(), file, 0n);
    expect(idx.isEmpty).toBe(true);
    expect(nodefs.existsSync(file)).toBe(false);
    idx.append(t(7n, 3n, 10n, 11n));
    idx.append(t(8n, 5n, 12n, 13n));
    idx.close();
    const bytes = nodefs.readFileSync(file);
    expect(bytes.length).toBe(2 * TXN_INDEX_ENTRY_SIZE);
    expect(bytes.readInt16BE(0)).toBe(0);
    expect(decodeAbortedTxn(bytes, 34)).toEqual(t(8n, 5n, 12n, 13n));
    const again = new TransactionIndex(new FaultyFs(), file, 0n);
    expect(again.entries()).toEqual([t(7n, 3n, 10n, 11n), t(8n, 5n, 12n, 13n)]);
  });

  test('a failed open (EMFILE) throws and records nothing', () => {
    const file = path.join(tempDir(), '00000000000000000000.txnindex');
    const fs = new FaultyFs().failNext({ op: 'open', path: '.txnindex', errno: 'EMFILE' });
    const idx = new TransactionIndex(fs, file, 0n);
    expect(() => idx.append(t(7n, 3n, 10n, 11n))).toThrow(/EMFILE/);
    expect(idx.isEmpty).toBe(true);
    idx.append(t(7n, 3n, 10n, 11n));
    expect(idx.entries().length).toBe(1);
    expect(() => idx.append(t(7n, 3n, 10n, 11n))).toThrow(/increase/);
    idx.close();
  });

  test('collectAbortedTxns and truncateTo', () => {
    const file = path.join(tempDir(), '00000000000000000000.txnindex');
    const idx = new TransactionIndex(new FaultyFs(), file, 0n);
    idx.append(t(1n, 0n, 5n, 6n));
    idx.append(t(2n, 3n, 10n, 11n));
    idx.append(t(3n, 12n, 20n, 21n));
    expect(idx.collectAbortedTxns(6n, 12n)).toEqual({ abortedTransactions: [t(2n, 3n, 10n, 11n)], isComplete: true });
    expect(idx.collectAbortedTxns(6n, 30n)).toEqual({ abortedTransactions: [t(2n, 3n, 10n, 11n), t(3n, 12n, 20n, 21n)], isComplete: false });
    expect(idx.collectAbortedTxns(0n, 11n).isComplete).toBe(true);
    idx.truncateTo(10n);
    expect(idx.entries()).toEqual([t(1n, 0n, 5n, 6n)]);
    idx.close();
    expect(nodefs.statSync(file).size).toBe(TXN_INDEX_ENTRY_SIZE);
  });
});
