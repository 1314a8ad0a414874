import { DelayedOperation, DelayedOperationPurgatory } from './purgatory';

class Waiter extends DelayedOperation {
  result: 'ready' | 'expired' | undefined;
  constructor(delayMs: number, private ready: () => boolean) {
    super(delayMs);
  }
  tryComplete(): boolean {
    return this.ready() ? this.forceComplete() : false;
  }
  protected onComplete(): void {
    this.result = this.ready() ? 'ready' : 'expired';
  }
}

describe('DelayedOperationPurgatory', () => {
  test('completes immediately when the condition already holds', () => {
    const p = new DelayedOperationPurgatory<Waiter>('t');
    const w = new Waiter(1000, () => true);
    expect(p.tryCompleteElseWatch(w, ['a'])).toBe(true);
    expect(w.result).toBe('ready');
    expect(p.watched).toBe(0);
  });

  test('completes on checkAndComplete of a watched key, exactly once', () => {
    const p = new DelayedOperationPurgatory<Waiter>('t');
    let ready = false;
    const w = new Waiter(60_000, () => ready);
    expect(p.tryCompleteElseWatch(w, ['a', 'b'])).toBe(false);
    expect(p.checkAndComplete('a')).toBe(0);
    ready = true;
    expect(p.checkAndComplete('b')).toBe(1);
    expect(w.result).toBe('ready');
    expect(p.checkAndComplete('a')).toBe(0);
    expect(p.watched).toBe(0);
  });

  test('expires after its delay with what it has', async () => {
    const p = new DelayedOperationPurgatory<Waiter>('t');
    const done = new Promise<void>((resolve) => {
      const w = new Waiter(20, () => false);
      const orig = w.forceComplete.bind(w);
      w.forceComplete = () => {
        const r = orig();
        resolve();
        return r;
      };
      p.tryCompleteElseWatch(w, ['a']);
    });
    await done;
    expect(p.watched).toBe(0);
  });

  test('completeAll answers every waiting operation', () => {
    const p = new DelayedOperationPurgatory<Waiter>('t');
    const ws = [new Waiter(60_000, () => false), new Waiter(60_000, () => false)];
    ws.forEach((w, i) => p.tryCompleteElseWatch(w, [`k${i}`]));
    p.completeAll();
    expect(ws.map((w) => w.result)).toEqual(['expired', 'expired']);
  });
});
