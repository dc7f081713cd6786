/**
 * Rows grouped into clusters for clustered paired inference: the instances of one persona share
 * their sessions, so their scores are not independent, and a valid bootstrap or permutation test
 * moves a persona's rows together. Grouping sums each column over a cluster's usable rows (those
 * where every column is finite); a pooled statistic of the cluster sums equals the statistic of the
 * rows, so resampling or swapping cluster sums is the cluster bootstrap and the clustered
 * permutation test.
 */

export interface Grouped {
  /** Per column, the sum over each cluster's usable rows (clusters in first-seen order). */
  readonly sums: ReadonlyArray<Float64Array>
  /** Usable rows of each cluster. */
  readonly counts: Float64Array
  /** Usable rows in all. */
  readonly rows: number
  /** Usable rows of the largest cluster. */
  readonly largest: number
}

/**
 * Group the given rows (default: all) by `clusters[row]`, keeping the rows where every column is
 * finite. A cluster id that is not a finite number is a programming error and throws.
 */
export const group = (
  columns: ReadonlyArray<ArrayLike<number>>,
  rows: ArrayLike<number> | undefined,
  clusters: ArrayLike<number>
): Grouped => {
  const length = rows?.length ?? Math.min(...columns.map((c) => c.length))
  const slot = new Map<number, number>()
  const sums: Array<Array<number>> = columns.map(() => [])
  const counts: Array<number> = []
  let used = 0
  for (let r = 0; r < length; r++) {
    const i = rows === undefined ? r : rows[r]!
    let ok = true
    for (let c = 0; c < columns.length && ok; c++) ok = Number.isFinite(columns[c]![i])
    if (!ok) continue
    const id = clusters[i]!
    if (!Number.isFinite(id)) throw new TypeError(`Paired: row ${i} has no cluster (got ${id})`)
    let k = slot.get(id)
    if (k === undefined) {
      k = counts.length
      slot.set(id, k)
      counts.push(0)
      for (const s of sums) s.push(0)
    }
    counts[k]!++
    columns.forEach((c, j) => (sums[j]![k!]! += c[i]!))
    used++
  }
  return {
    sums: sums.map((s) => Float64Array.from(s)),
    counts: Float64Array.from(counts),
    rows: used,
    largest: Math.max(0, ...counts)
  }
}
