import { Random } from "@cupid-lab/core"
import { describe, expect, it } from "vitest"
import * as Statistics from "../src/Statistics.js"

describe("Statistics basics", () => {
  it("rng is deterministic and stays in [0, 1)", () => {
    const a = Statistics.rng(7),
      b = Statistics.rng(7),
      c = Statistics.rng(8)
    const xs = Array.from({ length: 1000 }, () => a())
    expect(Array.from({ length: 1000 }, () => b())).toEqual(xs)
    expect(Array.from({ length: 1000 }, () => c())).not.toEqual(xs)
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true)
    // Roughly uniform: the mean of 1000 draws is near 0.5.
    expect(Math.abs(Statistics.mean(xs) - 0.5)).toBeLessThan(0.05)
  })

  it("the word stream and rng draw the same numbers", () => {
    // two fills continue one stream
    const words = new Uint32Array(1000)
    const stream = Random.mulberry32Words((7 >>> 0) ^ 0x9e3779b9)
    stream.fill(words.subarray(0, 400))
    stream.fill(words.subarray(400))
    const next = Statistics.rng(7)
    expect(Array.from(words, (w) => w / 2 ** 32)).toEqual(Array.from({ length: 1000 }, () => next()))
  })

  it("mean and finite", () => {
    expect(Statistics.mean([1, 2, 3, 4])).toBe(2.5)
    expect(Statistics.mean([])).toBeNaN()
    expect(Statistics.finite([1, NaN, Infinity, 2, -Infinity])).toEqual([1, 2])
  })

  it("quantile interpolates linearly between order statistics (type 7)", () => {
    const xs = [1, 2, 3, 4]
    // h = (n - 1) q: q = 0.25 -> h = 0.75 -> 1 + 0.75 * (2 - 1)
    expect(Statistics.quantile(xs, 0.25)).toBe(1.75)
    expect(Statistics.quantile(xs, 0.5)).toBe(2.5)
    expect(Statistics.quantile(xs, 0)).toBe(1)
    expect(Statistics.quantile(xs, 1)).toBe(4)
    // 10 + 0.975 * (20 - 10)
    expect(Statistics.quantile([10, 20], 0.975)).toBe(19.75)
    expect(Statistics.quantile([5], 0.3)).toBe(5)
    expect(Statistics.quantile([], 0.5)).toBeNaN()
  })
})

describe("bootstrapMean", () => {
  it("is deterministic for a seed", () => {
    const xs = [0.2, 0.9, 0.4, 0.4, 1, 0, 0.65]
    const first = Statistics.bootstrapMean(xs, { seed: 3 })
    expect(Statistics.bootstrapMean(xs, { seed: 3 })).toEqual(first)
    expect(Statistics.bootstrapMean(xs, { seed: 4 }).ci95).not.toEqual(first.ci95)
    expect(first.mean).toBeCloseTo(3.55 / 7, 12)
    expect(first.n).toBe(7)
  })

  it("leaves non-finite values out and reports the N that remains", () => {
    const e = Statistics.bootstrapMean([1, NaN, 3, Infinity], { seed: 1 })
    expect(e.n).toBe(2)
    expect(e.mean).toBe(2)
  })

  it("gives no interval for fewer than two values, and a degenerate one for constant values", () => {
    expect(Statistics.bootstrapMean([7], { seed: 1 })).toEqual({ n: 1, mean: 7, ci95: [NaN, NaN] })
    const none = Statistics.bootstrapMean([], { seed: 1 })
    expect(none.n).toBe(0)
    expect(none.mean).toBeNaN()
    const constant = Statistics.bootstrapMean([0.5, 0.5, 0.5, 0.5], { seed: 1 })
    expect(constant.ci95).toEqual([0.5, 0.5])
  })

  it("spans the possible resample means of {0, 1}", () => {
    // Resample means are 0, 0.5, 1 with probabilities 1/4, 1/2, 1/4, so the 2.5% and 97.5%
    // quantiles of 1000 resamples are 0 and 1.
    expect(Statistics.bootstrapMean([0, 1], { seed: 11 }).ci95).toEqual([0, 1])
  })

  it("covers the mean with about the normal-theory width, shrinking with n", () => {
    // 0..99: mean 49.5, sd 29.01, standard error 2.90, normal 95% half-width 5.69.
    const xs = Array.from({ length: 100 }, (_, i) => i)
    const e = Statistics.bootstrapMean(xs, { seed: 5, resamples: 2000 })
    expect(e.mean).toBe(49.5)
    expect(e.ci95[0]).toBeLessThan(49.5)
    expect(e.ci95[1]).toBeGreaterThan(49.5)
    const half = (e.ci95[1] - e.ci95[0]) / 2
    expect(half).toBeGreaterThan(4.5)
    expect(half).toBeLessThan(7)
    // Four times the data: half the width (standard error scales with 1 / sqrt(n)).
    const big = Statistics.bootstrapMean([...xs, ...xs, ...xs, ...xs], { seed: 5, resamples: 2000 })
    const ratio = (big.ci95[1] - big.ci95[0]) / (e.ci95[1] - e.ci95[0])
    expect(ratio).toBeGreaterThan(0.4)
    expect(ratio).toBeLessThan(0.6)
  })
})

describe("bootstrap resampling", () => {
  /** The textbook bootstrap: each resample draws n indices floor(rng() * n) and averages them. */
  const reference = (xs: ReadonlyArray<number>, seed: number, resamples: number) => {
    const next = Statistics.rng(seed)
    const means = Array.from({ length: resamples }, () => {
      let s = 0
      for (let i = 0; i < xs.length; i++) s += xs[Math.floor(next() * xs.length)]!
      return s / xs.length
    }).sort((a, b) => a - b)
    return [Statistics.quantile(means, 0.025), Statistics.quantile(means, 0.975)]
  }

  it("draws the same resamples as the textbook bootstrap, at sizes around the 32-row words", () => {
    for (const n of [2, 31, 32, 33, 100, 257]) {
      const xs = Array.from({ length: n }, (_, i) => Math.sin(i * 1.7) + (i % 3))
      const e = Statistics.bootstrapMean(xs, { seed: n, resamples: 500 })
      const [lo, hi] = reference(xs, n, 500)
      expect(e.ci95[0]).toBeCloseTo(lo!, 12)
      expect(e.ci95[1]).toBeCloseTo(hi!, 12)
    }
  })

  it("gives the same bytes on every call, whatever was computed before", () => {
    const xs = Array.from({ length: 500 }, (_, i) => (i * 0.37) % 1)
    const first = JSON.stringify(Statistics.bootstrapMean(xs, { seed: 2 }))
    Statistics.bootstrapMean(xs.slice(1), { seed: 2 })
    Statistics.bootstrapRatio(
      xs,
      xs.map(() => 1),
      { seed: 2, resamples: 300 }
    )
    expect(JSON.stringify(Statistics.bootstrapMean(xs, { seed: 2 }))).toBe(first)
  })
})

describe("bootstrapF1", () => {
  it("is the F1 of the two pooled ratios", () => {
    // P = (1 + 2) / (2 + 2) = 0.75, R = (1 + 1) / (4 + 4) = 0.25, F1 = 2 * 0.75 * 0.25 / 1 = 0.375
    const e = Statistics.bootstrapF1(
      { num: [1, 2, NaN], den: [2, 2, 1] },
      { num: [1, 1, 1], den: [4, 4, 1] },
      { seed: 1 }
    )
    expect(e.n).toBe(2)
    expect(e.mean).toBe(0.375)
  })

  it("draws instances exactly as bootstrapRatio does", () => {
    // with precision counts equal to recall counts, F1 = that ratio, resample by resample
    const num = [1, 0, 2, 3, 1],
      den = [2, 1, 2, 4, 3]
    const f = Statistics.bootstrapF1({ num, den }, { num, den }, { seed: 11, resamples: 300 })
    const r = Statistics.bootstrapRatio(num, den, { seed: 11, resamples: 300 })
    expect(f.mean).toBeCloseTo(7 / 12, 12)
    expect(f.ci95[0]).toBeCloseTo(r.ci95[0], 12)
    expect(f.ci95[1]).toBeCloseTo(r.ci95[1], 12)
  })

  it("is 0 when nothing matched and NaN without a denominator", () => {
    expect(Statistics.bootstrapF1({ num: [0, 0], den: [1, 2] }, { num: [0, 0], den: [3, 1] }, { seed: 1 }).mean).toBe(0)
    expect(Statistics.bootstrapF1({ num: [0], den: [0] }, { num: [1], den: [1] }, { seed: 1 }).mean).toBeNaN()
  })
})

describe("bootstrapRatio", () => {
  it("pools sums (micro) rather than averaging ratios (macro)", () => {
    // Instance 1: 0 of 1 item matched; instance 2: 9 of 9. Micro 9/10, macro (0 + 1) / 2.
    const e = Statistics.bootstrapRatio([0, 9], [1, 9], { seed: 2 })
    expect(e.mean).toBe(0.9)
    expect(e.n).toBe(2)
    expect(Statistics.mean([0 / 1, 9 / 9])).toBe(0.5)
  })

  it("gives a degenerate interval when every instance has the same ratio", () => {
    expect(Statistics.bootstrapRatio([1, 2, 3], [2, 4, 6], { seed: 2 })).toEqual({ n: 3, mean: 0.5, ci95: [0.5, 0.5] })
  })

  it("drops pairs with a non-finite part and is deterministic", () => {
    expect(Statistics.bootstrapRatio([1, NaN, 3], [2, 2, NaN], { seed: 2 })).toEqual({
      n: 1,
      mean: 0.5,
      ci95: [NaN, NaN]
    })
    const nums = [1, 2, 0, 3, 2.5],
      dens = [2, 3, 3, 3, 4]
    const a = Statistics.bootstrapRatio(nums, dens, { seed: 9 })
    expect(Statistics.bootstrapRatio(nums, dens, { seed: 9 })).toEqual(a)
    expect(a.mean).toBeCloseTo(8.5 / 15, 12)
    expect(a.ci95[0]).toBeLessThanOrEqual(a.mean)
    expect(a.ci95[1]).toBeGreaterThanOrEqual(a.mean)
  })

  it("is NaN when no denominator is positive", () => {
    expect(Statistics.bootstrapRatio([0, 0], [0, 0], { seed: 1 }).mean).toBeNaN()
  })
})

describe("paired", () => {
  it("gives the exact mean difference and a zero-width interval for a constant shift", () => {
    const r = Statistics.paired([1, 2, 3, 4], [2, 3, 4, 5], { seed: 1 })
    expect(r.n).toBe(4)
    expect(r.delta).toBe(1)
    expect(r.ci95).toEqual([1, 1])
    // Only the two all-same-sign flips of 2^4 are as extreme; n <= 16 is enumerated: p = 2/16.
    expect(r.p).toBe(0.125)
  })

  it("enumerates the sign flips of three differences exactly", () => {
    // Differences 1, 2, 3: the 8 sign vectors sum to 6, 4, 2, 0, 0, -2, -4, -6; |sum| >= 6 twice.
    expect(Statistics.paired([0, 0, 0], [1, 2, 3], { seed: 1 }).p).toBe(0.25)
    // Differences 1, 1, -1: the 8 sign vectors sum to 1, 3, -1, 1, -1, 1, -3, -1: |sum| >= 1 always.
    expect(Statistics.paired([0, 0, 0], [1, 1, -1], { seed: 1 }).p).toBe(1)
  })

  it("finds a consistent shift over 20 instances significant", () => {
    const a = Array.from({ length: 20 }, (_, i) => i / 20)
    const b = a.map((x, i) => x + 0.1 + (i % 3) * 0.05)
    const r = Statistics.paired(a, b, { seed: 1 })
    expect(r.delta).toBeCloseTo(0.1 + (7 * 0 + 7 * 0.05 + 6 * 0.1) / 20, 12)
    // Every difference is positive: of the 2^20 sign patterns, only all-plus and all-minus are as extreme.
    expect(r.p).toBe(2 / 2 ** 20)
  })

  it("gives p = 1 when nothing differs or the differences cancel out", () => {
    const xs = [0.3, 0.5, 0.9]
    expect(Statistics.paired(xs, xs, { seed: 1 })).toEqual({ n: 3, delta: 0, ci95: [0, 0], p: 1 })
    const cancel = Statistics.paired([0, 0, 0, 0], [1, -1, 1, -1], { seed: 1 })
    expect(cancel.delta).toBe(0)
    expect(cancel.p).toBe(1)
  })

  it("uses only instances where both values are finite", () => {
    const r = Statistics.paired([1, NaN, 3], [2, 5, NaN], { seed: 1 })
    expect(r.n).toBe(1)
    expect(r.delta).toBe(1)
    const none = Statistics.paired([NaN], [1], { seed: 1 })
    expect(none.n).toBe(0)
    expect(none.delta).toBeNaN()
    expect(none.p).toBeNaN()
  })
})

describe("holm", () => {
  it("adjusts the textbook example step-down, in input order", () => {
    // Sorted: 0.005 * 4 = 0.02, 0.01 * 3 = 0.03, 0.03 * 2 = 0.06, 0.04 * 1 = 0.04 -> max so far 0.06.
    const adjusted = Statistics.holm([0.01, 0.04, 0.03, 0.005])
    const expected = [0.03, 0.06, 0.06, 0.02]
    adjusted.forEach((p, i) => expect(p).toBeCloseTo(expected[i]!, 12))
  })

  it("caps at 1 and skips NaN when counting tests", () => {
    expect(Statistics.holm([0.5, 0.6])).toEqual([1, 1])
    const withNaN = Statistics.holm([0.01, NaN, 0.02])
    expect(withNaN[0]).toBeCloseTo(0.02, 12)
    expect(withNaN[1]).toBeNaN()
    expect(withNaN[2]).toBeCloseTo(0.02, 12)
    expect(Statistics.holm([])).toEqual([])
  })
})
