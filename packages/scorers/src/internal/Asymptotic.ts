/**
 * Large-sample forms of the intervals and tests of `Statistics` and `Paired`, for runs where
 * resampling every metric of every cell costs more than the sweep itself.
 *
 * Every statistic here is a smooth function f of column sums S (a mean S/n, a pooled ratio N/D,
 * the F1 of two pooled ratios). With g = grad f at the observed sums, the statistic moves, to first
 * order, by g . x_i for row i (the delta method):
 * - Interval: f(S) +- z * se, se = sqrt(n * var_i(g . x_i)) (sample variance, divisor n - 1).
 * - Paired interval: the same with u_i = g_b . b_i - g_a . a_i.
 * - Sign-flip (swap) test: swapping the rows of the two cells moves both sums about their midpoint
 *   M; to first order the difference is sum_i e_i (g(M) . d_i) with random signs e_i, whose
 *   distribution has mean 0 and variance sum_i (g(M) . d_i)^2, so p = P(|Z| >= |observed| / sd).
 *   For a mean this is the normal approximation of the sign-flip distribution of sum d_i.
 *
 * The approximations need many rows that move the statistic, not just many rows: a difference
 * carried by a handful of instances (a rare event) is far from normal. So an interval needs at
 * least {@link minTail} rows on each side of the mean of u, and a test at least {@link minVarying}
 * rows whose swap changes the statistic; otherwise the functions return undefined and the caller
 * resamples.
 */

/** A statistic of column sums with its gradient (both in the order of the columns). */
export interface Smooth {
  readonly value: (sums: ArrayLike<number>, n: number) => number
  readonly gradient: (sums: ArrayLike<number>, n: number) => ReadonlyArray<number>
}

const ratioOf = (num: number, den: number): number => (den === 0 ? NaN : num / den)
const f1Of = (p: number, r: number): number =>
  Number.isNaN(p) || Number.isNaN(r) ? NaN : p + r === 0 ? 0 : (2 * p * r) / (p + r)

export const mean: Smooth = {
  value: (s, n) => s[0]! / n,
  gradient: (_, n) => [1 / n]
}

export const ratio: Smooth = {
  value: (s) => ratioOf(s[0]!, s[1]!),
  gradient: (s) => [1 / s[1]!, -s[0]! / (s[1]! * s[1]!)]
}

export const f1: Smooth = {
  value: (s) => f1Of(ratioOf(s[0]!, s[1]!), ratioOf(s[2]!, s[3]!)),
  gradient: (s) => {
    const p = s[0]! / s[1]!,
      r = s[2]! / s[3]!
    const sum2 = (p + r) * (p + r)
    const dp = (2 * r * r) / sum2,
      dr = (2 * p * p) / sum2
    return [dp / s[1]!, (-dp * s[0]!) / (s[1]! * s[1]!), dr / s[3]!, (-dr * s[2]!) / (s[3]! * s[3]!)]
  }
}

/** The 0.975 quantile of the standard normal distribution. */
export const z975 = 1.959963984540054

const finiteAll = (xs: ReadonlyArray<number>): boolean => xs.every((x) => Number.isFinite(x))

/** u_i = sum_c g_c * x_c[i] (minus the same for `minus`, when given). */
const projections = (
  columns: ReadonlyArray<Float64Array>,
  g: ReadonlyArray<number>,
  n: number,
  minus?: { readonly columns: ReadonlyArray<Float64Array>; readonly g: ReadonlyArray<number> }
): Float64Array => {
  const u = new Float64Array(n)
  columns.forEach((x, c) => {
    const w = g[c]!
    for (let i = 0; i < n; i++) u[i] = u[i]! + w * x[i]!
  })
  minus?.columns.forEach((x, c) => {
    const w = minus.g[c]!
    for (let i = 0; i < n; i++) u[i] = u[i]! - w * x[i]!
  })
  return u
}

/** Rows needed on each side of the mean of u for a large-sample interval. */
export const minTail = 100

/** Rows whose swap changes the statistic needed for a large-sample test. */
export const minVarying = 200

/** Whether at least {@link minTail} values of u lie on each side of their mean. */
const spread = (u: Float64Array): boolean => {
  let m = 0
  for (let i = 0; i < u.length; i++) m += u[i]!
  m /= u.length
  let above = 0,
    below = 0
  for (let i = 0; i < u.length; i++) {
    if (u[i]! > m) above++
    else if (u[i]! < m) below++
  }
  return Math.min(above, below) >= minTail
}

const sampleVariance = (u: Float64Array): number => {
  const n = u.length
  let m = 0
  for (let i = 0; i < n; i++) m += u[i]!
  m /= n
  let v = 0
  for (let i = 0; i < n; i++) v += (u[i]! - m) * (u[i]! - m)
  return v / (n - 1)
}

/**
 * 95% interval of f(S) over n rows (n >= 2) by the delta method; undefined when the gradient is not
 * finite (e.g. a ratio whose denominator sums to 0), so the caller can resample instead.
 */
export const interval = (
  statistic: Smooth,
  columns: ReadonlyArray<Float64Array>,
  sums: ArrayLike<number>,
  n: number
): readonly [number, number] | undefined => {
  const value = statistic.value(sums, n)
  const g = statistic.gradient(sums, n)
  if (!Number.isFinite(value) || !finiteAll(g)) return undefined
  const u = projections(columns, g, n)
  if (!spread(u)) return undefined
  const se = Math.sqrt(n * sampleVariance(u))
  return [value - z975 * se, value + z975 * se]
}

/** 95% interval of f(S_b) - f(S_a), rows paired by index (n >= 2); undefined when a gradient is not finite. */
export const pairedInterval = (
  statistic: Smooth,
  a: ReadonlyArray<Float64Array>,
  b: ReadonlyArray<Float64Array>,
  sumsA: ArrayLike<number>,
  sumsB: ArrayLike<number>,
  n: number
): readonly [number, number] | undefined => {
  const ga = statistic.gradient(sumsA, n),
    gb = statistic.gradient(sumsB, n)
  const delta = statistic.value(sumsB, n) - statistic.value(sumsA, n)
  if (!Number.isFinite(delta) || !finiteAll(ga) || !finiteAll(gb)) return undefined
  const u = projections(b, gb, n, { columns: a, g: ga })
  if (!spread(u)) return undefined
  const se = Math.sqrt(n * sampleVariance(u))
  return [delta - z975 * se, delta + z975 * se]
}

/**
 * Standard error of f(S_b) - f(S_a) by the delta method, rows paired by index, with no condition on
 * the spread of the rows (what a power calculation needs); NaN when n < 2 or a gradient is not finite.
 */
export const pairedStandardError = (
  statistic: Smooth,
  a: ReadonlyArray<Float64Array>,
  b: ReadonlyArray<Float64Array>,
  sumsA: ArrayLike<number>,
  sumsB: ArrayLike<number>,
  n: number
): number => {
  const ga = statistic.gradient(sumsA, n),
    gb = statistic.gradient(sumsB, n)
  if (n < 2 || !finiteAll(ga) || !finiteAll(gb)) return NaN
  return Math.sqrt(n * sampleVariance(projections(b, gb, n, { columns: a, g: ga })))
}

/**
 * erfc(x) for x >= 0 with a fractional error below 1.2e-7 everywhere (a Chebyshev fit of
 * exp(x^2) erfc(x)), so that p-values keep their relative precision far into the tail.
 */
const erfc = (x: number): number => {
  const t = 1 / (1 + 0.5 * x)
  const poly =
    -1.26551223 +
    t *
      (1.00002368 +
        t *
          (0.37409196 +
            t *
              (0.09678418 +
                t *
                  (-0.18628806 +
                    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))))
  return t * Math.exp(-x * x + poly)
}

/** P(|Z| >= z) for a standard normal Z. */
export const twoSided = (z: number): number => Math.min(1, erfc(Math.abs(z) / Math.SQRT2))

/**
 * Two-sided p of the paired swap test, from the normal approximation of its distribution.
 * `flipped[c][i]` is b - a of column c in row i; `totals` holds a's sums then b's. Undefined when
 * the approximation does not apply (a gradient that is not finite, or fewer than {@link minVarying}
 * rows whose swap changes the statistic).
 */
export const swapTest = (
  statistic: Smooth,
  flipped: ReadonlyArray<Float64Array>,
  totals: ArrayLike<number>,
  observed: number,
  n: number,
  needVarying: number = minVarying
): number | undefined => {
  const k = flipped.length
  const middle = Array.from({ length: k }, (_, c) => (totals[c]! + totals[k + c]!) / 2)
  const g = statistic.gradient(middle, n)
  if (!finiteAll(g)) return undefined
  const w = projections(flipped, g, n)
  let variance = 0,
    varying = 0
  for (let i = 0; i < n; i++) {
    variance += w[i]! * w[i]!
    if (w[i] !== 0) varying++
  }
  if (varying < needVarying) return undefined
  return twoSided(observed / Math.sqrt(variance))
}
