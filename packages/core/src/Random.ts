/**
 * The project's seeded pseudo-random generators, for anything that must be reproducible across
 * runs and machines; not for cryptography. `mulberry32` (a 32-bit counter through an
 * xorshift-multiply mix) serves bootstrap resampling, sign flips, transforms, test fixtures and
 * random initializations; `keyed` (sfc32 seeded by hashing integer keys) gives independent streams
 * per key tuple, e.g. one per persona of generated data.
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

const mix = (h: number, key: number): number => {
  // Safe integers beyond 32 bits contribute both halves.
  const lo = key >>> 0
  const hi = Math.floor(key / 0x100000000) >>> 0
  for (const part of [lo, hi]) {
    h = Math.imul(h ^ part, 0x85ebca6b)
    h ^= h >>> 13
    h = Math.imul(h, 0xc2b2ae35)
    h ^= h >>> 16
  }
  return h >>> 0
}

/**
 * An sfc32 stream seeded by a splitmix-style hash of integer keys: `keyed(seed, persona, 3)` does
 * not depend on how many other streams were drawn before it.
 *
 * @example
 * const next = Random.keyed(7, 0)
 * next() // a float in [0, 1), the same on every run
 */
export const keyed = (...keys: ReadonlyArray<number>): (() => number) => {
  let h = 0x9e3779b9
  for (const key of keys) h = mix(h, key)
  let a = mix(h, 1)
  let b = mix(h, 2)
  let c = mix(h, 3)
  let d = 1
  const next = (): number => {
    const t = (((a + b) >>> 0) + d) >>> 0
    d = (d + 1) >>> 0
    a = b ^ (b >>> 9)
    b = (c + (c << 3)) >>> 0
    c = ((c << 21) | (c >>> 11)) >>> 0
    c = (c + t) >>> 0
    return t / 0x100000000
  }
  for (let i = 0; i < 12; i++) next()
  return next
}
