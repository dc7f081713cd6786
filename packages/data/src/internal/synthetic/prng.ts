import { Random } from "@cupid-lab/core"

/**
 * Sampling helpers over core's keyed PRNG (sfc32, seeded through a hash of integer keys). The generator
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

export const make = (...keys: ReadonlyArray<number>): Rng => {
  const next = Random.keyed(...keys)
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
