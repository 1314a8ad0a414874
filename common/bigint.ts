/** min / max for int64 values (offsets, producer ids), which are bigint. */
export function bigMax(a: bigint, b: bigint): bigint {
  return a > b ? a : b;
}

export function bigMin(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}
