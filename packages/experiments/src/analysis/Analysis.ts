/**
 * Everything a report shows, computed once from a run: the baseline, the headline metrics, paired
 * differences against the baseline in their families ({@link Families}), every pair of cells, bins,
 * axes, transforms, cost and failures. Seeded: the same run always gives the same analysis.
 *
 * @example
 * const analysis = Analysis.analyze(yield* RunDir.read("runs/contextual"))
 * analysis.deltas.filter((d) => d.family === "primary" && d.pAdjusted < 0.05)
 */
import { Hash } from "@cupid-lab/core"
import { Paired, Statistics } from "@cupid-lab/scorers"
import type { CellSummary, MetricDescription, Slice, Summary } from "../results/ResultLine.js"
import { slices } from "../results/ResultLine.js"
import * as AxisEffects from "./AxisEffects.js"
import * as Bins from "./Bins.js"
import * as Families from "./Families.js"
import * as Informative from "./Informative.js"
import * as Interventions from "./Interventions.js"
import * as Inventory from "./Inventory.js"
import * as Pairwise from "./Pairwise.js"
import { type Index, sliceOf } from "../results/Columns.js"
import type { Run } from "../results/RunDir.js"

export interface Options {
  /** Cell id or name of the baseline; default the run's. */
  readonly baseline?: string
  /** The main metric by name; default the run's, else chosen from the metrics' declarations ({@link mainMetric}). */
  readonly main?: string
  /** Permutations of the tests that are refined; default {@link Paired.permutationsFor} the number of tests. */
  readonly permutations?: number
}

export interface CellView {
  readonly summary: CellSummary
  /** The oracle-retrieval cell with the same stages apart from the retriever, if the run has one. */
  readonly oracle: CellSummary | undefined
}

export interface Delta {
  readonly cell: string
  readonly metric: string
  readonly slice: Slice
  /** Clustered by persona on slices where a persona has several instances. */
  readonly comparison: Paired.Comparison
  readonly family: Families.Family
  readonly correction: Statistics.Correction
  /** NaN when the test could not be made, and in the family `none`. */
  readonly pAdjusted: number
  /** Primary comparisons: the minimum detectable effect at this n (80% power, the family's per-test level); NaN otherwise. */
  readonly mde: number
}

export interface TestedFamily {
  readonly correction: Statistics.Correction
  /** Tests with a p-value. */
  readonly tests: number
  /** The level one test must reach when it is the family's only real effect (Statistics.perTestLevel). */
  readonly level: number
  readonly permutations: Paired.Family["permutations"]
}

/**
 * A slice where no difference of the main metric against the baseline can reach significance: its
 * largest paired n (personas where clustered), the n that could, the family's multiplier of the smallest p.
 */
export interface TooSmall {
  readonly n: number
  readonly needed: number
  readonly tests: number
  readonly correction: Statistics.Correction
  readonly clustered?: boolean
}

export interface Analysis {
  readonly summary: Summary
  readonly cells: ReadonlyArray<CellView>
  readonly baseline: CellSummary
  readonly baselineReason: string
  /** Undefined with fewer than two cells. */
  readonly pairwise: Pairwise.Pairwise | undefined
  readonly baselineTooSmall: ReadonlyMap<Slice, TooSmall>
  readonly main: MetricDescription | undefined
  readonly mainReason: string
  /** Micro precision / recall / F1 when the scorer pools, else the macro ones. */
  readonly inference: ReadonlyArray<MetricDescription>
  readonly inferenceMacro: ReadonlyArray<MetricDescription>
  readonly generation: ReadonlyArray<MetricDescription>
  readonly retrieval: ReadonlyArray<MetricDescription>
  /** Metrics tested against the baseline. */
  readonly compared: ReadonlyArray<MetricDescription>
  readonly deltas: ReadonlyArray<Delta>
  readonly plan: Families.Plan
  readonly families: { readonly primary: TestedFamily; readonly exploratory: TestedFamily }
  /** Metrics that cannot tell the cells apart; left out of the headline lists above. */
  readonly uninformative: ReadonlyArray<Informative.Uninformative>
  /** Tests with a p-value in the primary and exploratory families together. */
  readonly tests: number
  /** Over both families (refined: the larger count; test counts summed). */
  readonly permutations: Paired.Family["permutations"]
  readonly recency: Bins.Binned | undefined
  readonly history: Bins.Binned | undefined
  readonly axes: AxisEffects.AxisEffects
  readonly interventions: ReadonlyArray<Interventions.Curve>
  readonly cost: ReadonlyArray<Inventory.CostRow>
  readonly models: ReadonlyArray<Inventory.ModelUse>
  readonly failures: ReadonlyArray<Inventory.FailureGroup>
  readonly plugins: ReadonlyArray<Inventory.PluginUse>
  readonly okPairs: number
  readonly failedPairs: number
  readonly index: Index
}

export const metricNamed = (summary: Summary, name: string): MetricDescription | undefined =>
  summary.metrics.find((m) => m.name === name)

const withoutRetriever = (c: CellSummary): string => {
  const { retriever: _r, ...rest } = c.params
  return Hash.canonicalJson(rest)
}

/**
 * The cell a selector names: an id, a name, a unique id prefix of 4+ characters, or `@k` (1-based,
 * for names a shell would mangle); else a string that says why nothing matched.
 */
export const findCell = (cells: ReadonlyArray<CellSummary>, selector: string): CellSummary | string => {
  const list = cells.map((c, i) => `@${i + 1} ${c.name} (${c.id})`).join("; ")
  const position = /^@(\d+)$/.exec(selector)
  if (position !== null) {
    const c = cells[Number(position[1]) - 1]
    return c ?? `no cell @${position[1]}: the run has ${cells.length} (${list})`
  }
  const byId = Families.cellNamed(cells, selector)
  if (byId !== undefined) return byId
  const prefixed = selector.length >= 4 ? cells.filter((c) => c.id.startsWith(selector)) : []
  if (prefixed.length === 1) return prefixed[0]!
  return prefixed.length > 1
    ? `"${selector}" is the start of ${prefixed.length} cell ids; give more of it (cells: ${list})`
    : `no cell "${selector}" (by id, id prefix of 4+ characters, name, or @k); cells: ${list}`
}

/** Which cell is the baseline, and why. */
export const chooseBaseline = (summary: Summary, requested?: string): { readonly cell: CellSummary; readonly reason: string } => {
  const cells = summary.cells
  if (cells.length === 0) throw new Error("the summary lists no cells")
  if (requested !== undefined) {
    const c = findCell(cells, requested)
    if (typeof c === "string") throw new Error(`baseline "${requested}" is not a cell of this run: ${c}`)
    return { cell: c, reason: "chosen on the command line" }
  }
  const c = Families.cellNamed(cells, summary.baseline)
  if (c !== undefined) return { cell: c, reason: "set by the sweep: the config's report.baseline when given, else the cell whose retriever is all, else the first cell" }
  return { cell: cells[0]!, reason: "the first cell (the run's baseline is not one of its cells)" }
}

const inFamily = (summary: Summary, family: string) => summary.metrics.filter((m) => m.family === family)

/** What the transform curves plot: the main metric when it is not a retrieval metric, then the retrieval headline metrics. */
const interventionMetrics = (summary: Summary, main: MetricDescription | undefined): Array<MetricDescription> => {
  const retrieval = inFamily(summary, "retrieval").filter((m) => m.headline)
  return main === undefined || main.family === "retrieval" ? retrieval : [main, ...retrieval]
}

/**
 * The metrics of the paper-layout tables, by family: inference metrics pooled over instances when
 * the scorer pools, else its per-instance means; every generation metric; and the main metric.
 */
export const families = (summary: Summary, chosen?: string) => {
  const inferenceAll = inFamily(summary, "inference")
  const micro = inferenceAll.filter((m) => m.aggregate._tag !== "Mean")
  const macro = inferenceAll.filter((m) => m.aggregate._tag === "Mean")
  const inference = micro.length > 0 ? micro : macro
  const { main, mainReason } = mainMetric(summary, chosen)
  return { inference, inferenceMacro: micro.length > 0 ? macro : [], generation: inFamily(summary, "generation"), main, mainReason }
}

/**
 * The main metric: the one named (`report.main`, `report --main`), else the declared candidate of
 * lowest rank (`mainRank`), else the first metric that is not a cost. A candidate that is a
 * heuristic, or an inference metric when no model produced any inference, is passed over for the
 * next one that is neither: on an offline sweep the inference F1 only measures the extractive
 * stand-in, so the exact retrieval metric leads and the F1 stays in the tables, marked.
 */
export const mainMetric = (summary: Summary, chosen?: string): { readonly main: MetricDescription | undefined; readonly mainReason: string } => {
  const name = chosen ?? summary.main
  if (name !== undefined) {
    const m = metricNamed(summary, name)
    if (m === undefined) throw new Error(`main metric "${name}" is not a metric of this run; valid names: ${summary.metrics.map((x) => x.name).join(", ")}`)
    return { main: m, mainReason: chosen !== undefined ? "chosen on the command line" : "set by the config (report.main)" }
  }
  const ranked = summary.metrics.filter((m) => m.mainRank !== undefined).sort((a, b) => a.mainRank! - b.mainRank!)
  // No cell's inference came from a model: every cell has no inferrer or a heuristic one.
  const noModel = summary.cells.every((c) =>
    c.params["inferrer"] === null || c.params["inferrer"] === undefined || c.heuristicStages.includes("inferrer")
  )
  const passedOver = (m: MetricDescription) => m.heuristic || (noModel && m.family === "inference")
  const exact = ranked.find((m) => !passedOver(m))
  if (ranked[0] !== undefined && exact !== undefined && exact !== ranked[0]) {
    return {
      main: exact,
      mainReason: `${ranked[0].name} is computed by a heuristic${noModel ? " (no model produced any inference)" : ""}, so the first exact candidate leads; ${ranked[0].name} is shown as secondary, marked`
    }
  }
  if (ranked[0] !== undefined) return { main: ranked[0], mainReason: "the scorers' first-ranked candidate (mainRank)" }
  const first = summary.metrics.find((m) => m.family !== "cost")
  return { main: first, mainReason: first === undefined ? "no metric" : "the first metric that is not a cost (no scorer ranks a main metric)" }
}

/** The metrics tested against the baseline: every headline metric, the main metric first (the others only get CIs). */
export const comparedMetrics = (summary: Summary, fam: ReturnType<typeof families>): Array<MetricDescription> => {
  const rank = (m: MetricDescription) => m.mainRank ?? Number.POSITIVE_INFINITY
  // then the other candidates by rank, then the rest in declaration order (the sort is stable)
  const isMain = (m: MetricDescription) => (m.name === fam.main?.name ? 0 : 1)
  const out = summary.metrics.filter((m) => m.headline).sort((a, b) => isMain(a) - isMain(b) || rank(a) - rank(b))
  if (out.length === 0 && fam.main !== undefined) out.push(fam.main)
  return out
}

export const analyze = (run: Pick<Run, "summary" | "index">, options: Options = {}): Analysis => {
  const { summary, index: idx } = run
  const { cell: baseline, reason } = chooseBaseline(summary, options.baseline)
  const all = families(summary, options.main)
  const uninformative = Informative.uninformative(summary)
  const informative = (m: MetricDescription) => !uninformative.some((u) => u.metric === m.name)
  const fam = { ...all, inference: all.inference.filter(informative), inferenceMacro: all.inferenceMacro.filter(informative), generation: all.generation.filter(informative) }
  const compared = comparedMetrics(summary, fam).filter((m) => m.name === fam.main?.name || informative(m))

  const oracles = summary.cells.filter((c) => c.oracleRetrieval)
  const cells: Array<CellView> = summary.cells.map((c) => ({
    summary: c,
    oracle: c.usesGold ? undefined : oracles.find((o) => withoutRetriever(o) === withoutRetriever(c))
  }))

  // Each cell against the baseline, every metric and slice: each cell's columns over every
  // instance of the slice (Columns.sliceOf), NaN where it has no ok line, so that the usable rows
  // are the instances both cells scored; rows of one persona move together (Families.personas).
  const plan = Families.resolve(summary, fam.main?.name)
  const clusters = new Map(slices.map((slice) => [slice, Families.personas(idx, slice)] as const))
  const planned: Array<{ cell: string; metric: MetricDescription; slice: Slice; family: Families.Family; test: Paired.Test }> = []
  for (const c of summary.cells) {
    if (c.id === baseline.id) continue
    for (const slice of slices) {
      const a = sliceOf(idx, baseline.id, slice), b = sliceOf(idx, c.id, slice)
      for (const metric of compared) {
        planned.push({ cell: c.id, metric, slice, family: Families.familyOf(plan, c, metric.name, slice), test: { a: a(metric), b: b(metric), clusters: clusters.get(slice)! } })
      }
    }
  }
  const runFamily = (family: Families.Family, correction: Statistics.Correction) => {
    const at = planned.flatMap((t, i) => (t.family === family ? [i] : []))
    // untested cells need their intervals only: no refinement
    const permutations = family === "none" ? Paired.screening : options.permutations
    const result = Paired.family(at.map((i) => planned[i]!.test), { ...Families.resampling(summary, permutations), correction })
    return { at, result }
  }
  const ran = { primary: runFamily("primary", plan.correction.primary), exploratory: runFamily("exploratory", plan.correction.exploratory), none: runFamily("none", "none") }
  const tested = (f: "primary" | "exploratory"): TestedFamily => ({
    correction: ran[f].result.correction,
    tests: ran[f].result.tests,
    level: Statistics.perTestLevel(ran[f].result.correction, ran[f].result.tests),
    permutations: ran[f].result.permutations
  })
  const tests = { primary: tested("primary"), exploratory: tested("exploratory") }
  const deltas: Array<Delta> = new Array(planned.length)
  for (const f of ["primary", "exploratory", "none"] as const) {
    ran[f].at.forEach((i, k) => {
      const t = planned[i]!
      const comparison = ran[f].result.comparisons[k]!
      const mde = f === "primary" ? Statistics.minimumDetectable(Paired.standardError(t.test.a, t.test.b, { clusters: t.test.clusters! }), tests.primary.level) : NaN
      deltas[i] = { cell: t.cell, metric: t.metric.name, slice: t.slice, comparison, family: f, correction: ran[f].result.correction, pAdjusted: f === "none" ? NaN : ran[f].result.adjusted[k]!, mde }
    })
  }
  const pairwise = summary.cells.length < 2 || compared.length === 0
    ? undefined
    : Pairwise.compute(summary, idx, compared, Families.resampling(summary, options.permutations))
  const baselineTooSmall = new Map<Slice, TooSmall>()
  for (const slice of slices) {
    const main = deltas.filter((d) => d.slice === slice && d.metric === fam.main?.name && d.family !== "none")
    const family = main[0]?.family === "primary" ? tests.primary : tests.exploratory
    if (main.length === 0 || family.tests === 0) continue
    const multiplier = family.correction === "none" ? 1 : family.tests
    const small = Pairwise.tooSmall(Math.max(0, ...main.map((d) => d.comparison.clusters ?? d.comparison.n)), multiplier)
    const clustered = main.some((d) => d.comparison.clusters !== undefined)
    if (small !== undefined) baselineTooSmall.set(slice, { ...small, tests: multiplier, correction: family.correction, ...(clustered ? { clustered } : {}) })
  }
  const p = tests.primary.permutations, q = tests.exploratory.permutations
  const permutations: Paired.Family["permutations"] = {
    screening: p.screening,
    refined: Math.max(p.refined, q.refined),
    refinedTests: p.refinedTests + q.refinedTests,
    exactTests: p.exactTests + q.exactTests,
    normalTests: p.normalTests + q.normalTests,
    ...(p.largeSample !== undefined ? { largeSample: p.largeSample } : {})
  }

  const failedPairs = idx.failures.length
  return {
    summary,
    cells,
    baseline,
    baselineReason: reason,
    pairwise,
    baselineTooSmall,
    main: fam.main,
    mainReason: fam.mainReason,
    inference: fam.inference,
    inferenceMacro: fam.inferenceMacro,
    generation: fam.generation,
    retrieval: inFamily(summary, "retrieval").filter(informative),
    compared,
    deltas,
    plan,
    families: tests,
    uninformative,
    tests: tests.primary.tests + tests.exploratory.tests,
    permutations,
    recency: fam.main === undefined ? undefined : Bins.recency(fam.main, summary.cells, idx),
    history: fam.main === undefined ? undefined : Bins.history(fam.main, summary.cells, idx),
    axes: AxisEffects.of(summary, idx, fam.main, plan, options.permutations),
    interventions: Interventions.curves(summary, interventionMetrics(summary, fam.main)),
    cost: Inventory.costRows(summary.cells, idx),
    models: Inventory.modelUse(idx),
    failures: Inventory.failureGroups(idx, summary.cells),
    plugins: Inventory.pluginUses(summary.cells),
    okPairs: idx.table.length - failedPairs,
    failedPairs,
    index: idx
  }
}

