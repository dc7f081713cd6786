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
import { ResultLine, Columns, type RunDir } from "@cupid-lab/results"
import { Either } from "effect"

import * as AxisEffects from "./AxisEffects.js"
import * as Bins from "./Bins.js"
import * as Families from "./Families.js"
import * as Interventions from "./Interventions.js"
import * as Inventory from "./Inventory.js"
import * as Pairwise from "./Pairwise.js"
import * as Slices from "./Slices.js"

export interface Options {
  /** Cell id or name of the baseline; default the run's. */
  readonly baseline?: string
  /** The main metric by name; default the run's, else chosen from the metrics' declarations ({@link mainMetric}). */
  readonly main?: string
  /** Permutations of the tests that are refined; default {@link Paired.permutationsFor} the number of tests. */
  readonly permutations?: number
}

export interface CellView {
  readonly summary: ResultLine.CellSummary
  /** The oracle-retrieval cell with the same stages apart from the retriever, if the run has one. */
  readonly oracle: ResultLine.CellSummary | undefined
}

export interface Delta {
  readonly cell: string
  /** The cell it is compared against: the baseline, or with a model axis the baseline's ablation under this cell's models. */
  readonly against: string
  readonly metric: string
  readonly slice: Slices.Slice
  /** Clustered by persona on slices where a persona has several instances. */
  readonly comparison: Paired.Comparison
  readonly family: Families.Family
  readonly correction: Statistics.Correction
  /** NaN when the test could not be made, and in the family `none`. */
  readonly pAdjusted: number
  /** Primary comparisons: the minimum detectable effect at this n (80% power, the family's per-test level); NaN otherwise. */
  readonly mde: number
}

/** A family of tests, with the level one test must reach when it is the family's only real effect (Statistics.perTestLevel). */
export type TestedFamily = Pick<Paired.Family, "correction" | "tests" | "permutations"> & { readonly level: number }

export interface Analysis {
  readonly summary: ResultLine.Summary
  readonly cells: ReadonlyArray<CellView>
  readonly baseline: ResultLine.CellSummary
  readonly baselineReason: string
  /** Every cell some cell is compared against: the baseline, and under a model axis its ablation for each model. */
  readonly baselines: ReadonlySet<string>
  /** How reports name what cells are compared against. */
  readonly baselineLabel: string
  /** Undefined with fewer than two cells. */
  readonly pairwise: Pairwise.Pairwise | undefined
  /** Slices where no difference of the main metric against the baseline can reach significance. */
  readonly baselineTooSmall: ReadonlyMap<Slices.Slice, Pairwise.TooSmall>
  readonly main: ResultLine.MetricDescription | undefined
  readonly mainReason: string
  /** The instances no cell has a value of the main metric for (questions without evidence, ...), per slice. */
  readonly unscored: Slices.Unscored | undefined
  /** Micro precision / recall / F1 when the scorer pools, else the macro ones. */
  readonly inference: ReadonlyArray<ResultLine.MetricDescription>
  readonly inferenceMacro: ReadonlyArray<ResultLine.MetricDescription>
  readonly generation: ReadonlyArray<ResultLine.MetricDescription>
  readonly retrieval: ReadonlyArray<ResultLine.MetricDescription>
  /** Metrics tested against the baseline. */
  readonly compared: ReadonlyArray<ResultLine.MetricDescription>
  readonly deltas: ReadonlyArray<Delta>
  readonly plan: Families.Plan
  readonly families: { readonly primary: TestedFamily; readonly exploratory: TestedFamily }
  /** Metrics that cannot tell the cells apart, and why; left out of the headline lists above. */
  readonly uninformative: ReadonlyArray<{ readonly metric: string; readonly reason: string }>
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
  readonly index: Columns.Index
}

const withoutRetriever = (c: ResultLine.CellSummary): string => {
  const { retriever: _r, ...rest } = c.params
  return Hash.canonicalJson(rest)
}

/**
 * The cell a selector names: an id, a name, a unique id prefix of 4+ characters, or `@k` (1-based,
 * for names a shell would mangle); else why nothing matched.
 */
export const findCell = (
  cells: ReadonlyArray<ResultLine.CellSummary>,
  selector: string
): Either.Either<ResultLine.CellSummary, string> => {
  const list = cells.map((c, i) => `@${i + 1} ${c.name} (${c.id})`).join("; ")
  const position = /^@(\d+)$/.exec(selector)
  if (position !== null) {
    const c = cells[Number(position[1]) - 1]
    return c !== undefined
      ? Either.right(c)
      : Either.left(`no cell @${position[1]}: the run has ${cells.length} (${list})`)
  }
  const byId = Families.cellNamed(cells, selector)
  if (byId !== undefined) return Either.right(byId)
  const prefixed = selector.length >= 4 ? cells.filter((c) => c.id.startsWith(selector)) : []
  if (prefixed.length === 1) return Either.right(prefixed[0]!)
  return Either.left(
    prefixed.length > 1
      ? `"${selector}" is the start of ${prefixed.length} cell ids; give more of it (cells: ${list})`
      : `no cell "${selector}" (by id, id prefix of 4+ characters, name, or @k); cells: ${list}`
  )
}

/** A cell's name without the models a model axis adds to it: `full-history [gpt-4o]` is `full-history`. */
export const settingOf = (c: Pick<ResultLine.CellSummary, "name">): string => c.name.replace(/ \[[^\]]*\]$/, "")

/**
 * The cell `c` is compared against: the baseline, or, when `c` binds other models than the
 * baseline (a model axis), the cell equal to the baseline in everything else under `c`'s models.
 */
export const baselineOf =
  (cells: ReadonlyArray<ResultLine.CellSummary>, baseline: ResultLine.CellSummary) =>
  (c: ResultLine.CellSummary): ResultLine.CellSummary => {
    const models = (x: ResultLine.CellSummary) => Hash.canonicalJson(x.params["models"] ?? null)
    if (models(c) === models(baseline)) return baseline
    const rest = (x: ResultLine.CellSummary) => {
      const { models: _m, ...others } = x.params
      return Hash.canonicalJson(others)
    }
    return cells.find((x) => models(x) === models(c) && rest(x) === rest(baseline)) ?? baseline
  }

/** Which cell is the baseline, and why. */
export const chooseBaseline = (
  summary: ResultLine.Summary,
  requested?: string
): { readonly cell: ResultLine.CellSummary; readonly reason: string } => {
  const cells = summary.cells
  if (cells.length === 0) throw new Error("the summary lists no cells")
  if (requested !== undefined) {
    const c = findCell(cells, requested)
    if (Either.isLeft(c)) throw new Error(`baseline "${requested}" is not a cell of this run: ${c.left}`)
    return { cell: c.right, reason: "chosen on the command line" }
  }
  const c = Families.cellNamed(cells, summary.baseline)
  if (c !== undefined)
    return {
      cell: c,
      reason:
        "set by the sweep: the config's report.baseline when given, else the cell whose retriever is all, else the first cell"
    }
  return { cell: cells[0]!, reason: "the first cell (the run's baseline is not one of its cells)" }
}

/** What the transform curves plot: the main metric when it is not a retrieval metric, then the retrieval headline metrics. */
const interventionMetrics = (
  summary: ResultLine.Summary,
  main: ResultLine.MetricDescription | undefined
): Array<ResultLine.MetricDescription> => {
  const retrieval = summary.metrics.filter((m) => m.family === "retrieval" && m.headline)
  return main === undefined || main.family === "retrieval" ? retrieval : [main, ...retrieval]
}

/**
 * Metrics that cannot tell the cells apart on all instances (no cell has a value, every cell has
 * the same, or every cell's 95% CI contains 0), with the reason, so a report does not lead with them.
 */
const uninformativeReason = (summary: ResultLine.Summary, metric: string): string | undefined => {
  const estimates = summary.cells
    .map((c) => c.slices.all.metrics[metric])
    .filter((e): e is NonNullable<typeof e> => e !== undefined && e.n > 0 && Number.isFinite(e.mean))
  if (estimates.length === 0) return "no cell has a value on all instances"
  const values = estimates.map((e) => e.mean!)
  const lo = Math.min(...values),
    hi = Math.max(...values)
  if (estimates.length === summary.cells.length && summary.cells.length > 1 && lo === hi)
    return `every cell has the same value ${lo.toFixed(3)} on all instances`
  const containsZero = (e: (typeof estimates)[number]) =>
    e.ci95[0] !== null && e.ci95[1] !== null && e.ci95[0] <= 0 && e.ci95[1] >= 0
  if (estimates.every(containsZero)) {
    return `every cell's 95% CI on all instances${summary.cells.some((c) => c.usesGold) ? ", the oracle's included," : ""} contains 0 (largest |value| ${Math.max(Math.abs(lo), Math.abs(hi)).toFixed(3)})`
  }
  return undefined
}

/**
 * The main metric: the one named (`report.main`, `report --main`), else the declared candidate of
 * lowest rank (`mainRank`), else the first metric that is not a cost. A candidate that is a
 * heuristic, or an inference metric when no model produced any inference, is passed over for the
 * next one that is neither: on an offline sweep the inference F1 only measures the extractive
 * stand-in, so the exact retrieval metric leads and the F1 stays in the tables, marked.
 */
export const mainMetric = (
  summary: ResultLine.Summary,
  chosen?: string
): { readonly main: ResultLine.MetricDescription | undefined; readonly mainReason: string } => {
  const name = chosen ?? summary.main
  if (name !== undefined) {
    const main = Families.metricNamed(summary, name, "main metric")
    return { main, mainReason: chosen !== undefined ? "chosen on the command line" : "set by the config (report.main)" }
  }
  const ranked = summary.metrics.filter((m) => m.mainRank !== undefined).sort((a, b) => a.mainRank! - b.mainRank!)
  // No cell's inference came from a model: every cell has no inferrer or a heuristic one.
  const noModel = summary.cells.every(
    (c) => c.params["inferrer"] === null || c.params["inferrer"] === undefined || c.heuristicStages.includes("inferrer")
  )
  const passedOver = (m: ResultLine.MetricDescription) => m.heuristic || (noModel && m.family === "inference")
  const exact = ranked.find((m) => !passedOver(m))
  if (ranked[0] !== undefined && exact !== undefined && exact !== ranked[0]) {
    return {
      main: exact,
      mainReason: `${ranked[0].name} is computed by a heuristic${noModel ? " (no model produced any inference)" : ""}, so the first exact candidate leads; ${ranked[0].name} is shown as secondary, marked`
    }
  }
  if (ranked[0] !== undefined) return { main: ranked[0], mainReason: "the scorers' first-ranked candidate (mainRank)" }
  const first = summary.metrics.find((m) => m.family !== "cost")
  return {
    main: first,
    mainReason:
      first === undefined ? "no metric" : "the first metric that is not a cost (no scorer ranks a main metric)"
  }
}

/** The metrics tested against the baseline: every headline metric, the main metric first (the others only get CIs). */
export const comparedMetrics = (
  summary: ResultLine.Summary,
  main: ResultLine.MetricDescription | undefined
): Array<ResultLine.MetricDescription> => {
  const rank = (m: ResultLine.MetricDescription) => m.mainRank ?? Number.POSITIVE_INFINITY
  // then the other candidates by rank, then the rest in declaration order (the sort is stable)
  const isMain = (m: ResultLine.MetricDescription) => (m.name === main?.name ? 0 : 1)
  const out = summary.metrics.filter((m) => m.headline).sort((a, b) => isMain(a) - isMain(b) || rank(a) - rank(b))
  if (out.length === 0 && main !== undefined) out.push(main)
  return out
}

export const analyze = (run: Pick<RunDir.Run, "summary" | "index">, options: Options = {}): Analysis => {
  const { summary, index: idx } = run
  const { cell: baseline, reason } = chooseBaseline(summary, options.baseline)
  const { main, mainReason } = mainMetric(summary, options.main)
  const uninformative = summary.metrics.flatMap((m) => {
    const reason = uninformativeReason(summary, m.name)
    return reason === undefined ? [] : [{ metric: m.name, reason }]
  })
  const informative = (m: ResultLine.MetricDescription) => !uninformative.some((u) => u.metric === m.name)
  const shown = (family: string) => summary.metrics.filter((m) => m.family === family && informative(m))
  // Inference metrics pooled over instances when the scorer pools, else its per-instance means.
  const pooled = summary.metrics.some((m) => m.family === "inference" && m.aggregate._tag !== "Mean")
  const compared = comparedMetrics(summary, main).filter((m) => m.name === main?.name || informative(m))

  const oracles = summary.cells.filter((c) => c.oracleRetrieval)
  const cells: Array<CellView> = summary.cells.map((c) => ({
    summary: c,
    oracle: c.usesGold ? undefined : oracles.find((o) => withoutRetriever(o) === withoutRetriever(c))
  }))

  // Each cell against the baseline, every metric and slice: each cell's columns over every
  // instance of the slice (Columns.sliceOf), NaN where it has no ok line, so that the usable rows
  // are the instances both cells scored; rows of one persona move together (Families.personas).
  const plan = Families.resolve(summary, main?.name)
  const slices = Slices.of(summary)
  const clusters = new Map(slices.map((slice) => [slice, Families.personas(idx, slice)] as const))
  const against = baselineOf(summary.cells, baseline)
  const baselines = new Set(summary.cells.map((c) => against(c).id))
  const planned = summary.cells
    .filter((c) => against(c).id !== c.id)
    .flatMap((c) =>
      slices.flatMap((slice) => {
        const a = Columns.sliceOf(idx, against(c).id, slice),
          b = Columns.sliceOf(idx, c.id, slice)
        return compared.map((metric) => ({
          against: against(c).id,
          c,
          metric,
          slice,
          family: Families.familyOf(plan, c, metric.name, slice),
          test: { a: a(metric), b: b(metric), clusters: clusters.get(slice)! }
        }))
      })
    )
  const byTest = new Map<Paired.Test, Delta>()
  const test = (family: Families.Family): TestedFamily => {
    const members = planned.filter((t) => t.family === family)
    // untested cells need their intervals only: no refinement
    const permutations = family === "none" ? Paired.screening : options.permutations
    const correction = family === "none" ? "none" : plan.correction[family]
    const result = Paired.family(
      members.map((t) => t.test),
      { ...Families.resampling(summary, permutations), correction }
    )
    const level = Statistics.perTestLevel(result.correction, result.tests)
    members.forEach((t, k) => {
      const se = family === "primary" ? Paired.standardError(t.test.a, t.test.b, { clusters: t.test.clusters }) : NaN
      byTest.set(t.test, {
        cell: t.c.id,
        against: t.against,
        metric: t.metric.name,
        slice: t.slice,
        comparison: result.comparisons[k]!,
        family,
        correction,
        pAdjusted: family === "none" ? NaN : result.adjusted[k]!,
        mde: family === "primary" ? Statistics.minimumDetectable(se, level) : NaN
      })
    })
    return { correction: result.correction, tests: result.tests, permutations: result.permutations, level }
  }
  const tests = { primary: test("primary"), exploratory: test("exploratory") }
  test("none")
  const deltas = planned.map((t) => byTest.get(t.test)!)
  const pairwise =
    summary.cells.length < 2 || compared.length === 0
      ? undefined
      : Pairwise.compute(summary, idx, compared, Families.resampling(summary, options.permutations))
  const baselineTooSmall = new Map<Slices.Slice, Pairwise.TooSmall>()
  for (const slice of slices) {
    const ofMain = deltas.filter((d) => d.slice === slice && d.metric === main?.name && d.family !== "none")
    const family = ofMain[0]?.family === "primary" ? tests.primary : tests.exploratory
    const paired = Math.max(0, ...ofMain.map((d) => d.comparison.clusters ?? d.comparison.n))
    // A slice where no pair has a value (LoCoMo's adversarial questions on retrieval) has no test to be too small for.
    if (ofMain.length === 0 || family.tests === 0 || paired === 0) continue
    const multiplier = family.correction === "none" ? 1 : family.tests
    const small = Pairwise.tooSmall(paired, multiplier, family.correction)
    const clustered = ofMain.some((d) => d.comparison.clusters !== undefined)
    if (small !== undefined) baselineTooSmall.set(slice, clustered ? { ...small, clustered } : small)
  }
  const p = tests.primary.permutations,
    q = tests.exploratory.permutations
  const permutations: Paired.Family["permutations"] = {
    screening: p.screening,
    refined: Math.max(p.refined, q.refined),
    refinedTests: p.refinedTests + q.refinedTests,
    exactTests: p.exactTests + q.exactTests,
    normalTests: p.normalTests + q.normalTests,
    ...(p.largeSample !== undefined ? { largeSample: p.largeSample } : {})
  }
  return {
    summary,
    cells,
    baseline,
    baselineReason: reason,
    baselines,
    baselineLabel:
      baselines.size > 1 ? `${settingOf(baseline)} under each cell's own models (model axis)` : baseline.name,
    pairwise,
    baselineTooSmall,
    main,
    mainReason,
    unscored: main === undefined ? undefined : Slices.unscored(idx, summary.cells, main, slices),
    inference: shown("inference").filter((m) => (m.aggregate._tag !== "Mean") === pooled),
    inferenceMacro: pooled ? shown("inference").filter((m) => m.aggregate._tag === "Mean") : [],
    generation: shown("generation"),
    retrieval: shown("retrieval"),
    compared,
    deltas,
    plan,
    families: tests,
    uninformative,
    permutations,
    recency: main === undefined ? undefined : Bins.recency(main, summary.cells, idx),
    history: main === undefined ? undefined : Bins.history(main, summary.cells, idx),
    axes: AxisEffects.of(summary, idx, main, plan, options.permutations),
    interventions: Interventions.curves(summary, interventionMetrics(summary, main)),
    cost: Inventory.costRows(summary.cells, idx),
    models: Inventory.modelUse(idx),
    failures: Inventory.failureGroups(idx, summary.cells),
    plugins: Inventory.pluginUses(summary.cells),
    index: idx
  }
}
