import { describe, expect, it } from "vitest"
import * as Resampling from "../src/internal/Resampling.js"
import * as Paired from "../src/Paired.js"
import * as Statistics from "../src/Statistics.js"

const options = { seed: 7, resamples: 1000, permutations: 2000 }

/** Two-sided sign-flip p by brute force: the share of the 2^n sign vectors with |sum| >= |observed sum|. */
const bruteForceP = (d: ReadonlyArray<number>): number => {
  const observed = Math.abs(d.reduce((s, x) => s + x, 0))
  let extreme = 0
  for (let mask = 0; mask < 2 ** d.length; mask++) {
    let s = 0
    for (let i = 0; i < d.length; i++) s += mask & (1 << i) ? -d[i]! : d[i]!
    if (Math.abs(s) >= observed - 1e-9) extreme++
  }
  return extreme / 2 ** d.length
}

describe("value", () => {
  it("aggregates a mean, a pooled ratio and an F1 of pooled ratios over the rows where all values are finite", () => {
    // rows 0, 1, 3: (0.2 + 0.5 + 0.9) / 3
    const m = Paired.value(Paired.mean([0.2, 0.5, NaN, 0.9]))
    expect(m.n).toBe(3)
    expect(m.value).toBeCloseTo(1.6 / 3, 12)
    // row 2 has no numerator: (1 + 2 + 3) / (2 + 3 + 5)
    expect(Paired.value(Paired.ratio([1, 2, NaN, 3], [2, 3, 4, 5]))).toEqual({ n: 3, value: 0.6 })
    // P = (1 + 2) / (2 + 2) = 0.75, R = (1 + 1) / (4 + 4) = 0.25, F1 = 2 * 0.75 * 0.25 / 1 = 0.375
    expect(Paired.value(Paired.f1({ num: [1, 2], den: [2, 2] }, { num: [1, 1], den: [4, 4] }))).toEqual({
      n: 2,
      value: 0.375
    })
  })

  it("takes only the given rows, and is NaN with n = 0 when none is usable", () => {
    expect(Paired.value(Paired.mean([0.2, 0.5, NaN, 0.9]), [0, 2])).toEqual({ n: 1, value: 0.2 })
    const none = Paired.value(Paired.ratio([NaN], [1]))
    expect(none.n).toBe(0)
    expect(none.value).toBeNaN()
    // a zero denominator leaves the ratio undefined
    expect(Paired.value(Paired.ratio([0, 0], [0, 0])).value).toBeNaN()
  })
})

describe("estimate", () => {
  it("is the bootstrap of the metric's aggregate, over the given rows", () => {
    const xs = [0.1, 0.7, NaN, 0.4, 0.9, 0.3]
    const num = [1, 0, 2, 3, 1, 2],
      den = [2, 1, 2, 4, 3, 2]
    const o = { seed: 3, resamples: 400 }
    expect(Paired.estimate(Paired.mean(xs), o)).toEqual(Statistics.bootstrapMean(xs, o))
    expect(Paired.estimate(Paired.ratio(num, den), o)).toEqual(Statistics.bootstrapRatio(num, den, o))
    expect(Paired.estimate(Paired.f1({ num, den }, { num: den, den: den.map((d) => d + 1) }), o)).toEqual(
      Statistics.bootstrapF1({ num, den }, { num: den, den: den.map((d) => d + 1) }, o)
    )
    const picked = Paired.estimate(Paired.mean(xs), { ...o, rows: [0, 1, 2] })
    expect(picked.n).toBe(2)
    expect(picked.mean).toBeCloseTo(0.4, 12)
  })

  it("resamples clusters whole, their ids indexed like the columns when rows are picked", () => {
    const xs = [0.1, 0.7, NaN, 0.4, 0.9, 0.3]
    const clusters = [0, 0, 1, 1, 2, 2]
    const o = { seed: 3, resamples: 400, clusters }
    expect(Paired.estimate(Paired.mean(xs), o)).toEqual(Statistics.bootstrapMean(xs, o))
    const picked = Paired.estimate(Paired.mean(xs), { ...o, rows: [4, 5, 0, 1] })
    expect(picked).toEqual(
      Statistics.bootstrapMean([0.9, 0.3, 0.1, 0.7], { seed: 3, resamples: 400, clusters: [2, 2, 0, 0] })
    )
    expect(picked).not.toEqual(Statistics.bootstrapMean([0.9, 0.3, 0.1, 0.7], { seed: 3, resamples: 400 }))
  })
})

describe("compare", () => {
  it("gives delta = metric(b) - metric(a) for every aggregate, on rows finite in both cells", () => {
    // differences 0.2, 0, -0.4 (row 3 is missing in a)
    const m = Paired.compare(Paired.mean([0.1, 0.4, 0.9, NaN]), Paired.mean([0.3, 0.4, 0.5, 1]), options)
    expect(m.n).toBe(3)
    expect(m.delta).toBeCloseTo(-0.2 / 3, 12)
    // a: 4 / 8 = 0.5, b: 6 / 8 = 0.75
    const r = Paired.compare(Paired.ratio([1, 1, 2], [2, 2, 4]), Paired.ratio([2, 1, 3], [2, 2, 4]), options)
    expect(r.n).toBe(3)
    expect(r.delta).toBeCloseTo(0.25, 12)
    // a: P = 0.5, R = 2 / 6, F1 = (1/3) / (5/6) = 0.4; b: P = 0.75, R = 4 / 6, F1 = 1 / (17/12) = 12/17
    const f = Paired.compare(
      Paired.f1({ num: [1, 1, 2], den: [2, 2, 4] }, { num: [1, 0, 1], den: [2, 2, 2] }),
      Paired.f1({ num: [2, 1, 3], den: [2, 2, 4] }, { num: [2, 1, 1], den: [2, 2, 2] }),
      options
    )
    expect(f.delta).toBeCloseTo(12 / 17 - 0.4, 12)
    expect(f.test).toBe("exact")
  })

  it("enumerates all sign patterns exactly for small n", () => {
    // Six equal positive differences: only all-plus and all-minus reach |mean| = 1, 2 of 2^6.
    const six = Paired.compare(Paired.mean([0, 0, 0, 0, 0, 0]), Paired.mean([1, 1, 1, 1, 1, 1]), options)
    expect(six).toEqual({ n: 6, delta: 1, ci95: [1, 1], p: 0.03125, test: "exact", permutations: 64 })
    // Differences 1, 2, 3 (sum 6). Sums of the 8 sign vectors: +++ 6, -++ 4, +-+ 2, ++- 0, --+ 0,
    // -+- -2, +-- -4, --- -6; |sum| >= 6 for 2 of 8.
    const three = Paired.compare(Paired.mean([0, 0, 0]), Paired.mean([1, 2, 3]), options)
    expect(three.p).toBe(0.25)
    expect(three.delta).toBe(2)
    expect(three.permutations).toBe(8)
    // Pooled: a 0/1 and 0/3, b 1/1 and 3/3, delta 1 - 0. Swapping row 0 gives 1/4 vs 3/4 (+0.5),
    // row 1 gives 3/4 vs 1/4 (-0.5), both -1: 2 of 4 patterns reach |delta| = 1.
    const pooled = Paired.compare(Paired.ratio([0, 0], [1, 3]), Paired.ratio([1, 3], [1, 3]), options)
    expect(pooled.delta).toBe(1)
    expect(pooled.p).toBe(0.5)
    expect(pooled.test).toBe("exact")
  })

  it("draws random sign patterns above n = 20, close to the exact p within the binomial error", () => {
    const d = [
      0.9, -0.2, 0.5, 0.3, -0.4, 0.7, 0.1, 0.6, -0.3, 0.8, 0.2, -0.1, 0.35, -0.6, 0.15, 0.05, -0.25, 0.45, 0.1, -0.5,
      -0.05
    ]
    const exact = bruteForceP(d)
    const P = 20_000
    const c = Paired.compare(Paired.mean(d.map(() => 0)), Paired.mean(d), { ...options, permutations: P })
    expect(c.test).toBe("monte-carlo")
    expect(c.permutations).toBe(P)
    // Standard error of a Monte-Carlo p: sqrt(p (1 - p) / P); 4 of them is a 1-in-15,000 miss.
    expect(exact).toBeGreaterThan(0.01)
    expect(Math.abs(c.p - exact)).toBeLessThan(4 * Math.sqrt((exact * (1 - exact)) / P))
  })

  it("agrees with the exact p at n = 12 when forced to Monte-Carlo", () => {
    const d = Float64Array.from([0.9, -0.2, 0.5, 0.3, -0.4, 0.7, 0.1, 0.6, -0.3, 0.8, 0.2, -0.1])
    const exact = bruteForceP([...d])
    const { spec } = Resampling.meanSpec(d)
    expect(Resampling.exactTest(spec).p).toBeCloseTo(exact, 12)
    const P = 40_000
    const mc = Resampling.monteCarloTest(Resampling.monteCarloExtremes([spec], 11, 0, P)[0]!, P)
    // p is about 0.08: standard error sqrt(0.08 * 0.92 / 40000) = 0.0014; allow 4 of them.
    expect(Math.abs(mc.p - exact)).toBeLessThan(4 * Math.sqrt((exact * (1 - exact)) / P))
  })

  it("gives zero and p = 1 for a cell against itself, and nothing without usable rows", () => {
    const counts = { num: [1, 2, 0, 3], den: [3, 2, 1, 4] }
    const self = Paired.compare(Paired.f1(counts, counts), Paired.f1(counts, counts), options)
    // no row differs: one sign pattern (flipping nothing), as extreme as itself
    expect(self).toEqual({ n: 4, delta: 0, ci95: [0, 0], p: 1, test: "exact", permutations: 1 })
    const none = Paired.compare(Paired.mean([NaN, 1]), Paired.mean([1, NaN]), options)
    expect(none.n).toBe(0)
    expect(none.p).toBeNaN()
    expect(none.test).toBe("none")
    // both denominators sum to 0: the difference is undefined, the rows still count
    const undefinedRatio = Paired.compare(Paired.ratio([0], [0]), Paired.ratio([0], [0]), options)
    expect(undefinedRatio.n).toBe(1)
    expect(undefinedRatio.test).toBe("none")
  })

  it("is deterministic for a seed and changes with it", () => {
    const a = Array.from({ length: 300 }, (_, i) => ((i * 37) % 11) / 10)
    const b = a.map((x, i) => x + ((i % 5) - 1.8) / 10)
    const first = Paired.compare(Paired.mean(a), Paired.mean(b), options)
    expect(Paired.compare(Paired.mean(a), Paired.mean(b), options)).toEqual(first)
    const other = Paired.compare(Paired.mean(a), Paired.mean(b), { ...options, seed: 8 })
    expect([other.ci95, other.p]).not.toEqual([first.ci95, first.p])
  })

  it("refuses columns that aggregate differently", () => {
    // Mixed shapes do not type-check when the shapes are known; a value only known as Columns is checked at run time.
    const columns = (c: Paired.Columns): Paired.Columns => c
    const a = columns(Paired.mean([1])),
      b = columns(Paired.ratio([1], [1]))
    expect(() => Paired.compare(a, b, options)).toThrow("cannot compare Mean columns with Ratio columns")
  })
})

describe("family", () => {
  it("adjusts exact p-values with Holm, counting only tests with a p-value", () => {
    const fam = Paired.family(
      [
        { a: Paired.mean([0, 0, 0]), b: Paired.mean([1, 2, 3]) }, // p = 0.25
        { a: Paired.mean([0, 0, 0, 0, 0, 0]), b: Paired.mean([1, 1, 1, 1, 1, 1]) }, // p = 0.03125
        { a: Paired.mean([1, 1]), b: Paired.mean([1, 1]) }, // p = 1
        { a: Paired.mean([NaN]), b: Paired.mean([1]) } // no usable row
      ],
      { seed: 1, resamples: 200 }
    )
    expect(fam.comparisons.map((c) => c.p).slice(0, 3)).toEqual([0.25, 0.03125, 1])
    // sorted 0.03125 * 3 = 0.09375, 0.25 * 2 = 0.5, 1 * 1 = 1
    expect(fam.adjusted.slice(0, 3)).toEqual([0.5, 0.09375, 1])
    expect(fam.adjusted[3]).toBeNaN()
    expect(fam.tests).toBe(3)
    expect(fam.permutations).toEqual({ screening: 2000, refined: 2000, refinedTests: 0, exactTests: 3, normalTests: 0 })
  })

  it("refines only the tests Holm could still call significant, continuing the same patterns", () => {
    const zeros = Array.from({ length: 30 }, () => 0)
    const ones = Array.from({ length: 30 }, () => 1)
    const strong = { a: Paired.mean(zeros), b: Paired.mean(ones) }
    const none = { a: Paired.mean(ones), b: Paired.mean(ones) }
    const fam = Paired.family([strong, ...Array.from({ length: 59 }, () => none)], { seed: 5, resamples: 50 })
    // 60 tests -> 40 x 60 = 2400 permutations for the refined one; the 59 with no differing row are exact
    expect(fam.permutations).toEqual({
      screening: 2000,
      refined: 2400,
      refinedTests: 1,
      exactTests: 59,
      normalTests: 0
    })
    // no random pattern of 30 flips is all-plus or all-minus: p = 1 / (2400 + 1)
    expect(fam.comparisons[0]!.p).toBe(1 / 2401)
    expect(fam.adjusted[0]).toBeCloseTo(60 / 2401, 12)
    expect(fam.comparisons.slice(1).every((c) => c.p === 1 && c.test === "exact" && c.permutations === 1)).toBe(true)
  })

  it("gives each test what compare gives with the permutations the test ended with", () => {
    const a = Array.from({ length: 40 }, (_, i) => ((i * 7) % 10) / 10)
    const moderate = { a: Paired.mean(a), b: Paired.mean(a.map((x, i) => x + (i % 4 === 0 ? -0.15 : 0.12))) }
    const weak = { a: Paired.mean(a), b: Paired.mean(a.map((x, i) => x + (i % 2 === 0 ? 0.1 : -0.09))) }
    const counts = {
      a: Paired.ratio(
        a.map((x) => Math.round(x * 3)),
        a.map(() => 3)
      ),
      b: Paired.ratio(
        a.map((x, i) => Math.round(x * 3) + (i % 3 === 0 ? 1 : 0)),
        a.map(() => 4)
      )
    }
    const o = { seed: 9, resamples: 300 }
    const fam = Paired.family([moderate, weak, counts], { ...o, permutations: 5000 })
    // p about 0.011 (refined: 0.011 x 3 < 0.1), 0.76 and 0.18 (not refined)
    expect(fam.permutations.refinedTests).toBe(1)
    expect(fam.comparisons.map((c) => c.permutations)).toEqual([5000, 2000, 2000])
    expect(fam.comparisons[0]!.p).toBeGreaterThan(1 / 5001)
    ;[moderate, weak, counts].forEach((t, i) => {
      const c = fam.comparisons[i]!
      expect(c.test).toBe("monte-carlo")
      expect(c).toEqual(Paired.compare(t.a, t.b, { ...o, permutations: c.permutations }))
    })
  })
})

describe("family", () => {
  it("gives each test what compare gives alone with the permutations it ended with, refining only those that could pass Holm", () => {
    const zeros = Array.from({ length: 30 }, () => 0)
    const ones = Array.from({ length: 30 }, () => 1)
    const a = Array.from({ length: 40 }, (_, i) => ((i * 7) % 10) / 10)
    const strong = { a: Paired.mean(zeros), b: Paired.mean(ones) }
    const none = { a: Paired.mean(ones), b: Paired.mean(ones) }
    const moderate = { a: Paired.mean(a), b: Paired.mean(a.map((x, i) => x + (i % 4 === 0 ? -0.15 : 0.12))) }
    const counts = {
      a: Paired.ratio(
        a.map((x) => Math.round(x * 3)),
        a.map(() => 3)
      ),
      b: Paired.ratio(
        a.map((x, i) => Math.round(x * 3) + (i % 3 === 0 ? 1 : 0)),
        a.map(() => 4)
      )
    }
    const unusable = { a: Paired.mean([NaN]), b: Paired.mean([1]) }
    const wide = Array.from({ length: 300 }, (_, i) => ((i * 7) % 10) / 10)
    const large = { a: Paired.mean(wide), b: Paired.mean(wide.map((x, i) => x + ((i * 3) % 7) / 10)) }
    const blocks = [[moderate, none, unusable], Array.from({ length: 50 }, () => none), [counts, strong, large]]
    const o = { seed: 5, resamples: 50, largeSample: 250 }
    const inBlocks = Paired.family(blocks.flat(), o)
    blocks.flat().forEach((t, i) => {
      const c = inBlocks.comparisons[i]!
      expect(c).toEqual(Paired.compare(t.a, t.b, { ...o, permutations: c.permutations }))
    })
    // 55 tests with a p-value -> 2200 permutations; only `strong` (p 1/2001 x 55 < 0.1) is refined
    expect(inBlocks.permutations).toEqual({
      screening: 2000,
      refined: 2200,
      refinedTests: 1,
      exactTests: 51,
      normalTests: 1,
      largeSample: 250
    })
    expect(inBlocks.comparisons[54]!.p).toBe(1 / 2201)
    expect(inBlocks.comparisons[55]!.test).toBe("normal")
  })
})

describe("rows equal in both cells", () => {
  it("leave the permutation distribution unchanged: 200 rows of which 10 differ get the exact p of those 10", () => {
    // ten differences of 1 among 190 zeros: of the 2^10 patterns of the ten, only all-plus and
    // all-minus are as extreme, p = 2 / 1024, the same as over all 2^200 patterns
    const a = Array.from({ length: 200 }, () => 0.5)
    const b = a.map((x, i) => (i % 20 === 0 ? x + 1 : x))
    const c = Paired.compare(Paired.mean(a), Paired.mean(b), { seed: 3, resamples: 100, permutations: 2000 })
    expect(c.n).toBe(200)
    expect(c.test).toBe("exact")
    expect(c.permutations).toBe(1024)
    expect(c.p).toBe(2 / 1024)
  })
})
