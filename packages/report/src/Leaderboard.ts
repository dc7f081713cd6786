/**
 * The opening of every report: the {@link Verdict} as a leaderboard table under {@link intro}, and
 * the same facts as plain text for the sweep's console ({@link console}).
 *
 * @example
 * Table.markdown(Leaderboard.table(analysis, Verdict.verdict(analysis), 10))
 */
import type { ResultLine } from "@cupid-lab/results"

import type { Analysis } from "./Analysis.js"
import type { Leaderboard, Standing, Verdict } from "./Verdict.js"
import * as VerdictText from "./VerdictText.js"
import { level } from "./Pairwise.js"
import * as Format from "./Format.js"
import * as Notes from "./Notes.js"
import type * as Slices from "./Slices.js"
import type { Cell, Row, Table } from "./Table.js"
import { heuristicMarks, isBaseline, kindsOf, left, num, right } from "./Tables.js"

/** The cells a board leaves out because they share the baseline's value by construction. */
export const sharedNote = (board: Leaderboard): string =>
  board.shared.length === 0
    ? ""
    : ` Not ranked: ${board.shared.map((c) => c.name).join(", ")}, which differ from another cell only in stages after the one this metric measures, so their value is that cell's by construction.`

/**
 * What N (the console's n) counts on a leaderboard: the instances the main metric has a value for,
 * which can be fewer than the instances scored (retrieval metrics have none for an instance without a
 * relevant session). The leaderboard of report.md, report.html and the viewer and the console say it.
 */
export const nNote = (m: ResultLine.MetricDescription): string =>
  `instances with a value of ${m.name} on all instance types, the instances its value is the mean of (fewer than the instances scored when the metric is undefined for some, e.g. retrieval metrics on instances without a relevant session)`

/** Contenders the report's opening shows; the rest are in the appendix's full leaderboard. */
export const openingLimit = 10

/** The sentence above the findings: the metric, the baseline and what "significant" means. */
type Baselines = Pick<Analysis, "baseline"> & Partial<Pick<Analysis, "baselines" | "baselineLabel">>

export const intro = (a: Baselines, v: Verdict): string =>
  v.metric === undefined
    ? "No main metric: the run has no metric to rank its cells on."
    : `Ranked on ${Notes.metricLabel(v.metric)} (${Notes.aggregateNote(v.metric)}; ${v.metric.direction} is better) against the baseline ${a.baselineLabel ?? a.baseline.name}; significant means an adjusted p below ${level} after correction for multiple comparisons. Cells that read gold labels ${Notes.oracleMark} are ceilings, not ranked.`

const sliceBoard = (v: Verdict, s: Slices.Slice): Leaderboard | undefined => v.boards.find((b) => b.slice === s)

const vsBaseline = (st: Standing, a: Baselines): Cell => {
  if (isBaseline(a, st.cell.id)) return { text: "baseline" }
  const d = st.vsBaseline
  if (d === undefined || d.comparison.n === 0 || !Number.isFinite(d.comparison.delta)) return num("–", null)
  return {
    ...num(Format.signed(d.comparison.delta), d.comparison.delta),
    ...(d.pAdjusted < level ? { significant: true } : {})
  }
}

/**
 * The leaderboard over all instances: rank, cell, value [95% CI], N, difference against the baseline
 * and the value per instance type the verdict has a finding for (never an empty column); at most `limit` contenders (the baseline always kept), then every ceiling.
 */
export const table = (a: Baselines, v: Verdict, limit = Number.POSITIVE_INFINITY): Table => {
  const m = v.metric
  const all = sliceBoard(v, "all")
  if (m === undefined || all === undefined)
    return { id: "leaderboard", title: "Leaderboard", notes: [], columns: [left("cell")], rows: [] }
  const others = v.boards.map((b) => b.slice).filter((s) => s !== "all")
  const valueIn = (s: Slices.Slice, id: string): Cell => {
    const st = [...(sliceBoard(v, s)?.contenders ?? []), ...(sliceBoard(v, s)?.ceilings ?? [])].find(
      (x) => x.cell.id === id
    )
    return num(Format.number(st?.estimate.mean), st?.estimate.mean)
  }
  const shown = all.contenders.filter((st, i) => i < limit || st.cell.id === a.baseline.id)
  const left_out = all.contenders.length - shown.length
  const row = (st: Standing): Row => ({
    kinds: kindsOf(a, st.cell),
    cells: [
      st.rank === undefined ? { text: "ceiling" } : num(String(st.rank), st.rank),
      { text: Notes.cellLabel(st.cell, a.baseline.id) },
      num(Format.withCi(st.estimate), st.estimate.mean),
      num(String(st.estimate.n), st.estimate.n),
      vsBaseline(st, a),
      ...others.map((s) => valueIn(s, st.cell.id))
    ]
  })
  return {
    id: "leaderboard",
    title: `Leaderboard: ${Notes.metricLabel(m)}, all instances`,
    notes: [
      `Ranked among the cells that read no gold labels (${m.direction} is better); ties keep the grid's order. N: ${nNote(m)}. vs baseline: paired difference (cell - baseline), * significant after correction.${left_out > 0 ? ` ${left_out} lower-ranked cells are left out here; the appendix lists every cell.` : ""}${sharedNote(all)}`
    ],
    columns: [
      right("rank"),
      left("cell"),
      right(`${m.name} [95% CI]`, heuristicMarks(m)),
      right("N"),
      right("vs baseline"),
      ...others.map((s) => right(s))
    ],
    rows: [...shown.map(row), ...all.ceilings.map(row)]
  }
}

/** A plain-text table: columns padded, the second left-aligned. */
const plain = (header: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): Array<string> => {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)))
  const line = (cells: ReadonlyArray<string>) =>
    cells
      .map((c, i) => (i === 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join("  ")
      .trimEnd()
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)]
}

/** The sweep's console summary: the findings' sentences, then every cell in leaderboard order. */
export const console = (
  a: Baselines & Pick<Analysis, "summary" | "compared">,
  v: Verdict,
  models: ReadonlyArray<string> = []
): string => {
  const all = sliceBoard(v, "all")
  const m = v.metric
  const out: Array<string> = []
  if (m !== undefined && all !== undefined) {
    out.push(
      `verdict (${m.name}, ${m.direction} is better; baseline ${a.baselineLabel ?? a.baseline.name}):`,
      ...VerdictText.notes(v).map((x) => `  ${x}`),
      ...v.findings.map((f) => `  ${VerdictText.sentence(v, f)}`),
      ""
    )
  }
  const others = a.compared.filter((x) => x.name !== m?.name)
  const star = (x: { readonly name: string; readonly heuristic: boolean }) => `${x.name}${x.heuristic ? "*" : ""}`
  const header = [
    "rank",
    "cell",
    ...(m === undefined ? [] : [`${star(m)} [95% CI]`]),
    "n",
    "failed",
    ...(m === undefined ? [] : ["vs baseline"]),
    ...others.map(star)
  ]
  const standings =
    all === undefined
      ? a.summary.cells.map((c) => ({
          cell: c,
          rank: undefined,
          vsBaseline: undefined,
          estimate: { n: c.slices.all.n, mean: null, ci95: [null, null] as const }
        }))
      : [
          ...all.contenders,
          ...all.ceilings,
          ...all.shared.map((c) => ({
            cell: c,
            rank: undefined,
            vsBaseline: undefined,
            estimate: c.slices.all.metrics[m!.name] ?? { n: 0, mean: null, ci95: [null, null] as const }
          }))
        ]
  const rows = standings.map((st) => {
    const c = st.cell
    const d = vsBaseline(st, a)
    const isShared = all?.shared.includes(c) === true
    return [
      st.rank === undefined ? (isShared ? "shared" : c.usesGold ? "ceiling" : "–") : String(st.rank),
      `${c.name}${c.usesGold ? " (gold)" : ""}`,
      ...(m === undefined ? [] : [Format.withCi(st.estimate)]),
      // The leaderboard's N: the main metric's n (without a leaderboard, the instances scored).
      String(st.estimate.n),
      String(c.slices.all.failed),
      ...(m === undefined ? [] : [`${d.text}${d.significant === true ? " *" : ""}`]),
      ...others.map((x) => Format.number(c.slices.all.metrics[x.name]?.mean))
    ]
  })
  out.push(...plain(header, rows), "")
  if ([m, ...others].some((x) => x?.heuristic === true)) {
    out.push(
      "* after a metric: heuristic, computed without a model (e.g. extractive inferrer, lexical matcher), not the paper's LLM metric"
    )
  }
  if (m !== undefined)
    out.push("vs baseline: paired difference on all instances; * after it: significant after correction")
  out.push(
    models.length === 0
      ? "models: none; every stage ran offline with methods that need no weights"
      : `models: ${models.join(", ")}`
  )
  out.push(
    `(gold) cells read gold labels: ceilings, not ranked; n = ${m === undefined || all === undefined ? "instances scored, over all instance types" : nNote(m)}; failed = pairs that failed`
  )
  if (all !== undefined && all.shared.length > 0)
    out.push(
      "shared: the cell differs from another only in stages after the one the main metric measures, so its value is that cell's"
    )
  return `${out.join("\n")}\n`
}
