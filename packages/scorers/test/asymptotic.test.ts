import { Random } from "@cupid-lab/core"
import { describe, expect, it } from "vitest"
import * as Asymptotic from "../src/internal/Asymptotic.js"
import * as Paired from "../src/Paired.js"
import * as Statistics from "../src/Statistics.js"

const f64 = (xs: ReadonlyArray<number>) => Float64Array.from(xs)

describe("large-sample intervals and tests, by hand", () => {
  // Each hand-made set repeated 100 times: the variance per row is the same, and n is 100x.
  const times = <A>(xs: ReadonlyArray<A>, k: number): Array<A> => Array.from({ length: k }, () => xs).flat()

  it("a mean's interval is mean +- 1.96 sd / sqrt(n)", () => {
    // [1, 2, 3, 4] x 100: mean 2.5, sample variance (1.25 * 400) / 399, se sqrt(variance / 400)
    const se = Math.sqrt((1.25 * 400) / 399 / 400)
    const ci = Asymptotic.interval(Asymptotic.mean, [f64(times([1, 2, 3, 4], 100))], [1000], 400)!
    expect(ci[0]).toBeCloseTo(2.5 - 1.959963984540054 * se, 12)
    expect(ci[1]).toBeCloseTo(2.5 + 1.959963984540054 * se, 12)
  })

  it("a pooled ratio's interval uses the residuals num - R den (delta method)", () => {
    // num [1, 2, 3] x 100, den [2, 2, 4] x 100: R = 0.75, D = 800; u = residual / D in
    // {-0.5, 0.5, 0} / 800, sample variance (200 * 0.25 / 800^2) / 299, se sqrt(300 * variance)
    const se = Math.sqrt((300 * ((200 * 0.25) / 640000)) / 299)
    const ci = Asymptotic.interval(
      Asymptotic.ratio,
      [f64(times([1, 2, 3], 100)), f64(times([2, 2, 4], 100))],
      [600, 800],
      300
    )!
    expect(ci[0]).toBeCloseTo(0.75 - 1.959963984540054 * se, 12)
    expect(ci[1]).toBeCloseTo(0.75 + 1.959963984540054 * se, 12)
  })

  it("needs many rows on each side of the mean: a rare event gets no large-sample interval", () => {
    expect(Asymptotic.interval(Asymptotic.mean, [f64([1, 2, 3, 4])], [10], 4)).toBeUndefined()
    const rare = f64([...Array.from({ length: 5000 }, () => 0), ...Array.from({ length: 50 }, () => 1)])
    expect(Asymptotic.interval(Asymptotic.mean, [rare], [50], rare.length)).toBeUndefined()
  })

  it("two-sided normal p-values keep their precision in the tail", () => {
    expect(Asymptotic.twoSided(Asymptotic.z975)).toBeCloseTo(0.05, 7)
    expect(Asymptotic.twoSided(0)).toBe(1)
    expect(Asymptotic.twoSided(5) / 5.733031437583892e-7).toBeCloseTo(1, 6)
    expect(Asymptotic.twoSided(-8) / 1.2441921148543639e-15).toBeCloseTo(1, 6)
  })

  it("the swap test of a mean is the normal approximation of sum d over sign flips: z = sum d / sqrt(sum d^2)", () => {
    // 600 differences: 300 of 1, 300 of 0.5 -> sum 450, sum of squares 375, z = 450 / sqrt(375)
    const d = f64(times([1, 0.5], 300))
    const z = 450 / Math.sqrt(375)
    expect(Asymptotic.swapTest(Asymptotic.mean, [d], [0, 450], 450 / 600, 600)).toBeCloseTo(Asymptotic.twoSided(z), 15)
    // 216 differences of 1: z = sqrt(216) = 14.70, p about 6e-49
    expect(Asymptotic.swapTest(Asymptotic.mean, [f64(times([1], 216))], [0, 216], 1, 216)! / 5.9e-49).toBeGreaterThan(
      0.5
    )
    // fewer than 200 rows that differ: no large-sample test
    expect(
      Asymptotic.swapTest(Asymptotic.mean, [f64([...times([0], 5000), ...times([1], 150)])], [0, 150], 150 / 5150, 5150)
    ).toBeUndefined()
  })

  it("the F1 gradient matches finite differences", () => {
    const sums = [30, 50, 20, 45]
    const g = Asymptotic.f1.gradient(sums, 10)
    sums.forEach((_, c) => {
      const h = 1e-6
      const up = [...sums],
        down = [...sums]
      up[c] = up[c]! + h
      down[c] = down[c]! - h
      expect(g[c]).toBeCloseTo((Asymptotic.f1.value(up, 10) - Asymptotic.f1.value(down, 10)) / (2 * h), 6)
    })
  })

  it("a ratio whose denominators sum to 0 has no large-sample form", () => {
    expect(Asymptotic.interval(Asymptotic.ratio, [f64([0, 0]), f64([0, 0])], [0, 0], 2)).toBeUndefined()
  })
})

describe("large-sample forms agree with resampling at large n", () => {
  const n = 3000
  const next = Random.mulberry32(99)
  const base = Float64Array.from({ length: n }, () => next())
  // Small effects, so that p lands where it matters (about 0.01-0.3), not at the Monte-Carlo floor.
  const better = Float64Array.from(base, (v) => Math.min(1, Math.max(0, v + 0.006 + (next() - 0.5) * 0.6)))
  const den = Float64Array.from({ length: n }, () => 1 + Math.floor(next() * 4))
  const numA = Float64Array.from(den, (d) => Math.floor(next() * (d + 1)))
  const numB = Float64Array.from(den, (d, i) =>
    Math.max(0, Math.min(d, numA[i]! + (next() < 0.12 ? 1 : next() < 0.12 ? -1 : 0) + (next() < 0.012 ? 1 : 0)))
  )

  const agree = (a: Paired.Columns, b: Paired.Columns) => {
    const resampled = Paired.compare(a, b, { seed: 3, resamples: 4000, permutations: 20000 })
    const normal = Paired.compare(a, b, { seed: 3, resamples: 4000, permutations: 20000, largeSample: 2000 })
    expect(resampled.test).toBe("monte-carlo")
    expect(normal.test).toBe("normal")
    expect(normal.n).toBe(n)
    expect(normal.delta).toBe(resampled.delta)
    const width = resampled.ci95[1] - resampled.ci95[0]
    expect(Math.abs(normal.ci95[0] - resampled.ci95[0])).toBeLessThan(0.06 * width)
    expect(Math.abs(normal.ci95[1] - resampled.ci95[1])).toBeLessThan(0.06 * width)
    // Monte-Carlo standard error at p near 0.05 with 20,000 patterns is about 0.0015
    expect(resampled.p).toBeGreaterThan(0.002)
    expect(Math.abs(normal.p - resampled.p)).toBeLessThan(Math.max(0.004, 0.15 * resampled.p))
    return normal
  }

  it("means", () => {
    agree(Paired.mean(base), Paired.mean(better))
  })

  it("a difference carried by a few rows is resampled even at large n", () => {
    const rare = Float64Array.from(base, (v, i) => (i % 40 === 0 ? v + 0.5 : v))
    expect(
      Paired.compare(Paired.mean(base), Paired.mean(rare), {
        seed: 3,
        resamples: 200,
        permutations: 2000,
        largeSample: 2000
      }).test
    ).toBe("monte-carlo")
  })

  it("pooled ratios", () => {
    agree(Paired.ratio(numA, den), Paired.ratio(numB, den))
  })

  it("the F1 of two pooled ratios", () => {
    agree(
      Paired.f1({ num: numA, den }, { num: numA, den: Float64Array.from(den, (d) => d + 1) }),
      Paired.f1({ num: numB, den }, { num: numB, den: Float64Array.from(den, (d) => d + 1) })
    )
  })

  it("summary intervals: bootstrap and delta method agree", () => {
    const boot = Statistics.bootstrapRatio(numA, den, { seed: 5, resamples: 4000 })
    const normal = Statistics.bootstrapRatio(numA, den, { seed: 5, resamples: 4000, largeSample: 2000 })
    expect(normal.mean).toBe(boot.mean)
    const width = boot.ci95[1] - boot.ci95[0]
    expect(Math.abs(normal.ci95[0] - boot.ci95[0])).toBeLessThan(0.06 * width)
    expect(Math.abs(normal.ci95[1] - boot.ci95[1])).toBeLessThan(0.06 * width)
    const small = Statistics.bootstrapMean(base.subarray(0, 100), { seed: 5, resamples: 200, largeSample: 2000 })
    expect(small).toEqual(Statistics.bootstrapMean(base.subarray(0, 100), { seed: 5, resamples: 200 }))
  })

  it("a family counts its large-sample tests and never refines them", () => {
    const f = Paired.family(
      [
        { a: Paired.mean(base), b: Paired.mean(better) },
        { a: Paired.mean(base.subarray(0, 12)), b: Paired.mean(better.subarray(0, 12)) }
      ],
      { seed: 1, resamples: 200, largeSample: 2000 }
    )
    expect(f.comparisons.map((c) => c.test)).toEqual(["normal", "exact"])
    expect(f.permutations.normalTests).toBe(1)
    expect(f.permutations.exactTests).toBe(1)
    expect(f.permutations.largeSample).toBe(2000)
  })
})
