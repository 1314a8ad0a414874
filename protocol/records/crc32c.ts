/**
 * CRC-32C (Castagnoli) for record batches. fast-crc32c silently falls back to a pure-JS
 * implementation ~20x slower when its native binding did not build; `crc32cImplementation` says
 * which one loaded so the broker can log it at startup.
 */
// eslint-disable-next-line @typescript-eslint/no-var-requires
const fast: { calculate(buf: Buffer | string, initial?: number): number } = require('fast-crc32c');

function detectImplementation(): 'native' | 'javascript' {
  try {
    // The loader tries the SSE 4.2 binding first; if it loads, that is what fast-crc32c returns.
    // eslint-disable-next-line @typescript-eslint/no-var-requires
    const native = require('fast-crc32c/impls/sse4_crc32c');
    return native.calculate === fast.calculate ? 'native' : 'javascript';
  } catch {
    return 'javascript';
  }
}

export const crc32cImplementation = detectImplementation();

export function crc32c(buf: Buffer, initial = 0): number {
  return fast.calculate(buf, initial) >>> 0;
}
