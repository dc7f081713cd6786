/**
 * The headline table of each instance type: every cell on the main metric and the metrics tested
 * against the baseline, the best value of each column in bold. Re-exported by {@link Tables}.
 */
import type { ResultLine } from "@cupid-lab/results"
import type { Analysis } from "./Analysis.js"
import * as Format from "./Format.js"
import * as Notes from "./Notes.js"
import { bestIndex } from "./Pairwise.js"
import * as Slices from "./Slices.js"
import type { Column, Table } from "./Table.js"
import { cellRow, heuristicMarks, left, lowerIsBetter, num, right, withN } from "./Tables.js"

/** The main metric, then the other metrics tested against the baseline. */
const headlineMetrics = (a: Pick<Analysis, "main" | "compared">): Array<ResultLine.MetricDescription> => [
  ...(a.main === undefined ? [] : [a.main]),
  ...a.compared.filter((m) => m.name !== a.main?.name)
]

/** The best value, as shown, among the cells that read no gold labels (cells that show the same text share it). */
const bestOf = (
  values: ReadonlyArray<{ readonly value: number | null | undefined; readonly usesGold: boolean }>,
  m: ResultLine.MetricDescription
): string | undefined => {
  const i = bestIndex(
    values.map((v) => (v.usesGold ? undefined : v.value)),
    m
  )
  return i < 0 ? undefined : Format.number(values[i]!.value)
}

export const bestShown = (
  cells: ReadonlyArray<ResultLine.CellSummary>,
  slice: Slices.Slice,
  m: ResultLine.MetricDescription
): string | undefined =>
  bestOf(
    cells.map((c) => ({ value: Slices.estimate(c, slice, m.name)?.mean, usesGold: c.usesGold })),
    m
  )

/** The best value of each metric column marked: row k is cell k, and column i + 2 shows `metrics[i]`. */
export const markBest = (
  cells: ReadonlyArray<ResultLine.CellSummary>,
  metrics: ReadonlyArray<ResultLine.MetricDescription>,
  t: Table
): Table => {
  const best = t.columns.map((_, i) => {
    const m = metrics[i - 2]
    return m === undefined
      ? undefined
      : bestOf(
          t.rows.map((r, k) => ({ value: r.cells[i]?.value, usesGold: cells[k]?.usesGold !== false })),
          m
        )
  })
  return {
    ...t,
    rows: t.rows.map((r, k) => ({
      ...r,
      cells: r.cells.map((c, i) =>
        best[i] !== undefined &&
        cells[k]?.usesGold === false &&
        c.value !== null &&
        c.value !== undefined &&
        Format.number(c.value) === best[i]
          ? { ...c, best: true }
          : c
      )
    }))
  }
}

/**
 * Cell x metrics on one slice: N, then each metric's value (with its CI when `ci`, own n where it
 * differs from N), the best of each column marked; a metric no cell has a value of on the slice
 * (retrieval metrics on LoCoMo's adversarial questions) has no column.
 */
export const perMetric = (
  a: Pick<Analysis, "summary" | "baseline">,
  slice: Slices.Slice,
  metrics: ReadonlyArray<ResultLine.MetricDescription>,
  ci: boolean,
  column: (m: ResultLine.MetricDescription) => Column,
  head: Pick<Table, "id" | "title" | "notes">
): Table => {
  const shown = metrics.filter((m) => Slices.valued(a.summary.cells, [slice], m.name).length > 0)
  return markBest(a.summary.cells, shown, {
    ...head,
    columns: [left("cell"), right("N"), ...shown.map(column)],
    rows: a.summary.cells.map((c) => {
      const s = Slices.get(c, slice)
      return cellRow(a, c, [num(String(s.n), s.n), ...shown.map((m) => withN(s.metrics[m.name], s.n, ci))])
    })
  })
}

/** Cell x headline metrics: value [95% CI] (own n where it differs from N), the best of each column marked. */
export const headline = (
  a: Pick<Analysis, "summary" | "baseline" | "main" | "compared">,
  slice: Slices.Slice
): Table => {
  const metrics = headlineMetrics(a)
  return perMetric(
    a,
    slice,
    metrics,
    true,
    (m) => right(m.name, [...heuristicMarks(m), ...(m.direction === "lower" ? lowerIsBetter : [])]),
    {
      id: `headline-${slice}`,
      title: `Headline metrics, ${Notes.sliceTitle(slice)}`,
      notes: [
        "Each entry: value [95% CI]; N: instances scored (a value with its own n is defined on fewer). Best: the best value of the column among the cells that read no gold labels (ties share it).",
        ...metrics
          .filter((m) => m.heuristic)
          .map(
            (m) =>
              `${Notes.heuristicMark} ${m.name} is computed by an offline heuristic, not the paper's LLM procedure.`
          )
      ]
    }
  )
}

/** The headline tables, one per instance type of the run (all instances first). */
export const tables = (a: Pick<Analysis, "summary" | "baseline" | "main" | "compared">): Array<Table> =>
  Slices.of(a.summary).map((s) => headline(a, s))
