// Row selection as compact columns: the given rows where every column is finite (what a metric or
// a paired test uses), and the rows where some column is not 0 (what a sign flip changes).

/**
 * The given rows (default: all) where every column is finite, as compact columns (Paired's tests
 * and Statistics' intervals). When every row is kept, in order, Float64 columns are returned as
 * they are: nothing that reads them writes to them.
 */
export const finiteRows = (
  columns: ReadonlyArray<ArrayLike<number>>,
  rows?: ArrayLike<number>
): Array<Float64Array> => {
  const length = rows?.length ?? Math.min(...columns.map((c) => c.length))
  const keep = new Int32Array(length)
  let kept = 0
  for (let r = 0; r < length; r++) {
    const i = rows === undefined ? r : rows[r]!
    let ok = true
    for (let c = 0; c < columns.length && ok; c++) ok = Number.isFinite(columns[c]![i])
    if (ok) keep[kept++] = i
  }
  if (rows === undefined && kept === length) {
    const same = columns.filter((c): c is Float64Array => c instanceof Float64Array && c.length === length)
    if (same.length === columns.length) return same
  }
  return columns.map((c) => {
    const out = new Float64Array(kept)
    for (let k = 0; k < kept; k++) out[k] = c[keep[k]!]!
    return out
  })
}

/** The rows where some column is not 0, as compact columns, and their number. */
export const varyingRows = (
  columns: ReadonlyArray<Float64Array>
): { readonly flipped: Array<Float64Array>; readonly flips: number } => {
  const n = columns[0]?.length ?? 0
  const keep = new Int32Array(n)
  let flips = 0
  for (let i = 0; i < n; i++) {
    let varies = false
    for (let c = 0; c < columns.length && !varies; c++) varies = columns[c]![i] !== 0
    if (varies) keep[flips++] = i
  }
  if (flips === n) return { flipped: [...columns], flips }
  return {
    flipped: columns.map((c) => {
      const out = new Float64Array(flips)
      for (let k = 0; k < flips; k++) out[k] = c[keep[k]!]!
      return out
    }),
    flips
  }
}

/**
 * {@link varyingRows}, computed on first call: a spec reads it through getters, so that a test
 * decided by its large-sample form never copies its rows (thousands of tests over tens of thousands
 * of rows each).
 */
export const varyingOnce = (columns: ReadonlyArray<Float64Array>): (() => ReturnType<typeof varyingRows>) => {
  let rows: ReturnType<typeof varyingRows> | undefined
  return () => (rows ??= varyingRows(columns))
}
