/**
 * Everything a report shows, computed once from a run (summary.json + results.jsonl) and rendered
 * by {@link Markdown} and {@link Html}: the baseline, the headline metrics, paired differences
 * against the baseline with Holm-adjusted p-values, binned analyses (relevant-session position,
 * history length), cost per cell, models, failures and marks (heuristic metrics, oracle cells).
 *
 * Values per cell and slice come from summary.json (computed by the sweep with the same seed);
 * paired statistics and bins are computed here from the result lines. No clock, no randomness
 * beyond the seeded generators: the same run always gives the same analysis.
 *
 * @example
 * import * as Analysis from "@cupid-lab/experiments/report/Analysis"
 * import * as RunDir from "@cupid-lab/experiments/report/RunDir"
 * const analysis = Analysis.analyze(RunDir.read("runs/contextual"))
 * analysis.deltas.filter((d) => d.pHolm < 0.05)
 */
import { Hash } from "@cupid-lab/core"
import { Builtins as RetrieverBuiltins } from "@cupid-lab/retrievers"
import * as Paired from "../compare/Paired.js"
import type { CellSummary, MetricDescription, Slice, Summary } from "../ResultLine.js"
import { slices } from "../ResultLine.js"
import * as Bins from "./Bins.js"
import * as Interventions from "./Interventions.js"
import * as Inventory from "./Inventory.js"
import { columnsOf, index, sharedInstances } from "./Rows.js"
import type { Run } from "./RunDir.js"

export interface Options {
  /** Cell id or name of the baseline; default summary.baseline, else the `all` retriever's cell, else the first. */
  readonly baseline?: string
  /** Permutations of the tests that are refined; default {@link Paired.permutationsFor} the number of tests. */
  readonly permutations?: number
}

export interface CellView {
  readonly index: number
  readonly summary: CellSummary
  /** The oracle-retrieval cell with the same stages apart from the retriever, if the run has one. */
  readonly oracle: CellSummary | undefined
}

export interface Delta {
  readonly cell: string
  readonly metric: string
  readonly slice: Slice
  readonly comparison: Paired.Comparison
  /** Holm-adjusted over every delta of the report (NaN when the test could not be made). */
  readonly pHolm: number
}

export interface Analysis {
  readonly summary: Summary
  readonly cells: ReadonlyArray<CellView>
  readonly baseline: CellSummary
  readonly baselineReason: string
  /** Inference F1 when scored, else retrieval recall, else the first metric. */
  readonly main: MetricDescription | undefined
  /** Micro precision / recall / F1 when the scorer pools, else the macro ones (absent metrics left out). */
  readonly inference: ReadonlyArray<MetricDescription>
  readonly inferenceMacro: ReadonlyArray<MetricDescription>
  readonly generation: ReadonlyArray<MetricDescription>
  readonly retrieval: ReadonlyArray<MetricDescription>
  /** Metrics tested against the baseline. */
  readonly compared: ReadonlyArray<MetricDescription>
  readonly deltas: ReadonlyArray<Delta>
  /** Tests in the Holm family (deltas with a p-value). */
  readonly tests: number
  readonly permutations: Paired.Family["permutations"]
  readonly recency: Bins.Binned | undefined
  readonly history: Bins.Binned | undefined
  /** Metrics against the swept transform axes (pad, position); empty when none is swept. */
  readonly interventions: ReadonlyArray<Interventions.Curve>
  readonly cost: ReadonlyArray<Inventory.CostRow>
  readonly models: ReadonlyArray<Inventory.ModelUse>
  readonly failures: ReadonlyArray<Inventory.FailureGroup>
  readonly plugins: ReadonlyArray<Inventory.PluginUse>
  readonly okPairs: number
  readonly failedPairs: number
}

export const metricNamed = (summary: Summary, name: string): MetricDescription | undefined =>
  summary.metrics.find((m) => m.name === name)

const present = (summary: Summary, names: ReadonlyArray<string>): Array<MetricDescription> =>
  names.flatMap((n) => {
    const m = metricNamed(summary, n)
    return m === undefined ? [] : [m]
  })

const retrieverUse = (c: CellSummary): unknown => {
  const r = c.params["retriever"]
  return r !== null && typeof r === "object" ? (r as Record<string, unknown>)["use"] : undefined
}

/** Which cell is the baseline, and why (for the report's text). */
export const chooseBaseline = (summary: Summary, requested?: string): { readonly cell: CellSummary; readonly reason: string } => {
  const cells = summary.cells
  if (cells.length === 0) throw new Error("the summary lists no cells")
  const find = (key: string) => cells.find((c) => c.id === key) ?? cells.find((c) => c.name === key)
  if (requested !== undefined) {
    const c = find(requested)
    if (c === undefined) {
      throw new Error(`baseline "${requested}" is not a cell of this run; cells: ${cells.map((c) => c.name).join(", ")}`)
    }
    return { cell: c, reason: "chosen on the command line" }
  }
  if (summary.baseline !== undefined) {
    const c = find(summary.baseline)
    if (c !== undefined) return { cell: c, reason: "set by the sweep: the config's report.baseline when given, else the cell whose retriever is all, else the first cell" }
  }
  const all = cells.find((c) => retrieverUse(c) === "all")
  if (all !== undefined) return { cell: all, reason: "the cell whose retriever is all (the full history)" }
  return { cell: cells[0]!, reason: "the first cell (no cell uses the all retriever)" }
}

/** An oracle-retrieval cell: it reads gold and its retriever is a gold-reading plugin. */
const readsGoldSessions = (c: CellSummary): boolean => {
  const use = retrieverUse(c)
  return c.usesGold && typeof use === "string" &&
    RetrieverBuiltins.plugins.some((p) => p.stage === "retriever" && p.name === use && p.needsGold === true)
}

const withoutRetriever = (c: CellSummary): string => {
  const { retriever: _r, ...rest } = c.params
  return Hash.canonicalJson(rest)
}

/** What the transform curves plot: the main metric when it is not retrieval, then retrieval precision and recall_all. */
const interventionMetrics = (summary: Summary, main: MetricDescription | undefined): Array<MetricDescription> => {
  const retrieval = present(summary, ["retrieval.precision", "retrieval.recall_all"])
  return main === undefined || main.name.startsWith("retrieval.") ? retrieval : [main, ...retrieval]
}

/** The metrics of each family the report puts in its paper-layout tables and tests. */
export const families = (summary: Summary) => {
  const micro = present(summary, ["inference.precision_micro", "inference.recall_micro", "inference.f1_micro"])
  const macro = present(summary, ["inference.precision", "inference.recall", "inference.f1"])
  const inference = micro.length > 0 ? micro : macro
  const generation = summary.metrics.filter((m) => m.name.startsWith("generation."))
  const retrievalHeadline = present(summary, ["retrieval.precision", "retrieval.recall"])
  const main = present(summary, ["inference.f1_micro", "inference.f1", "retrieval.recall", "generation.score"])[0] ??
    summary.metrics.find((m) => !m.name.startsWith("cost."))
  return { inference, inferenceMacro: micro.length > 0 ? macro : [], generation, retrievalHeadline, main }
}

/**
 * The metrics tested against the baseline: inference F1 (micro when pooled), every generation
 * metric, retrieval precision and recall. Precision and recall of inference are shown with CIs
 * but not tested, which keeps the Holm family (and the permutations it needs) small.
 */
export const comparedMetrics = (fam: ReturnType<typeof families>): Array<MetricDescription> => {
  const f1 = fam.inference.find((m) => m.name === "inference.f1_micro" || m.name === "inference.f1")
  const out = [...(f1 === undefined ? [] : [f1]), ...fam.generation, ...fam.retrievalHeadline]
  if (out.length === 0 && fam.main !== undefined) out.push(fam.main)
  return out
}

export const analyze = (run: Pick<Run, "summary" | "rows">, options: Options = {}): Analysis => {
  const { summary, rows } = run
  const { cell: baseline, reason } = chooseBaseline(summary, options.baseline)
  const idx = index(rows)
  const fam = families(summary)
  const compared = comparedMetrics(fam)

  const oracles = summary.cells.filter(readsGoldSessions)
  const cells: Array<CellView> = summary.cells.map((c, i) => ({
    index: i,
    summary: c,
    oracle: c.usesGold ? undefined : oracles.find((o) => withoutRetriever(o) === withoutRetriever(c))
  }))

  const plan: Array<{ cell: string; metric: MetricDescription; slice: Slice; ids: Array<string> }> = []
  for (const c of summary.cells) {
    if (c.id === baseline.id) continue
    for (const metric of compared) {
      for (const slice of slices) {
        plan.push({ cell: c.id, metric, slice, ids: sharedInstances(idx.ok.get(baseline.id), idx.ok.get(c.id), slice) })
      }
    }
  }
  const tested = Paired.family(
    plan.map((t) => ({ metric: t.metric, a: columnsOf(idx.ok.get(baseline.id), t.ids), b: columnsOf(idx.ok.get(t.cell), t.ids) })),
    { seed: summary.seed, resamples: summary.resamples ?? 1000, ...(options.permutations !== undefined ? { permutations: options.permutations } : {}) }
  )
  const deltas = plan.map((t, i): Delta => ({ cell: t.cell, metric: t.metric.name, slice: t.slice, comparison: tested.comparisons[i]!, pHolm: tested.adjusted[i]! }))

  const okPairs = rows.filter((r) => r.status === "ok").length
  return {
    summary,
    cells,
    baseline,
    baselineReason: reason,
    main: fam.main,
    inference: fam.inference,
    inferenceMacro: fam.inferenceMacro,
    generation: fam.generation,
    retrieval: summary.metrics.filter((m) => m.name.startsWith("retrieval.") && m.name !== "retrieval.relevant_position"),
    compared,
    deltas,
    tests: tested.tests,
    permutations: tested.permutations,
    recency: fam.main === undefined ? undefined : Bins.recency(fam.main, summary.cells, idx),
    history: fam.main === undefined ? undefined : Bins.history(fam.main, summary.cells, idx),
    interventions: Interventions.curves(summary, interventionMetrics(summary, fam.main)),
    cost: Inventory.costRows(summary.cells, idx),
    models: Inventory.modelUse(rows),
    failures: Inventory.failureGroups(rows, summary.cells),
    plugins: Inventory.pluginUses(summary.cells),
    okPairs,
    failedPairs: rows.length - okPairs
  }
}

