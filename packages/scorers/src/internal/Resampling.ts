import { Random } from "@cupid-lab/core"
import { varyingOnce } from "./CompactRows.js"

export { finiteRows, varyingOnce } from "./CompactRows.js"

// Bootstrap resamples and sign-flip patterns as bit masks over rows, and column sums over them
// through subset-sum tables: the 32 rows of a mask word are split into four bytes, and a
// 256-entry table per byte holds the sum of every subset of its 8 rows, so summing a column over
// a pattern costs n / 8 table reads instead of n draws and additions. Every result depends on
// (seed, n, count) only, so plans are shared by every column of that size.

const TWO_TO_MINUS_32 = 2 ** -32

/** Seed of the resampling stream; `Statistics.rng` draws the same numbers as floats. */
export const mix = (seed: number): number => (seed >>> 0) ^ 0x9e3779b9

/** Seed of the sign-flip stream, apart from the resampling stream of the same seed. */
export const flipSeed = (seed: number): number => mix(seed ^ 0x5bd1e995)

/** Tables for rows [i0, i0 + 32) of x (zero past n): table q, entry m = sum of x[i0 + 8q + j] over the bits j of m. */
const fillTables = (tables: Float64Array, x: Float64Array, i0: number, n: number): void => {
  for (let q = 0; q < 4; q++) {
    const off = q << 8
    tables[off] = 0
    for (let j = 0; j < 8; j++) {
      const i = i0 + 8 * q + j
      const v = i < n ? x[i]! : 0
      const h = 1 << j
      for (let m = 0; m < h; m++) tables[off + h + m] = tables[off + m]! + v
    }
  }
}

/**
 * Bootstrap resamples of n rows. Resample b draws n row indices floor(u * n) from the stream,
 * with u the stream's numbers in [0, 1) (the draws `Math.floor(rng() * n)` would make). Row
 * counts are kept as two bit levels (drawn at least once, at least twice) plus a list of the
 * draws beyond the second.
 */
export interface ResamplePlan {
  readonly n: number
  readonly resamples: number
  /** Word k of resample b at [k * resamples + b]: bit j set when row 32k + j is drawn at least once. */
  readonly once: Uint32Array
  /** The same for rows drawn at least twice. */
  readonly twice: Uint32Array
  /** Draws beyond the second: resample b's entries are [extraStart[b], extraStart[b + 1]). */
  readonly extraStart: Int32Array
  readonly extraRow: Int32Array
  readonly extraCount: Int32Array
}

const buildResamplePlan = (seed: number, n: number, resamples: number): ResamplePlan => {
  const words = (n + 31) >>> 5
  const once = new Uint32Array(words * resamples)
  const twice = new Uint32Array(words * resamples)
  const counts = new Int32Array(words * 32)
  const draws = new Uint32Array(n)
  const extraStart = new Int32Array(resamples + 1)
  let extraRow = new Int32Array(Math.max(64, (n * resamples) >>> 3))
  let extraCount = new Int32Array(extraRow.length)
  let e = 0
  const stream = Random.mulberry32Words(mix(seed))
  for (let b = 0; b < resamples; b++) {
    stream.fill(draws)
    counts.fill(0)
    for (let i = 0; i < n; i++) counts[Math.floor(draws[i]! * TWO_TO_MINUS_32 * n)]!++
    for (let k = 0; k < words; k++) {
      let o = 0,
        t = 0
      for (let j = 0; j < 32; j++) {
        const c = counts[32 * k + j]!
        if (c === 0) continue
        o |= 1 << j
        if (c === 1) continue
        t |= 1 << j
        if (c === 2) continue
        if (e === extraRow.length) {
          const row = new Int32Array(e * 2),
            count = new Int32Array(e * 2)
          row.set(extraRow)
          count.set(extraCount)
          extraRow = row
          extraCount = count
        }
        extraRow[e] = 32 * k + j
        extraCount[e] = c - 2
        e++
      }
      once[k * resamples + b] = o
      twice[k * resamples + b] = t
    }
    extraStart[b + 1] = e
  }
  return { n, resamples, once, twice, extraStart, extraRow: extraRow.slice(0, e), extraCount: extraCount.slice(0, e) }
}

// A few recent plans, so the columns of one size (every metric of a slice, every cell with the
// same rows) share one. A plan is a pure function of its key, so the cache never changes a result.
const planCache = new Map<string, ResamplePlan>()
const planCacheBytes = 96 * 2 ** 20
const planBytes = (p: ResamplePlan): number =>
  4 * (p.once.length + p.twice.length + p.extraStart.length + 2 * p.extraRow.length)

export const resamplePlan = (seed: number, n: number, resamples: number): ResamplePlan => {
  const key = `${seed >>> 0}:${n}:${resamples}`
  const hit = planCache.get(key)
  if (hit !== undefined) {
    planCache.delete(key)
    planCache.set(key, hit)
    return hit
  }
  const plan = buildResamplePlan(seed, n, resamples)
  planCache.set(key, plan)
  let total = 0
  for (const p of planCache.values()) total += planBytes(p)
  for (const [k, p] of planCache) {
    if (total <= planCacheBytes || k === key) break
    planCache.delete(k)
    total -= planBytes(p)
  }
  return plan
}

/** out[b] = sum of x over resample b (each row as often as it was drawn); x has plan.n finite values. */
export const resampledSums = (plan: ResamplePlan, x: Float64Array, out: Float64Array): Float64Array => {
  const { n, resamples: B, once, twice, extraStart, extraRow, extraCount } = plan
  const t = new Float64Array(1024)
  out.fill(0)
  for (let k = 0; 32 * k < n; k++) {
    fillTables(t, x, 32 * k, n)
    const base = k * B
    for (let b = 0; b < B; b++) {
      const o = once[base + b]!,
        w = twice[base + b]!
      out[b] =
        out[b]! +
        (t[o & 255]! + t[256 + ((o >>> 8) & 255)]! + t[512 + ((o >>> 16) & 255)]! + t[768 + (o >>> 24)]!) +
        (t[w & 255]! + t[256 + ((w >>> 8) & 255)]! + t[512 + ((w >>> 16) & 255)]! + t[768 + (w >>> 24)]!)
    }
  }
  for (let b = 0; b < B; b++) {
    let s = 0
    for (let e = extraStart[b]!; e < extraStart[b + 1]!; e++) s += extraCount[e]! * x[extraRow[e]!]!
    out[b] = out[b]! + s
  }
  return out
}

/**
 * Random sign-flip patterns [from, to) over n rows: pattern r takes ceil(n / 32) words of the
 * flip stream, bit j of word k flipping row 32k + j. A longer run extends a shorter one.
 */
export interface FlipChunk {
  readonly n: number
  readonly from: number
  readonly to: number
  /** Word k of pattern r at [k * (to - from) + r - from]. */
  readonly flips: Uint32Array
}

/** Visit the patterns [from, to) of the flip stream of (seed, n) in chunks of at most `chunk`. */
export const flipChunks = (
  seed: number,
  n: number,
  from: number,
  to: number,
  visit: (c: FlipChunk) => void,
  chunk = 4096
): void => {
  const words = (n + 31) >>> 5
  const stream = Random.mulberry32Words(flipSeed(seed))
  const row = new Uint32Array(words)
  for (let r = 0; r < from; r++) stream.fill(row)
  for (let start = from; start < to; start += chunk) {
    const end = Math.min(to, start + chunk),
      size = end - start
    const flips = new Uint32Array(words * size)
    for (let r = 0; r < size; r++) {
      stream.fill(row)
      for (let k = 0; k < words; k++) flips[k * size + r] = row[k]!
    }
    visit({ n, from: start, to: end, flips })
  }
}

/** out[r - from] = sum of x over the rows pattern r flips. */
export const flippedSums = (c: FlipChunk, x: Float64Array, out: Float64Array): Float64Array => {
  const size = c.to - c.from
  const t = new Float64Array(1024)
  out.fill(0, 0, size)
  for (let k = 0; 32 * k < c.n; k++) {
    fillTables(t, x, 32 * k, c.n)
    const base = k * size
    for (let r = 0; r < size; r++) {
      const w = c.flips[base + r]!
      out[r] =
        out[r]! + (t[w & 255]! + t[256 + ((w >>> 8) & 255)]!) + (t[512 + ((w >>> 16) & 255)]! + t[768 + (w >>> 24)]!)
    }
  }
  return out
}

/** Sums of x over every subset of its rows, subset m (bit i = row i) at [m]. */
const subsetSums = (x: Float64Array, from: number, count: number): Float64Array => {
  const out = new Float64Array(1 << count)
  for (let j = 0; j < count; j++) {
    const h = 1 << j,
      v = x[from + j]!
    for (let m = 0; m < h; m++) out[h + m] = out[m]! + v
  }
  return out
}

/**
 * How many of the 2^n sign patterns `isExtreme` accepts, given each column's sum over the rows
 * the pattern flips (in `moved`, column order). Sums come from two subset tables (low and high
 * rows), so each pattern costs one addition per column and no error accumulates.
 */
export const countExactExtremes = (
  columns: ReadonlyArray<Float64Array>,
  n: number,
  isExtreme: (moved: Float64Array) => boolean
): number => {
  const low = Math.min(n, 12),
    high = n - low
  const lows = columns.map((x) => subsetSums(x, 0, low))
  const highs = columns.map((x) => subsetSums(x, low, high))
  const moved = new Float64Array(columns.length)
  let count = 0
  for (let h = 0; h < 1 << high; h++) {
    for (let l = 0; l < 1 << low; l++) {
      for (let c = 0; c < columns.length; c++) moved[c] = highs[c]![h]! + lows[c]![l]!
      if (isExtreme(moved)) count++
    }
  }
  return count
}

/** How many patterns of the chunk `isExtreme` accepts. */
export const countChunkExtremes = (
  c: FlipChunk,
  columns: ReadonlyArray<Float64Array>,
  isExtreme: (moved: Float64Array) => boolean
): number => {
  const size = c.to - c.from
  const sums = columns.map((x) => flippedSums(c, x, new Float64Array(size)))
  const moved = new Float64Array(columns.length)
  let count = 0
  for (let r = 0; r < size; r++) {
    for (let k = 0; k < columns.length; k++) moved[k] = sums[k]![r]!
    if (isExtreme(moved)) count++
  }
  return count
}

/** Rows up to which every test enumerates all 2^n sign patterns (2^20, about a million, patterns). */
export const exactUpTo = 20

/** Enumerate all 2^n patterns when n <= {@link exactUpTo} or there are at most `permutations` of them. */
export const exactFor = (n: number, permutations: number): boolean => n <= exactUpTo || 2 ** n <= permutations

/** Type-7 quantiles 2.5% and 97.5% of the finite values of xs (sorted in place). */
export const interval = (xs: Float64Array): readonly [number, number] => {
  let m = 0
  for (let i = 0; i < xs.length; i++) if (Number.isFinite(xs[i])) xs[m++] = xs[i]!
  const sorted = xs.subarray(0, m).sort()
  const q = (p: number) => {
    if (m === 0) return NaN
    const h = (m - 1) * p,
      lo = Math.floor(h),
      hi = Math.ceil(h)
    return sorted[lo]! + (h - lo) * (sorted[hi]! - sorted[lo]!)
  }
  return [q(0.025), q(0.975)]
}

/**
 * A paired test over n rows: columns (finite, length n), the statistic of their sums over a
 * bootstrap resample, and whether a sign pattern is as extreme as the observed statistic, given
 * the columns' sums over the rows it flips.
 */
export interface PairedSpec {
  readonly n: number
  /** Columns the bootstrap sums. */
  readonly columns: ReadonlyArray<Float64Array>
  readonly resampled: (sums: Float64Array) => number
  /**
   * Columns a sign pattern sums over the rows it flips (per-row differences b - a), holding only
   * the rows whose flip changes something: a row equal in both cells leaves every pattern's
   * statistic as it is, so the permutation distribution over the others is the same one.
   */
  readonly flipped: ReadonlyArray<Float64Array>
  /** Rows in `flipped`: what exact enumeration (2^flips patterns) and the sign streams run over. */
  readonly flips: number
  readonly isExtreme: (moved: Float64Array) => boolean
}

/** Percentile bootstrap 95% interval of the spec's statistic. */
export const bootstrapInterval = (spec: PairedSpec, seed: number, resamples: number): readonly [number, number] => {
  const plan = resamplePlan(seed, spec.n, resamples)
  const sums = spec.columns.map((x) => resampledSums(plan, x, new Float64Array(resamples)))
  const one = new Float64Array(sums.length)
  const stats = new Float64Array(resamples)
  for (let b = 0; b < resamples; b++) {
    for (let c = 0; c < sums.length; c++) one[c] = sums[c]![b]!
    stats[b] = spec.resampled(one)
  }
  return interval(stats)
}

/** Extreme patterns among the flip stream's patterns [from, to), for specs that share n. */
export const monteCarloExtremes = (
  specs: ReadonlyArray<PairedSpec>,
  seed: number,
  from: number,
  to: number
): Array<number> => {
  const counts = specs.map(() => 0)
  if (specs.length === 0 || to <= from) return counts
  flipChunks(seed, specs[0]!.flips, from, to, (chunk) => {
    specs.forEach((s, i) => (counts[i]! += countChunkExtremes(chunk, s.flipped, s.isExtreme)))
  })
  return counts
}

/** Tolerance on |statistic| when comparing a pattern with the observed value (float summation order). */
export const tolerance = 1e-12

export interface TestResult {
  readonly p: number
  /** `exact`: all 2^n patterns enumerated; `monte-carlo`: random patterns, p = (extreme + 1) / (permutations + 1). */
  readonly test: "exact" | "monte-carlo"
  /** Patterns the p-value counts: 2^n for an exact test. */
  readonly permutations: number
}

export const exactTest = (spec: PairedSpec): TestResult => {
  const all = 2 ** spec.flips
  return { p: countExactExtremes(spec.flipped, spec.flips, spec.isExtreme) / all, test: "exact", permutations: all }
}

export const monteCarloTest = (extreme: number, permutations: number): TestResult => ({
  p: (extreme + 1) / (permutations + 1),
  test: "monte-carlo",
  permutations
})

/** The two-sided sign-flip p-value, exact when {@link exactFor}, else Monte-Carlo. */
export const signFlipTest = (spec: PairedSpec, seed: number, permutations: number): TestResult =>
  exactFor(spec.flips, permutations)
    ? exactTest(spec)
    : monteCarloTest(monteCarloExtremes([spec], seed, 0, permutations)[0]!, permutations)

/** The mean of per-row differences d, as a paired spec: resamples average d, a flip negates d. */
export const meanSpec = (d: Float64Array): { readonly spec: PairedSpec; readonly observed: number } => {
  const n = d.length
  let total = 0
  for (let i = 0; i < n; i++) total += d[i]!
  const observed = total / n
  const threshold = Math.abs(observed) - tolerance
  const rows = varyingOnce([d])
  return {
    observed,
    spec: {
      n,
      columns: [d],
      resampled: (sums) => sums[0]! / n,
      get flipped() {
        return rows().flipped
      },
      get flips() {
        return rows().flips
      },
      isExtreme: (moved) => Math.abs((total - 2 * moved[0]!) / n) >= threshold
    }
  }
}
