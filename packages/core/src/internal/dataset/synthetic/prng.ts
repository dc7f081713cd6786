/**
 * A small seeded PRNG (sfc32, seeded through a splitmix-style hash of integer keys). The generator
 * derives one stream per persona and per instance from `(seed, persona, ...)`, so a persona's text
 * does not depend on how many personas come before it or which instance types are requested.
 */
export interface Rng {
  /** Uniform in [0, 1). */
  readonly next: () => number
  /** Uniform integer in [0, n). */
  readonly int: (n: number) => number
  readonly chance: (p: number) => boolean
  readonly pick: <A>(items: ReadonlyArray<A>) => A
  /** `k` distinct items in random order. */
  readonly sample: <A>(items: ReadonlyArray<A>, k: number) => Array<A>
  readonly shuffle: <A>(items: ReadonlyArray<A>) => Array<A>
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

export const make = (...keys: ReadonlyArray<number>): Rng => {
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
  const int = (n: number) => Math.floor(next() * n)
  const shuffle = <A>(items: ReadonlyArray<A>): Array<A> => {
    const out = [...items]
    for (let i = out.length - 1; i > 0; i--) {
      const j = int(i + 1)
      const tmp = out[i]!
      out[i] = out[j]!
      out[j] = tmp
    }
    return out
  }
  return {
    next,
    int,
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new RangeError("pick from an empty list")
      return items[int(items.length)]!
    },
    sample: (items, k) => {
      if (k > items.length) throw new RangeError(`cannot sample ${k} of ${items.length} items`)
      // Partial Fisher-Yates: only the first k swaps are needed.
      const out = [...items]
      for (let i = 0; i < k; i++) {
        const j = i + int(out.length - i)
        const tmp = out[i]!
        out[i] = out[j]!
        out[j] = tmp
      }
      return out.slice(0, k)
    },
    shuffle
  }
}
