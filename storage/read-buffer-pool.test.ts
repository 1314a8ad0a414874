import { ReadBufferPool } from './read-buffer-pool';

describe('ReadBufferPool', () => {
  test('reuses released buffers, refuses reads larger than a buffer, ignores double releases', () => {
    const pool = new ReadBufferPool(1024, 2);
    const a = pool.acquire(100)!;
    expect(a.length).toBe(1024);
    expect(pool.acquire(2000)).toBeNull();
    pool.release(a);
    pool.release(a);
    expect(pool.pooled).toBe(1);
    expect(pool.acquire(1024)).toBe(a);
    expect(pool.inUse).toBe(1);
  });

  test('keeps at most maxFree buffers', () => {
    const pool = new ReadBufferPool(16, 2);
    const bufs = [pool.acquire(1)!, pool.acquire(1)!, pool.acquire(1)!];
    for (const b of bufs) pool.release(b);
    expect(pool.pooled).toBe(2);
    expect(pool.inUse).toBe(0);
  });
});
