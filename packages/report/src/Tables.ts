/**
 * The report's tables as {@link Table} values, one builder per table, from an {@link Analysis}; the
 * reports render them and the viewer fetches them as JSON. {@link tables} needs no paired test.
 *
 * @example
 * Table.markdown(Tables.tables(analysis)[0]) // the headline table of all instances
 */
import type { Statistics } from "@cupid-lab/scorers"
import type { ResultLine } from "@cupid-lab/results"

import type { Analysis, Delta } from "./Analysis.js"
import type { Binned } from "./Bins.js"
import * as Format from "./Format.js"
import * as Interventions from "./Interventions.js"
import * as Notes from "./Notes.js"
import { markBest, perMetric } from "./Headline.js"
import type { Pairwise, SliceResult } from "./Pairwise.js"
import * as Slices from "./Slices.js"
import type { Cell, Column, Mark, Row, RowKind, Table } from "./Table.js"

export const left = (label: string, marks: ReadonlyArray<Mark> = []): Column => ({
  label,
  align: "left",
  ...(marks.length > 0 ? { marks } : {})
})
export const right = (label: string, marks: ReadonlyArray<Mark> = []): Column => ({
  label,
  align: "right",
  ...(marks.length > 0 ? { marks } : {})
})

/** A number cell: its text and the value behind it (null when there is none). */
export const num = (text: string, value: number | null | undefined): Cell => ({
  text,
  value: value !== null && value !== undefined && Number.isFinite(value) ? value : null
})

/** Whether a cell is one others are compared against (the baseline, or its ablation under another model). */
export const isBaseline = (a: Pick<Analysis, "baseline"> & Partial<Pick<Analysis, "baselines">>, id: string): boolean =>
  a.baselines?.has(id) ?? id === a.baseline.id

export const kindsOf = (a: Pick<Analysis, "baseline">, c: ResultLine.CellSummary): Array<RowKind> => [
  ...(isBaseline(a, c.id) ? ["baseline" as const] : []),
  ...(c.usesGold ? ["oracle" as const] : [])
]

/** A row led by the cell's label (`name ‡ (baseline)`), numbered `k` when given, with the cell's kinds. */
export const cellRow = (
  a: Pick<Analysis, "baseline">,
  c: ResultLine.CellSummary,
  cells: ReadonlyArray<Cell>,
  k?: number
): Row => ({
  kinds: kindsOf(a, c),
  cells: [...(k === undefined ? [] : [num(String(k), k)]), { text: Notes.cellLabel(c, a.baseline.id) }, ...cells]
})

const heuristic: ReadonlyArray<Mark> = ["†"]
export const readsGold: ReadonlyArray<Mark> = ["‡"]
export const lowerIsBetter: ReadonlyArray<Mark> = ["↓"]
export const heuristicMarks = (m: ResultLine.MetricDescription): ReadonlyArray<Mark> => (m.heuristic ? heuristic : [])

/** `value` with its own n when that differs from the row's N; `–` for no estimate. */
export const withN = (e: ResultLine.MetricEstimate | undefined, n: number, ci = false): Cell => {
  if (e === undefined) return num("–", null)
  const v = e.n === 0 || e.mean === null ? "–" : ci ? Format.withCi(e) : Format.number(e.mean)
  return num(`${v}${e.n === n ? "" : ` (n=${e.n})`}`, e.mean)
}

const estimate = (e: ResultLine.MetricEstimate | undefined): Cell => num(Format.estimate(e), e?.mean)

export const metricNote = (m: ResultLine.MetricDescription): string =>
  `${m.description} (${Notes.aggregateNote(m)}; ${m.direction} is better)`

export const cells = (a: Analysis): Table => ({
  id: "cells",
  title: "Cells",
  notes: [],
  columns: [
    right("#"),
    left("cell"),
    left("id"),
    left("retriever / summarizer / inferrer / generator"),
    right("scored"),
    right("failed"),
    left("heuristic stages")
  ],
  rows: a.cells.map((c, i) =>
    cellRow(
      a,
      c.summary,
      [
        { text: c.summary.id, code: true },
        { text: Notes.stages(c.summary) },
        num(String(c.summary.slices.all.n), c.summary.slices.all.n),
        num(String(c.summary.slices.all.failed), c.summary.slices.all.failed),
        { text: c.summary.heuristicStages.join(", ") || "–" }
      ],
      i + 1
    )
  )
})

/** Every plugin the cells use, with its package and version (from run.json). */
export const plugins = (a: Analysis, versions: Readonly<Record<string, string>>): Table => ({
  id: "plugins",
  title: "Plugins",
  notes: [],
  columns: [left("stage"), left("plugin"), left("package"), right("cells")],
  rows: a.plugins.map((p) => ({
    kinds: [],
    cells: [
      { text: p.stage },
      { text: p.name },
      {
        text:
          p.package === undefined
            ? "config module"
            : `${p.package}${versions[p.package] !== undefined ? ` ${versions[p.package]}` : ""}`
      },
      num(String(p.cells), p.cells)
    ]
  }))
})

export const inferenceNote = (a: Pick<Analysis, "inference">): string =>
  a.inference.some((m) => m.aggregate._tag !== "Mean")
    ? "P / R / F1 are micro averages (counts pooled over instances, as the reference harness and the paper's headline numbers); macro F1 is the mean of per-instance F1."
    : "P / R / F1 are means of per-instance values (macro); the scorer reports no pooled counts."

const bestNote = "Bold: the best of the column among the cells that read no gold labels (ties share it)."

export const oracleNote = `Oracle F1: the F1 of the oracle cell ${Notes.oracleMark} that has the same summarizer, inferrer and generator as the row's cell.`

/** Inference in the paper's layout: N, P, R, F1 with its 95% CI, macro F1, and the matching oracle cell's F1. */
export const inference = (a: Analysis, slice: Slices.Slice): Table => {
  const f1 = a.inference[a.inference.length - 1]
  const macroF1 = a.inferenceMacro.find((m) => m.name === "inference.f1")
  const hasOracle = a.cells.some((c) => c.oracle !== undefined)
  const metricColumns = [...a.inference, ...(macroF1 !== undefined ? [macroF1] : [])]
  return markBest(a.summary.cells, metricColumns, {
    id: `inference-${slice}`,
    title: `Inference (preference match), ${Notes.sliceTitle(slice)}`,
    notes: [inferenceNote(a), ...(hasOracle ? [oracleNote] : []), bestNote],
    columns: [
      left("cell"),
      right("N"),
      ...a.inference.map((m) => right(`${Notes.shortName(m.name)}${m === f1 ? " [95% CI]" : ""}`, heuristicMarks(m))),
      ...(macroF1 !== undefined ? [right("macro F1", heuristicMarks(macroF1))] : []),
      ...(hasOracle ? [right("oracle F1", readsGold)] : [])
    ],
    rows: a.cells.map((c) => {
      const m = Slices.get(c.summary, slice).metrics
      const n = f1 === undefined ? 0 : (m[f1.name]?.n ?? 0)
      const o = f1 === undefined || c.oracle === undefined ? undefined : Slices.estimate(c.oracle, slice, f1.name)
      return cellRow(a, c.summary, [
        num(String(n), n),
        ...a.inference.map((x) => withN(m[x.name], n, x === f1)),
        ...(macroF1 !== undefined ? [withN(m[macroF1.name], n)] : []),
        ...(hasOracle ? [num(o === undefined ? "–" : `${Format.number(o.mean)} (n=${o.n})`, o?.mean)] : [])
      ])
    })
  })
}

/** The slices some cell has a value of `m` on: the columns of a table of one metric. */
const columnsOf = (a: Pick<Analysis, "summary">, m: ResultLine.MetricDescription) =>
  Slices.valued(a.summary.cells, Slices.of(a.summary), m.name)

/** One metric by cell and instance type: value [95% CI] n=N (generation metrics, the appendix). */
export const estimates = (a: Analysis, m: ResultLine.MetricDescription): Table => {
  const slices = columnsOf(a, m)
  return {
    id: `estimates-${m.name}`,
    title: Notes.metricLabel(m),
    notes: [metricNote(m), "Each entry: value [95% CI] n=N."],
    columns: [left("cell"), ...slices.map((s) => right(s))],
    rows: a.cells.map((c) =>
      cellRow(
        a,
        c.summary,
        slices.map((s) => estimate(Slices.estimate(c.summary, s, m.name)))
      )
    )
  }
}

export const retrievalNote =
  "↓ lower is better. N: instances scored; a value with its own n is defined on fewer instances (e.g. precision of an empty selection). Bold: the best of the column among the cells that read no gold labels (ties share it)."

export const retrieval = (a: Analysis, slice: Slices.Slice): Table =>
  perMetric(
    a,
    slice,
    a.retrieval,
    false,
    (m) => right(Notes.shortName(m.name), m.direction === "higher" ? [] : lowerIsBetter),
    {
      id: `retrieval-${slice}`,
      title: `Retrieval, ${Notes.sliceTitle(slice)}`,
      notes: [retrievalNote]
    }
  )

/** The label of an adjusted p (`Holm=0.040`). */
export const adjustedLabel = (c: Statistics.Correction): string =>
  c === "holm" ? "Holm" : c === "bonferroni" ? "Bonferroni" : c === "bh" ? "BH" : ""

/**
 * A paired difference [CI] (after `prefix`), with p, the adjusted p, n, the family and a primary
 * comparison's MDE as detail; a difference outside every family shows its interval and n only.
 */
export const deltaCell = (
  d: (Pick<Delta, "comparison" | "pAdjusted"> & Partial<Pick<Delta, "family" | "correction" | "mde">>) | undefined,
  prefix = ""
): Cell => {
  if (d === undefined || d.comparison.n === 0) return { text: "–", value: null, detail: "n=0" }
  const c = d.comparison
  const interval = `${prefix}${Format.signed(c.delta)} ${Format.signedInterval(c.ci95[0], c.ci95[1])}`
  if (d.family === "none") return { ...num(interval, c.delta), detail: `n=${c.n} (not tested)` }
  if (!Number.isFinite(c.p)) return { ...num(`${prefix}${Format.signed(c.delta)}`, c.delta), detail: `n=${c.n}` }
  const label = adjustedLabel(d.correction ?? "holm")
  const family =
    d.family === undefined
      ? ""
      : ` (${d.family}${d.family === "primary" && d.mde !== undefined && Number.isFinite(d.mde) ? `, MDE ${Format.number(d.mde)}` : ""})`
  return {
    ...num(interval, c.delta),
    detail: `p=${Format.p(c.p)}${label === "" ? "" : ` ${label}=${Format.p(d.pAdjusted)}`} n=${c.n}${family}`,
    ...(d.pAdjusted < 0.05 ? { significant: true } : {})
  }
}

export const deltas = (a: Analysis, m: ResultLine.MetricDescription): Table => {
  const slices = columnsOf(a, m)
  const byKey = new Map(a.deltas.filter((d) => d.metric === m.name).map((d) => [`${d.cell}\0${d.slice}`, d]))
  return {
    id: `deltas-${m.name}`,
    title: `${Notes.metricLabel(m)}: difference against the baseline ${a.baselineLabel}`,
    notes: [
      `Each entry: difference (cell - baseline) [paired bootstrap 95% CI] p=permutation p-value, the p adjusted within its family, n=paired instances, (family); * adjusted p < 0.05. ${Notes.familiesNote(a)}`
    ],
    columns: [left("cell"), ...slices.map((s) => right(s))],
    rows: a.cells
      .filter((c) => !isBaseline(a, c.summary.id))
      .map((c) =>
        cellRow(
          a,
          c.summary,
          slices.map((s) => deltaCell(byKey.get(`${c.summary.id}\0${s}`)))
        )
      )
  }
}

/** Every cell against every other: numbered cells, superscripts naming the cells each value beats. */
export const pairwise = (a: Pick<Analysis, "baseline">, p: Pairwise, s: SliceResult): Table => ({
  id: `pairwise-${s.slice}`,
  title: `Every cell against every other, ${Notes.sliceTitle(s.slice)}`,
  notes: [Notes.pairwiseNote(p), ...(s.tooSmall !== undefined ? [Notes.tooSmallNote(s.slice, s.tooSmall)] : [])],
  columns: [right("#"), left("cell"), ...p.metrics.map((m) => right(m.name, heuristicMarks(m)))],
  rows: p.cells.map((c, k) =>
    cellRow(
      a,
      c,
      p.metrics.map((m) => {
        const beaten = s.beats.get(m.name)?.get(c.id) ?? []
        const mean = Slices.estimate(c, s.slice, m.name)?.mean
        return { ...num(Format.number(mean), mean), ...(beaten.length > 0 ? { superscripts: beaten.map(String) } : {}) }
      }),
      k + 1
    )
  )
})

/** A metric by bin (recency or history length), one row per cell: value n=N. */
export const binned = (a: Analysis, b: Binned): Table => ({
  id: b.by === "relevant position" ? "recency" : "history",
  title: Notes.binHeader(b),
  notes: [`${Notes.aggregateNote(b.metric)} within each bin.`],
  columns: [left("cell"), ...b.bins.map((x) => right(`${x.label} (${x.instances} inst.)`))],
  rows: a.cells.map((c) =>
    cellRow(
      a,
      c.summary,
      b.bins.map((x) => {
        const v = x.values.get(c.summary.id)
        return v === undefined || v.n === 0 ? num("– n=0", null) : num(`${Format.number(v.value)} n=${v.n}`, v.value)
      })
    )
  )
})

/** A metric against a swept transform axis: one row per series, value [95% CI] n=N per axis value. */
export const transform = (curve: Interventions.Curve, slice: Slices.Slice): Table => ({
  id: `transform-${curve.metric.name}-${curve.axis}-${slice}`,
  title: `${curve.metric.name} against ${curve.axis}, ${Notes.sliceTitle(slice)}`,
  notes: ["The same instances with their histories rewritten; relevance never changes. value [95% CI] n=N."],
  columns: [left(`cell / ${curve.axis} (${Notes.sliceTitle(slice)})`), ...curve.categories.map((x) => right(x))],
  rows: curve.series.map((s) => ({
    kinds: [],
    cells: [
      { text: s.label },
      ...s.cells.map((c) => {
        const e = c === undefined ? undefined : Slices.estimate(c, slice, curve.metric.name)
        return e === undefined ? num("–", null) : estimate(e)
      })
    ]
  }))
})

export const costNote =
  "Model calls and tokens of the pipeline stages per result line (failed pairs included: their calls were made); cached calls count in full, since they describe the method. Scoring calls (LLM judges) are shown apart and are not part of a method's cost."

const hasUsd = (a: Analysis): boolean => a.summary.metrics.some((m) => m.name === "cost.usd")

/** The cost scorer ran, yet some instance has no price. */
export const unpriced = (a: Analysis): boolean =>
  hasUsd(a) && a.cells.some((c) => (c.summary.slices.all.metrics["cost.usd"]?.n ?? 0) < c.summary.slices.all.n)

export const cost = (a: Analysis): Table => {
  const usd = hasUsd(a)
  return {
    id: "cost",
    title: "Cost",
    notes: [costNote, ...(unpriced(a) ? [Notes.usdNote] : [])],
    columns: [
      left("cell"),
      right("pairs"),
      right("calls / inst."),
      right("prompt tok. / inst."),
      right("completion tok. / inst."),
      right("total tokens"),
      right("scoring calls"),
      ...(usd ? [right("usd / inst. (n)")] : [])
    ],
    rows: a.cost.map((r, i) => {
      const c = a.cells[i]!
      const per = (x: number) => (r.pairs === 0 ? num("–", null) : num(Format.number(x / r.pairs), x / r.pairs))
      const u = c.summary.slices.all.metrics["cost.usd"]
      const total = r.promptTokens + r.completionTokens
      return cellRow(a, c.summary, [
        num(String(r.pairs), r.pairs),
        per(r.calls),
        per(r.promptTokens),
        per(r.completionTokens),
        num(Format.integer(total), total),
        num(Format.integer(r.scoringCalls), r.scoringCalls),
        ...(usd
          ? [
              num(
                u === undefined || u.mean === null ? `– (n=${u?.n ?? 0})` : `${u.mean.toFixed(4)} (n=${u.n})`,
                u?.mean
              )
            ]
          : [])
      ])
    })
  }
}

export { bestShown, headline, tables } from "./Headline.js"
