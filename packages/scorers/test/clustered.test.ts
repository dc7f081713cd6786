import { describe, expect, it } from "vitest"
import * as Paired from "../src/Paired.js"
import * as Statistics from "../src/Statistics.js"

// Differences b - a of five instances; the first two share persona 1, the next two persona 2, the
// last is persona 3 alone. Cluster sums D = 0.3, 0.7, 0.5 over 2, 2, 1 instances.
const a = Paired.mean([0, 0, 0, 0, 0])
const b = Paired.mean([0.1, 0.2, 0.3, 0.4, 0.5])
const personas = [1, 1, 2, 2, 3]
const options = { seed: 11, resamples: 4000, permutations: 2000 }

describe("clustered paired inference (instances of a persona move together)", () => {
  it("permutes whole clusters: p by enumeration of the 2^3 cluster sign patterns, not the 2^5 row patterns", () => {
    const clustered = Paired.compare(a, b, { ...options, clusters: personas })
    // |s1 0.3 + s2 0.7 + s3 0.5| >= 1.5 only when all three signs agree: 2 of 8 patterns
    expect(clustered).toMatchObject({ n: 5, clusters: 3, test: "exact", permutations: 8, p: 0.25 })
    expect(clustered.delta).toBeCloseTo(0.3, 12)
    // rows alone: all five signs must agree, 2 of 32
    const rows = Paired.compare(a, b, options)
    expect(rows).toMatchObject({ n: 5, test: "exact", permutations: 32, p: 0.0625 })
    expect(rows.clusters).toBeUndefined()
  })

  it("resamples whole clusters: the interval is the exact cluster bootstrap's, wider than the row bootstrap's", () => {
    const clustered = Paired.compare(a, b, { ...options, clusters: personas })
    // Resampling 3 clusters: 27 equally likely draws; the statistic is sum(D*) / sum(n*). The lowest
    // value, 0.3/2 = 0.15 (cluster 1 three times), and the highest, 0.5/1 = 0.5 (cluster 3 three
    // times), each carry 1/27 = 3.7% > 2.5% of the mass, so the 2.5% and 97.5% quantiles are those.
    expect(clustered.ci95[0]).toBeCloseTo(0.15, 12)
    expect(clustered.ci95[1]).toBeCloseTo(0.5, 12)
    // Rows alone: the mean of 5 draws from {0.1, ..., 0.5}; its exact quantiles by enumeration of 5^5 draws.
    const means: Array<number> = []
    for (let k = 0; k < 5 ** 5; k++) {
      let s = 0
      for (let j = 0, r = k; j < 5; j++, r = Math.floor(r / 5)) s += [0.1, 0.2, 0.3, 0.4, 0.5][r % 5]!
      means.push(s / 5)
    }
    means.sort((x, y) => x - y)
    const lo = Statistics.quantile(means, 0.025),
      hi = Statistics.quantile(means, 0.975)
    expect([lo, hi].map((x) => Math.round(x * 100) / 100)).toEqual([0.18, 0.42])
    const rows = Paired.compare(a, b, options)
    // 4000 resamples land within one step (0.02) of the exact quantiles
    expect(Math.abs(rows.ci95[0] - lo)).toBeLessThanOrEqual(0.02 + 1e-12)
    expect(Math.abs(rows.ci95[1] - hi)).toBeLessThanOrEqual(0.02 + 1e-12)
    expect(clustered.ci95[1] - clustered.ci95[0]).toBeGreaterThan(rows.ci95[1] - rows.ci95[0] + 0.1)
  })

  it("singleton clusters change nothing: the same comparison as rows alone", () => {
    const single = Paired.compare(a, b, { ...options, clusters: [1, 2, 3, 4, 5] })
    expect(single).toEqual(Paired.compare(a, b, options))
  })

  it("leaves out rows that are not finite before grouping, and pooled metrics sum their counts per cluster", () => {
    // ratio: cell a pools (1+1+2)/(2+2+2), b (2+NaN+2)/(2+2+2) over rows 0 and 2 only (row 1 has a NaN in b)
    const ra = Paired.ratio([1, 1, 2], [2, 2, 2]),
      rb = Paired.ratio([2, NaN, 2], [2, 2, 2])
    const c = Paired.compare(ra, rb, { ...options, clusters: [7, 7, 8] })
    // row 1 dropped: persona 7 keeps one row, so no cluster has two rows: rows alone
    expect(c.clusters).toBeUndefined()
    expect(c.n).toBe(2)
    expect(c.delta).toBeCloseTo(4 / 4 - 3 / 4, 12)
    // with all three rows in persona 7: two clusters
    const d = Paired.compare(ra, Paired.ratio([2, 1, 2], [2, 2, 2]), { ...options, clusters: [7, 7, 8] })
    expect(d).toMatchObject({ n: 3, clusters: 2 })
    // only cluster 7 varies (2/4 vs 3/4; cluster 8 is 2/2 in both): its swap gives -1/6, as extreme as +1/6
    expect(d.delta).toBeCloseTo(1 / 6, 12)
    expect(d).toMatchObject({ test: "exact", permutations: 2, p: 1 })
  })

  it("a family with clusters gives each test what compare gives alone", () => {
    const fam = Paired.family(
      [
        { a, b, clusters: personas },
        { a, b }
      ],
      { seed: 11, resamples: 4000, permutations: 2000 }
    )
    expect(fam.comparisons[0]).toEqual(Paired.compare(a, b, { ...options, clusters: personas }))
    expect(fam.comparisons[1]).toEqual(Paired.compare(a, b, options))
    // Holm by default: 2 x 0.0625 = 0.125, then max(0.125, 1 x 0.25)
    expect(fam.correction).toBe("holm")
    expect(fam.adjusted).toEqual([0.25, 0.125])
  })
})

describe("standard error and minimum detectable effect", () => {
  it("rows alone: sd of the differences / sqrt(n)", () => {
    // d = 0.1..0.5: sample sd = sqrt(0.025) = 0.1581139, / sqrt(5) = 0.0707107
    expect(Paired.standardError(a, b)).toBeCloseTo(0.0707107, 6)
  })

  it("clustered: the cluster-level delta-method standard error", () => {
    // u_c = (D_c - delta n_c) / N = (0.3 - 0.6) / 5, (0.7 - 0.6) / 5, (0.5 - 0.3) / 5 = -0.06, 0.02, 0.04
    // sample variance (0.0036 + 0.0004 + 0.0016) / 2 = 0.0028; se = sqrt(3 x 0.0028) = 0.0916515
    expect(Paired.standardError(a, b, { clusters: personas })).toBeCloseTo(0.0916515, 6)
  })

  it("MDE = (z_{1-alpha/2} + z_{0.8}) se, by the closed form", () => {
    expect(Statistics.normalQuantile(0.975)).toBeCloseTo(1.959964, 5)
    expect(Statistics.normalQuantile(0.8)).toBeCloseTo(0.841621, 5)
    expect(Statistics.normalQuantile(0.2)).toBeCloseTo(-0.841621, 5)
    expect(Statistics.normalQuantile(1)).toBeNaN()
    // alpha 0.05: (1.959964 + 0.841621) x 0.0707107 = 0.198101
    expect(Statistics.minimumDetectable(0.0707107, 0.05)).toBeCloseTo(0.198101, 5)
    // alpha 0.05 / 4 = 0.0125 (a Holm family of 4): z_{0.99375} = 2.497705; (2.497705 + 0.841621) x 0.01 = 0.0333933
    expect(Statistics.minimumDetectable(0.01, Statistics.perTestLevel("holm", 4))).toBeCloseTo(0.0333933, 5)
    expect(Statistics.perTestLevel("none", 4)).toBe(0.05)
  })
})

describe("corrections", () => {
  const ps = [0.01, 0.04, NaN, 0.03, 0.2]
  it("Bonferroni multiplies by the number of tests with a p", () => {
    expect(Statistics.bonferroni(ps).map((x) => (Number.isNaN(x) ? x : Math.round(x * 1e9) / 1e9))).toEqual([
      0.04,
      0.16,
      NaN,
      0.12,
      0.8
    ])
  })

  it("Benjamini-Hochberg: m p_(k) / k, then the running minimum from the largest", () => {
    // sorted 0.01, 0.03, 0.04, 0.2 (m = 4): 0.04, 0.06, 0.0533, 0.2 -> min from the top: 0.04, 0.0533, 0.0533, 0.2
    const bh = Statistics.benjaminiHochberg(ps)
    expect(bh[0]).toBeCloseTo(0.04, 12)
    expect(bh[1]).toBeCloseTo(0.16 / 3, 12)
    expect(bh[2]).toBeNaN()
    expect(bh[3]).toBeCloseTo(0.16 / 3, 12)
    expect(bh[4]).toBeCloseTo(0.2, 12)
  })

  it("adjust dispatches on the correction's name", () => {
    expect(Statistics.adjust("holm", ps)).toEqual(Statistics.holm(ps))
    expect(Statistics.adjust("none", ps)).toEqual(ps)
    expect(Statistics.adjust("bh", [0.5, 0.9])).toEqual([0.9, 0.9])
  })

  it("a family refines the tests its correction could still call significant", () => {
    // 100 Monte-Carlo tests (40 differing rows) with the same strong effect: first pass p = 1/2001,
    // BH-adjusted 100/2001 < 0.1, so every one is refined to 40 x 100 permutations: 100/4001 < 0.05
    const tests = Array.from({ length: 100 }, () => ({
      a: Paired.mean(Array.from({ length: 40 }, () => 0)),
      b: Paired.mean(Array.from({ length: 40 }, (_, i) => (i % 4 === 0 ? -0.2 : 0.3)))
    }))
    const bh = Paired.family(tests, { seed: 3, resamples: 10, correction: "bh", intervals: false })
    expect(bh.correction).toBe("bh")
    expect(bh.permutations).toMatchObject({ screening: 2000, refined: 4000, refinedTests: 100 })
    expect(bh.comparisons[0]!.p).toBeCloseTo(1 / 4001, 12)
    expect(bh.adjusted.every((p) => p < 0.05)).toBe(true)
  })
})

describe("single-cell intervals resample clusters", () => {
  // Four personas of two instances each, one scored 1 and one 0: every persona's mean is 0.5, so
  // every resample of personas has mean 0.5 and the clustered interval is [0.5, 0.5]; resampling
  // the 8 instances one by one gives a wide interval around the same mean.
  const values = [1, 0, 0, 1, 1, 0, 0, 1]
  const clusters = [0, 0, 1, 1, 2, 2, 3, 3]

  it("a mean: the same estimate and n, the persona-level interval", () => {
    const plain = Statistics.bootstrapMean(values, { seed: 3, resamples: 2000 })
    const byPersona = Statistics.bootstrapMean(values, { seed: 3, resamples: 2000, clusters })
    expect([byPersona.n, byPersona.mean]).toEqual([8, 0.5])
    expect(byPersona.ci95).toEqual([0.5, 0.5])
    expect(plain.ci95[0]).toBeLessThan(0.3)
    expect(plain.ci95[1]).toBeGreaterThan(0.7)
  })

  it("a pooled ratio and F1: the persona sums are resampled; clusters of one row leave the instance bootstrap as it was", () => {
    // Persona sums: num 1/2 in each persona -> every resample's ratio is 1/2.
    const nums = [1, 0, 0, 1, 1, 0, 0, 1],
      dens = [1, 1, 1, 1, 1, 1, 1, 1]
    expect(Statistics.bootstrapRatio(nums, dens, { seed: 5, resamples: 500, clusters }).ci95).toEqual([0.5, 0.5])
    expect(
      Statistics.bootstrapF1({ num: nums, den: dens }, { num: nums, den: dens }, { seed: 5, resamples: 500, clusters })
        .ci95
    ).toEqual([0.5, 0.5])
    const singletons = values.map((_, i) => i)
    expect(Statistics.bootstrapMean(values, { seed: 3, resamples: 2000, clusters: singletons })).toEqual(
      Statistics.bootstrapMean(values, { seed: 3, resamples: 2000 })
    )
    // A row whose value is not finite leaves its persona with one usable row.
    const withGap = Statistics.bootstrapMean([1, Number.NaN, 0, 1], { seed: 1, resamples: 200, clusters: [0, 0, 1, 1] })
    expect([withGap.n, withGap.mean]).toEqual([3, 2 / 3])
  })
})
