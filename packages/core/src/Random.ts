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

/**
 * The mulberry32 sequence as raw 32-bit words, written in bulk, for loops that draw millions of
 * numbers (bootstrap resampling, sign flips). Word k times 2^-32 is the k-th number of
 * `mulberry32(seed)`, so both views of one seed agree.
 *
 * @example
 * const words = Random.mulberry32Words(7)
 * const out = new Uint32Array(4)
 * words.fill(out) // out[0] / 2 ** 32 === Random.mulberry32(7)()
 */
export const mulberry32Words = (seed: number): { readonly fill: (out: Uint32Array) => void } => {
  let state = seed >>> 0
  return {
    fill: (out) => {
      let s = state
      for (let i = 0; i < out.length; i++) {
        s = (s + 0x6d2b79f5) >>> 0
        let z = s
        z = Math.imul(z ^ (z >>> 15), z | 1)
        z ^= z + Math.imul(z ^ (z >>> 7), z | 61)
        out[i] = (z ^ (z >>> 14)) >>> 0
      }
      state = s
    }
  }
}
