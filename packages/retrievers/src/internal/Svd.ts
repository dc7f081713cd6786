/**
 * Truncated SVD of a sparse matrix by randomized range finding (Halko, Martinsson & Tropp 2011):
 * sample the range with a seeded Gaussian test matrix, sharpen it with power iterations, then take
 * the exact SVD of the small projected matrix through a Jacobi eigendecomposition.
 */
import { Random } from "@cupid-lab/core"

/** Compressed sparse rows: row i holds cols[rowStart[i] .. rowStart[i+1]) with values vals[...]. */
export interface Csr {
  readonly rows: number
  readonly cols: number
  readonly rowStart: Int32Array
  readonly colIndex: Int32Array
  readonly values: Float64Array
}

export interface Svd {
  /** Singular values, descending. */
  readonly values: ReadonlyArray<number>
  /** Right singular vectors, one Float64Array of length `cols` per singular value. */
  readonly right: ReadonlyArray<Float64Array>
}

// 1 - u is in (0, 1]: the logarithm stays finite.
const gaussian = (uniform: () => number) => () =>
  Math.sqrt(-2 * Math.log(1 - uniform())) * Math.cos(2 * Math.PI * uniform())

/**
 * The products below work on a block of `width` dense columns at once, kept row-major (`width`
 * numbers per row), so that the sparse matrix is read once per product rather than once per
 * column. Each output number is still summed term by term in the same order as a column-by-column
 * product, so the results are the same to the last bit.
 */
const rowMajor = (columns: ReadonlyArray<Float64Array>, length: number): Float64Array => {
  const width = columns.length
  const block = new Float64Array(length * width)
  for (let j = 0; j < width; j++) {
    const c = columns[j]!
    for (let t = 0; t < length; t++) block[t * width + j] = c[t]!
  }
  return block
}

const toColumns = (block: Float64Array, width: number, length: number): Array<Float64Array> =>
  Array.from({ length: width }, (_, j) => {
    const c = new Float64Array(length)
    for (let t = 0; t < length; t++) c[t] = block[t * width + j]!
    return c
  })

/** A times dense columns X (each of length cols) -> columns of length rows. */
export const times = (a: Csr, xs: ReadonlyArray<Float64Array>): Array<Float64Array> => {
  const width = xs.length
  const x = rowMajor(xs, a.cols)
  const y = new Float64Array(a.rows * width)
  const sums = new Float64Array(width)
  for (let i = 0; i < a.rows; i++) {
    sums.fill(0)
    for (let p = a.rowStart[i]!; p < a.rowStart[i + 1]!; p++) {
      const v = a.values[p]!
      const base = a.colIndex[p]! * width
      for (let j = 0; j < width; j++) sums[j]! += v * x[base + j]!
    }
    y.set(sums, i * width)
  }
  return toColumns(y, width, a.rows)
}

/** A-transpose times dense columns Y (each of length rows) -> columns of length cols. */
export const transposeTimes = (a: Csr, ys: ReadonlyArray<Float64Array>): Array<Float64Array> => {
  const width = ys.length
  const y = rowMajor(ys, a.rows)
  const x = new Float64Array(a.cols * width)
  for (let i = 0; i < a.rows; i++) {
    const yBase = i * width
    for (let p = a.rowStart[i]!; p < a.rowStart[i + 1]!; p++) {
      const v = a.values[p]!
      const base = a.colIndex[p]! * width
      for (let j = 0; j < width; j++) {
        const yij = y[yBase + j]!
        if (yij !== 0) x[base + j]! += v * yij
      }
    }
  }
  return toColumns(x, width, a.cols)
}

const dot = (a: Float64Array, b: Float64Array): number => {
  let s = 0
  for (let i = 0; i < a.length; i++) s += a[i]! * b[i]!
  return s
}

/** c -= r q, skipped when r is 0 (as Gram-Schmidt below skips a zero projection). */
const subtract = (c: Float64Array, r: number, q: Float64Array) => {
  if (r !== 0) for (let t = 0; t < c.length; t++) c[t]! -= r * q[t]!
}

/**
 * Modified Gram-Schmidt, twice for stability; columns that vanish (rank deficiency) become zero.
 * Four columns at a time take their projections on the columns before them together: one pass
 * over each earlier column sums four independent dot products (each in the order of its own pass),
 * which the processor overlaps; then each of the four is finished in turn. Every number is computed
 * by the same operations in the same order as one column after another.
 */
export const orthonormalize = (columns: Array<Float64Array>): Array<Float64Array> => {
  const normalize = (c: Float64Array) => {
    const norm = Math.sqrt(dot(c, c))
    if (norm < 1e-10) c.fill(0)
    else for (let t = 0; t < c.length; t++) c[t]! /= norm
  }
  for (let pass = 0; pass < 2; pass++) {
    let j = 0
    for (; j + 4 <= columns.length; j += 4) {
      const c0 = columns[j]!,
        c1 = columns[j + 1]!,
        c2 = columns[j + 2]!,
        c3 = columns[j + 3]!
      for (let i = 0; i < j; i++) {
        const q = columns[i]!
        let r0 = 0,
          r1 = 0,
          r2 = 0,
          r3 = 0
        for (let t = 0; t < q.length; t++) {
          const qt = q[t]!
          r0 += qt * c0[t]!
          r1 += qt * c1[t]!
          r2 += qt * c2[t]!
          r3 += qt * c3[t]!
        }
        if (r0 !== 0 && r1 !== 0 && r2 !== 0 && r3 !== 0) {
          for (let t = 0; t < q.length; t++) {
            const qt = q[t]!
            c0[t]! -= r0 * qt
            c1[t]! -= r1 * qt
            c2[t]! -= r2 * qt
            c3[t]! -= r3 * qt
          }
        } else {
          subtract(c0, r0, q)
          subtract(c1, r1, q)
          subtract(c2, r2, q)
          subtract(c3, r3, q)
        }
      }
      // Within the four: each on the ones before it, in order.
      for (let k = 0; k < 4; k++) {
        const c = columns[j + k]!
        for (let i = j; i < j + k; i++) subtract(c, dot(columns[i]!, c), columns[i]!)
        normalize(c)
      }
    }
    for (; j < columns.length; j++) {
      const c = columns[j]!
      for (let i = 0; i < j; i++) subtract(c, dot(columns[i]!, c), columns[i]!)
      normalize(c)
    }
  }
  return columns
}

/** Eigendecomposition of a symmetric matrix (row-major, n x n) by cyclic Jacobi rotations. */
export const symmetricEigen = (
  matrix: ReadonlyArray<ReadonlyArray<number>>
): { values: Array<number>; vectors: Array<Array<number>> } => {
  const n = matrix.length
  const a = matrix.map((row) => [...row])
  const v: Array<Array<number>> = Array.from({ length: n }, (_, i) =>
    Array.from({ length: n }, (_, j) => (i === j ? 1 : 0))
  )
  for (let sweep = 0; sweep < 100; sweep++) {
    let off = 0
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p]![q]! ** 2
    if (off < 1e-22) break
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p]![q]!
        if (Math.abs(apq) < 1e-300) continue
        const theta = (a[q]![q]! - a[p]![p]!) / (2 * apq)
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1))
        const c = 1 / Math.sqrt(t * t + 1)
        const s = t * c
        for (let k = 0; k < n; k++) {
          const akp = a[k]![p]!,
            akq = a[k]![q]!
          a[k]![p] = c * akp - s * akq
          a[k]![q] = s * akp + c * akq
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p]![k]!,
            aqk = a[q]![k]!
          a[p]![k] = c * apk - s * aqk
          a[q]![k] = s * apk + c * aqk
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k]![p]!,
            vkq = v[k]![q]!
          v[k]![p] = c * vkp - s * vkq
          v[k]![q] = s * vkp + c * vkq
        }
      }
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((i, j) => a[j]![j]! - a[i]![i]!)
  return { values: order.map((i) => a[i]![i]!), vectors: order.map((i) => v.map((row) => row[i]!)) }
}

export interface SvdOptions {
  readonly rank: number
  readonly seed: number
  readonly oversample?: number
  readonly powerIterations?: number
}

/** The top `rank` singular values and right singular vectors of `a` (fewer when `a` has lower rank). */
export const truncated = (a: Csr, options: SvdOptions): Svd => {
  const width = Math.min(options.rank + (options.oversample ?? 10), a.rows, a.cols)
  if (width <= 0) return { values: [], right: [] }
  const normal = gaussian(Random.mulberry32(options.seed))
  const omega = Array.from({ length: width }, () => Float64Array.from({ length: a.cols }, normal))
  let q = orthonormalize(times(a, omega))
  for (let i = 0; i < (options.powerIterations ?? 2); i++) {
    q = orthonormalize(times(a, orthonormalize(transposeTimes(a, q))))
  }
  // B = Q^T A, kept as its rows (each of length cols); then B B^T = W diag(s^2) W^T.
  const b = transposeTimes(a, q)
  // Symmetric: each product once (a[t] * b[t] is b[t] * a[t], summed in the same order).
  const gram = b.map(() => new Array<number>(b.length).fill(0))
  for (let i = 0; i < b.length; i++) for (let j = i; j < b.length; j++) gram[i]![j] = gram[j]![i] = dot(b[i]!, b[j]!)
  const { values, vectors } = symmetricEigen(gram)
  const top = values[0] ?? 0
  const outValues: Array<number> = []
  const right: Array<Float64Array> = []
  for (let i = 0; i < values.length && outValues.length < options.rank; i++) {
    const lambda = values[i]!
    if (!(lambda > Math.max(top, 1e-300) * 1e-12)) break
    const sigma = Math.sqrt(lambda)
    const w = vectors[i]!
    const v = new Float64Array(a.cols)
    for (let j = 0; j < b.length; j++) {
      const wj = w[j]!
      if (wj === 0) continue
      const bj = b[j]!
      for (let t = 0; t < v.length; t++) v[t]! += wj * bj[t]!
    }
    for (let t = 0; t < v.length; t++) v[t]! /= sigma
    // Fix the sign so that results do not depend on rotation order: largest component positive.
    let big = 0
    for (let t = 1; t < v.length; t++) if (Math.abs(v[t]!) > Math.abs(v[big]!)) big = t
    if (v[big]! < 0) for (let t = 0; t < v.length; t++) v[t] = -v[t]!
    outValues.push(sigma)
    right.push(v)
  }
  return { values: outValues, right }
}
