/**
 * A small seeded pseudo-random generator (mulberry32: a 32-bit counter through an xorshift-multiply
 * mix), for anything that must be reproducible across runs and machines: bootstrap resampling,
 * test fixtures, random test weights. Not for cryptography.
 *
 * @example
 * import { Random } from "@cupid-lab/core"
 * const next = Random.mulberry32(7)
 * next() // a float in [0, 1), the same on every run
 */
export const mulberry32 = (seed: number): (() => number) => {
  let state = seed >>> 0
  return () => {
    state = (state + 0x6d2b79f5) >>> 0
    let z = state
    z = Math.imul(z ^ (z >>> 15), z | 1)
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61)
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296
  }
}
