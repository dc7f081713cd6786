/**
 * Speed of the summary intervals and the paired tests, before and after the resampling tables:
 * bootstrapMean at 756 (CUPID's size) and 10,000 instances; a family of paired tests of 19 cells
 * against a baseline x 10 metrics (7 means, 2 pooled ratios, 1 micro F1); and a whole run of 20
 * cells x 10,000 instances x 10 metrics x 4 slices (every summary interval and every test against
 * the baseline). "before" is the previous implementation, kept below as the reference; where it
 * would take minutes it runs on a share of the tests and is scaled up (said so in the line).
 *
 * Run: npx tsx --expose-gc packages/scorers/bench/statistics.bench.ts   (or npm run bench -- statistics)
 */
import * as Paired from "../src/Paired.js"
import * as Statistics from "../src/Statistics.js"

// ---- the previous implementation (one float draw per index and per sign flip) ----

const oldBootstrapMean = (values: ReadonlyArray<number>, seed: number, B = 1000): Statistics.Estimate => {
  const xs = values.filter((x) => Number.isFinite(x))
  const m = Statistics.mean(xs)
  if (xs.length < 2) return { n: xs.length, mean: m, ci95: [m, m] }
  const next = Statistics.rng(seed)
  const means = new Float64Array(B)
  for (let b = 0; b < B; b++) {
    let s = 0
    for (let i = 0; i < xs.length; i++) s += xs[Math.floor(next() * xs.length)]!
    means[b] = s / xs.length
  }
  means.sort()
  return { n: xs.length, mean: m, ci95: [Statistics.quantile(means, 0.025), Statistics.quantile(means, 0.975)] }
}

/** Rows of k counts per cell (all finite), the statistic of summed counts; the previous paired test. */
const oldPairedPooled = (
  a: ReadonlyArray<ReadonlyArray<number>>,
  b: ReadonlyArray<ReadonlyArray<number>>,
  statistic: (s: ArrayLike<number>) => number,
  seed: number,
  resamples: number,
  permutations: number
): number => {
  const n = a.length,
    k = a[0]!.length
  const A = new Float64Array(n * k),
    B = new Float64Array(n * k),
    D = new Float64Array(n * k)
  const totalA = new Float64Array(k),
    totalB = new Float64Array(k)
  for (let i = 0; i < n; i++) {
    for (let c = 0; c < k; c++) {
      A[i * k + c] = a[i]![c]!
      B[i * k + c] = b[i]![c]!
      D[i * k + c] = b[i]![c]! - a[i]![c]!
      totalA[c] = totalA[c]! + a[i]![c]!
      totalB[c] = totalB[c]! + b[i]![c]!
    }
  }
  const observed = statistic(totalB) - statistic(totalA)
  const sa = new Float64Array(k),
    sb = new Float64Array(k)
  const draw = Statistics.rng(seed)
  const boots: Array<number> = []
  for (let r = 0; r < resamples; r++) {
    sa.fill(0)
    sb.fill(0)
    for (let i = 0; i < n; i++) {
      const j = Math.floor(draw() * n) * k
      for (let c = 0; c < k; c++) {
        sa[c] = sa[c]! + A[j + c]!
        sb[c] = sb[c]! + B[j + c]!
      }
    }
    boots.push(statistic(sb) - statistic(sa))
  }
  boots.sort((x, y) => x - y)
  const flip = Statistics.rng(seed ^ 0x5bd1e995)
  const moved = new Float64Array(k)
  let extreme = 0
  for (let r = 0; r < permutations; r++) {
    moved.fill(0)
    for (let i = 0; i < n; i++) if (flip() < 0.5) for (let c = 0; c < k; c++) moved[c] = moved[c]! + D[i * k + c]!
    for (let c = 0; c < k; c++) {
      sa[c] = totalA[c]! + moved[c]!
      sb[c] = totalB[c]! - moved[c]!
    }
    if (Math.abs(statistic(sb) - statistic(sa)) >= Math.abs(observed) - 1e-12) extreme++
  }
  return (extreme + 1) / (permutations + 1)
}

const oldPairedMean = (
  a: ArrayLike<number>,
  b: ArrayLike<number>,
  seed: number,
  resamples: number,
  permutations: number
): number => {
  const d: Array<number> = []
  for (let i = 0; i < a.length; i++) d.push(b[i]! - a[i]!)
  const est = oldBootstrapMean(d, seed, resamples)
  const next = Statistics.rng(seed ^ 0x5bd1e995)
  let extreme = 0
  for (let k = 0; k < permutations; k++) {
    let s = 0
    for (const x of d) s += next() < 0.5 ? -x : x
    if (Math.abs(s / d.length) >= Math.abs(est.mean) - 1e-12) extreme++
  }
  return (extreme + 1) / (permutations + 1)
}

/** The previous test of one pair of columns (first pass only: its cost per permutation is what counts). */
const oldCompare = (a: Paired.Columns, b: Paired.Columns, permutations: number): number => {
  const rows = (c: Paired.Columns): Array<ArrayLike<number>> =>
    c._tag === "Mean"
      ? [c.values]
      : c._tag === "Ratio"
        ? [c.num, c.den]
        : [c.precision.num, c.precision.den, c.recall.num, c.recall.den]
  if (a._tag === "Mean" && b._tag === "Mean") return oldPairedMean(a.values, b.values, 7, 1000, permutations)
  const ca = rows(a),
    cb = rows(b)
  const n = ca[0]!.length
  const ra = Array.from({ length: n }, (_, i) => ca.map((c) => c[i]!)),
    rb = Array.from({ length: n }, (_, i) => cb.map((c) => c[i]!))
  const ratio = (x: number, y: number) => (y === 0 ? NaN : x / y)
  const stat =
    a._tag === "Ratio"
      ? (s: ArrayLike<number>) => ratio(s[0]!, s[1]!)
      : (s: ArrayLike<number>) => Statistics.f1(ratio(s[0]!, s[1]!), ratio(s[2]!, s[3]!))
  return oldPairedPooled(ra, rb, stat, 7, 1000, permutations)
}

// ---- synthetic run ----

const next = Statistics.rng(11)

/** One cell's columns for the 10 metrics over n instances; `skill` shifts its scores. */
const cell = (n: number, skill: number): Array<Paired.Columns> => {
  const columns: Array<Paired.Columns> = []
  for (let m = 0; m < 7; m++) {
    columns.push(
      Paired.mean(
        Float64Array.from({ length: n }, () =>
          m % 2 === 0 ? (next() < 0.4 + skill ? 1 : 0) : Math.min(1, next() * (0.8 + skill))
        )
      )
    )
  }
  const counts = () => {
    const den = Float64Array.from({ length: n }, () => 2 + Math.floor(next() * 3))
    return { num: den.map((d) => Math.min(d, Math.round(next() * d * (0.6 + skill)))), den }
  }
  const p = counts(),
    r = counts()
  columns.push(Paired.ratio(p.num, p.den), Paired.ratio(r.num, r.den), Paired.f1(p, r))
  return columns
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(3)} s`
const time = <A>(f: () => A): [A, number] => {
  const start = performance.now()
  const a = f()
  return [a, performance.now() - start]
}
const gc = (globalThis as { gc?: () => void }).gc
const line = (label: string, before: string, after: string) =>
  console.log(`${label.padEnd(58)} ${before.padStart(20)} ${after.padStart(12)}`)

console.log(`${"".padEnd(58)} ${"before".padStart(20)} ${"after".padStart(12)}`)

for (const n of [756, 10_000]) {
  const xs = Array.from({ length: n }, () => next())
  gc?.()
  const [, before] = time(() => oldBootstrapMean(xs, 7))
  const [, cold] = time(() => Statistics.bootstrapMean(xs, { seed: 7 }))
  const [, warm] = time(() => Statistics.bootstrapMean(xs, { seed: 7 }))
  line(`bootstrapMean, n = ${n}, 1000 resamples (first call)`, seconds(before), seconds(cold))
  line(`bootstrapMean, n = ${n}, another column of the same n`, seconds(before), seconds(warm))
}

for (const n of [756, 10_000]) {
  const cells = Array.from({ length: 20 }, (_, c) => cell(n, c === 0 ? 0 : 0.002 * c))
  const tests = cells.slice(1).flatMap((columns) => columns.map((b, m) => ({ a: cells[0]![m]!, b })))
  gc?.()
  const share = n > 1000 ? 19 : tests.length
  const [, oldSome] = time(() => tests.slice(0, share).map((t) => oldCompare(t.a, t.b, 2000)))
  const before = (oldSome * tests.length) / share
  const [fam, after] = time(() => Paired.family(tests, { seed: 7, resamples: 1000 }))
  const note = share < tests.length ? ` (${share} tests x ${tests.length / share})` : ""
  line(`paired family, 19 cells x 10 metrics, n = ${n}`, `${seconds(before)}${note}`, seconds(after))
  console.log(
    `  ${fam.tests} tests, ${fam.permutations.refinedTests} refined to ${fam.permutations.refined} permutations; before: first pass only`
  )
}

{
  // A whole run: summary intervals for every cell, metric and slice; every test against cell 0.
  const n = 10_000
  const cells = Array.from({ length: 20 }, (_, c) => cell(n, c === 0 ? 0 : 0.002 * c))
  const types = Array.from({ length: n }, (_, i) => i % 3)
  const slices: ReadonlyArray<ReadonlyArray<number> | undefined> = [
    undefined,
    ...[0, 1, 2].map((t) => types.flatMap((x, i) => (x === t ? [i] : [])))
  ]
  gc?.()
  const [, summary] = time(() => {
    for (const columns of cells)
      for (const c of columns)
        for (const rows of slices) Paired.estimate(c, rows === undefined ? { seed: 7 } : { seed: 7, rows })
  })
  const tests = cells
    .slice(1)
    .flatMap((columns) =>
      columns.flatMap((b, m) =>
        slices.map((rows) => ({ a: cells[0]![m]!, b, ...(rows === undefined ? {} : { rows }) }))
      )
    )
  const [fam, paired] = time(() => Paired.family(tests, { seed: 7, resamples: 1000 }))
  // Before: one bootstrapMean over 10,000 rows, times 20 cells x 10 metrics x 2 (the slices hold 2n rows); pooled metrics cost more.
  const oneOld = time(() =>
    oldBootstrapMean(
      Array.from({ length: n }, () => next()),
      7
    )
  )[1]
  line(
    "run 20 cells x 10,000 x 10 metrics x 4 slices: summary CIs",
    `>= ${seconds(oneOld * 2 * 200)} (scaled)`,
    seconds(summary)
  )
  line("  the same run: paired tests against the baseline", "", seconds(paired))
  console.log(
    `  ${fam.tests} tests, ${fam.permutations.refinedTests} refined to ${fam.permutations.refined} permutations, ${fam.permutations.exactTests} exact`
  )
  console.log(`  heap used: ${(process.memoryUsage().heapUsed / 2 ** 20).toFixed(0)} MB`)
}
