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
import { Builtins as CoreBuiltins, Hash, type Plugin } from "@cupid-lab/core"
import { Builtins as ProviderBuiltins } from "@cupid-lab/providers"
import { Builtins as RetrieverBuiltins } from "@cupid-lab/retrievers"
import * as Paired from "../compare/Paired.js"
import type { CellSummary, MetricDescription, Slice, Summary } from "../ResultLine.js"
import { slices } from "../ResultLine.js"
import { Builtins as ScorerBuiltins } from "@cupid-lab/scorers"
import type { Row, Run } from "./RunDir.js"

export interface Options {
  /** Cell id or name of the baseline; default summary.baseline, else the `all` retriever's cell, else the first. */
  readonly baseline?: string
  /** Permutations per test; default {@link Paired.permutationsFor} the number of tests. */
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

export interface BinValue {
  readonly n: number
  readonly value: number
}

export interface Bin {
  readonly label: string
  readonly lo: number
  readonly hi: number
  /** Instances in the bin (each counted once, whatever the number of cells). */
  readonly instances: number
  /** Per cell id. */
  readonly values: ReadonlyMap<string, BinValue>
}

export interface Binned {
  readonly metric: MetricDescription
  readonly by: "relevant position" | "history tokens"
  readonly bins: ReadonlyArray<Bin>
}

export interface CostRow {
  readonly cell: string
  /** Result lines of the cell, failed ones included (their calls were made too). */
  readonly pairs: number
  readonly calls: number
  readonly promptTokens: number
  readonly completionTokens: number
  /** Calls and tokens of the scorers (stage `score`), not part of the method's cost. */
  readonly scoringCalls: number
  readonly scoringTokens: number
}

export interface ModelUse {
  readonly id: string
  readonly calls: number
  readonly promptTokens: number
  readonly completionTokens: number
}

export interface FailureGroup {
  readonly stage: string
  readonly plugin: string
  readonly tag: string
  readonly count: number
  /** Names of the cells affected, in grid order. */
  readonly cells: ReadonlyArray<string>
  /** First examples in file order (at most 3). */
  readonly examples: ReadonlyArray<{ readonly cell: string; readonly instance: string; readonly message: string }>
}

export interface PluginUse {
  readonly stage: string
  readonly name: string
  /** The package that ships it, or undefined for a plugin module listed by the config. */
  readonly package: string | undefined
  /** Number of cells using it (directly or inside a composite plugin). */
  readonly cells: number
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
  readonly recency: Binned | undefined
  readonly history: Binned | undefined
  readonly cost: ReadonlyArray<CostRow>
  readonly models: ReadonlyArray<ModelUse>
  readonly failures: ReadonlyArray<FailureGroup>
  readonly plugins: ReadonlyArray<PluginUse>
  readonly okPairs: number
  readonly failedPairs: number
}

const scoringStage = "score"

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
    if (c !== undefined) return { cell: c, reason: "set by the sweep: the config's report.baseline when given, else the cell whose retriever is `all`, else the first cell" }
  }
  const all = cells.find((c) => retrieverUse(c) === "all")
  if (all !== undefined) return { cell: all, reason: "the cell whose retriever is `all` (full history)" }
  return { cell: cells[0]!, reason: "the first cell (no cell uses the `all` retriever)" }
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

/** Per-cell index of ok rows by instance, plus every row in file order. */
export interface Index {
  readonly ok: ReadonlyMap<string, ReadonlyMap<string, Row>>
  readonly rows: ReadonlyMap<string, ReadonlyArray<Row>>
  /** Instance ids in first-seen order, with their rows' meta (an instance property). */
  readonly instances: ReadonlyArray<Row>
}

export const index = (rows: ReadonlyArray<Row>): Index => {
  const ok = new Map<string, Map<string, Row>>()
  const byCell = new Map<string, Array<Row>>()
  const seen = new Map<string, Row>()
  for (const r of rows) {
    const list = byCell.get(r.cell) ?? []
    list.push(r)
    byCell.set(r.cell, list)
    if (!seen.has(r.instance)) seen.set(r.instance, r)
    if (r.status !== "ok") continue
    const m = ok.get(r.cell) ?? new Map<string, Row>()
    m.set(r.instance, r)
    ok.set(r.cell, m)
  }
  return { ok, rows: byCell, instances: [...seen.values()] }
}

const score = (r: Row | undefined, key: string): number => {
  const v = r?.scores[key]
  return v === null || v === undefined ? NaN : v
}

/** Columns over a fixed instance list, for {@link Paired}. */
export const columnsOf = (rows: ReadonlyMap<string, Row> | undefined, instances: ReadonlyArray<string>): Paired.Columns => {
  const memo = new Map<string, Array<number>>()
  return (key) => {
    let c = memo.get(key)
    if (c === undefined) {
      c = instances.map((id) => score(rows?.get(id), key))
      memo.set(key, c)
    }
    return c
  }
}

/** Instances of `slice` scored ok in both cells, in the order of `a`. */
export const sharedInstances = (
  a: ReadonlyMap<string, Row> | undefined,
  b: ReadonlyMap<string, Row> | undefined,
  slice: Slice
): Array<string> => {
  if (a === undefined || b === undefined) return []
  const out: Array<string> = []
  for (const [id, r] of a) if ((slice === "all" || r.type === slice) && b.has(id)) out.push(id)
  return out
}

/** Fixed-width bins over positions 1..sessions (width about a quarter of the history, at least 1). */
const positionBins = (maxSessions: number): Array<{ lo: number; hi: number; label: string }> => {
  const width = Math.max(1, Math.round(maxSessions / 4))
  const out: Array<{ lo: number; hi: number; label: string }> = []
  for (let lo = 1; lo <= maxSessions; lo += width) {
    const hi = lo + width
    const last = hi > maxSessions
    out.push({ lo, hi: last ? maxSessions + 1e-9 : hi, label: last ? `${lo}–${maxSessions}` : `${lo}–<${hi}` })
  }
  return out
}

const binned = (
  metric: MetricDescription,
  by: Binned["by"],
  groups: ReadonlyArray<{ label: string; lo: number; hi: number; ids: ReadonlyArray<string> }>,
  cells: ReadonlyArray<CellSummary>,
  idx: Index
): Binned => ({
  metric,
  by,
  bins: groups.filter((g) => g.ids.length > 0).map((g) => {
    const values = new Map<string, BinValue>()
    for (const c of cells) {
      const v = Paired.value(metric, columnsOf(idx.ok.get(c.id), g.ids))
      values.set(c.id, v)
    }
    return { label: g.label, lo: g.lo, hi: g.hi, instances: g.ids.length, values }
  })
})

const recencyBins = (metric: MetricDescription, cells: ReadonlyArray<CellSummary>, idx: Index): Binned | undefined => {
  const withPos = idx.instances.filter((r) => r.meta.relevantMeanPosition !== null)
  if (withPos.length === 0) return undefined
  const maxSessions = Math.max(...idx.instances.map((r) => r.meta.sessions))
  const groups = positionBins(maxSessions).map((b) => ({
    ...b,
    ids: withPos.filter((r) => r.meta.relevantMeanPosition! >= b.lo && r.meta.relevantMeanPosition! < b.hi).map((r) => r.instance)
  }))
  return binned(metric, "relevant position", groups, cells, idx)
}

/** Equal-size bins (by rank of history tokens, ties broken by instance id): quartiles when there are enough instances. */
const historyBins = (metric: MetricDescription, cells: ReadonlyArray<CellSummary>, idx: Index): Binned | undefined => {
  const sorted = [...idx.instances].sort((a, b) => a.meta.historyTokens - b.meta.historyTokens || (a.instance < b.instance ? -1 : a.instance > b.instance ? 1 : 0))
  if (sorted.length === 0) return undefined
  const k = Math.min(4, sorted.length)
  const groups = Array.from({ length: k }, (_, i) => {
    const part = sorted.slice(Math.floor((i * sorted.length) / k), Math.floor(((i + 1) * sorted.length) / k))
    const lo = part[0]!.meta.historyTokens
    const hi = part[part.length - 1]!.meta.historyTokens
    return { label: `${lo}–${hi}`, lo, hi, ids: part.map((r) => r.instance) }
  })
  return binned(metric, "history tokens", groups, cells, idx)
}

const costRows = (cells: ReadonlyArray<CellSummary>, idx: Index): Array<CostRow> =>
  cells.map((c) => {
    let calls = 0, promptTokens = 0, completionTokens = 0, scoringCalls = 0, scoringTokens = 0
    const rows = idx.rows.get(c.id) ?? []
    for (const r of rows) {
      const s = r.usage.byStage[scoringStage]
      calls += r.usage.calls - (s?.calls ?? 0)
      promptTokens += r.usage.promptTokens - (s?.promptTokens ?? 0)
      completionTokens += r.usage.completionTokens - (s?.completionTokens ?? 0)
      scoringCalls += s?.calls ?? 0
      scoringTokens += (s?.promptTokens ?? 0) + (s?.completionTokens ?? 0)
    }
    return { cell: c.id, pairs: rows.length, calls, promptTokens, completionTokens, scoringCalls, scoringTokens }
  })

const modelUse = (rows: ReadonlyArray<Row>): Array<ModelUse> => {
  const m = new Map<string, { calls: number; promptTokens: number; completionTokens: number }>()
  for (const r of rows) {
    for (const [id, u] of Object.entries(r.usage.byModel)) {
      const t = m.get(id) ?? { calls: 0, promptTokens: 0, completionTokens: 0 }
      t.calls += u.calls
      t.promptTokens += u.promptTokens
      t.completionTokens += u.completionTokens
      m.set(id, t)
    }
  }
  return [...m.keys()].sort().map((id) => ({ id, ...m.get(id)! }))
}

const failureGroups = (rows: ReadonlyArray<Row>, cells: ReadonlyArray<CellSummary>): Array<FailureGroup> => {
  const order = new Map(cells.map((c, i) => [c.id, i]))
  const names = new Map(cells.map((c) => [c.id, c.name]))
  const groups = new Map<string, { stage: string; plugin: string; tag: string; count: number; cells: Set<string>; examples: Array<FailureGroup["examples"][number]> }>()
  for (const r of rows) {
    if (r.status !== "failed") continue
    const e = r.error ?? { stage: "unknown", plugin: "unknown", tag: "unknown", message: "(no error recorded)" }
    const key = `${e.stage}\0${e.plugin}\0${e.tag}`
    const g = groups.get(key) ?? { stage: e.stage, plugin: e.plugin, tag: e.tag, count: 0, cells: new Set<string>(), examples: [] }
    g.count++
    g.cells.add(r.cell)
    if (g.examples.length < 3) g.examples.push({ cell: names.get(r.cell) ?? r.cellName, instance: r.instance, message: e.message })
    groups.set(key, g)
  }
  return [...groups.values()]
    .sort((a, b) => b.count - a.count || (a.stage + a.plugin + a.tag < b.stage + b.plugin + b.tag ? -1 : 1))
    .map((g) => ({
      stage: g.stage,
      plugin: g.plugin,
      tag: g.tag,
      count: g.count,
      cells: [...g.cells].sort((a, b) => (order.get(a) ?? 0) - (order.get(b) ?? 0)).map((id) => names.get(id) ?? id),
      examples: g.examples
    }))
}

const shipped: ReadonlyArray<readonly [string, ReadonlyArray<Plugin.AnyPlugin>]> = [
  ["@cupid-lab/core", CoreBuiltins.plugins],
  ["@cupid-lab/retrievers", RetrieverBuiltins.plugins],
  ["@cupid-lab/scorers", ScorerBuiltins.plugins],
  ["@cupid-lab/providers", ProviderBuiltins.plugins]
]

const packageOf = (stage: string, name: string): string | undefined => {
  for (const [pkg, list] of shipped) if (list.some((p) => p.stage === stage && p.name === name)) return pkg
  return undefined
}

/** Every plugin the cells name, top-level stages and parts of composite plugins (`hybrid`, `rerank`). */
const pluginUses = (cells: ReadonlyArray<CellSummary>): Array<PluginUse> => {
  const uses = new Map<string, { stage: string; name: string; package: string | undefined; cells: Set<string> }>()
  // A `use` nested in a stage's options is a part of that plugin: another stage plugin (hybrid's
  // retrievers) or a component of its own (an embedder), shipped with the parent when unregistered.
  const walk = (value: unknown, stage: string, cell: string, parent: { readonly pkg: string | undefined } | undefined): void => {
    if (Array.isArray(value)) return value.forEach((v) => walk(v, stage, cell, parent))
    if (value === null || typeof value !== "object") return
    const v = value as Record<string, unknown>
    let here = parent
    if (typeof v["use"] === "string") {
      const name = v["use"]
      const registered = packageOf(stage, name)
      const asStage = parent === undefined || registered !== undefined ? stage : `${stage} part`
      const pkg = parent === undefined || registered !== undefined ? registered : parent.pkg
      const key = `${asStage}\0${name}`
      const u = uses.get(key) ?? { stage: asStage, name, package: pkg, cells: new Set<string>() }
      u.cells.add(cell)
      uses.set(key, u)
      here = { pkg }
    }
    for (const [k, child] of Object.entries(v)) if (k !== "use") walk(child, stage, cell, here)
  }
  for (const c of cells) for (const [stage, spec] of Object.entries(c.params)) walk(spec, stage, c.id, undefined)
  const order = ["retriever", "retriever part", "summarizer", "summarizer part", "inferrer", "inferrer part", "generator", "generator part"]
  return [...uses.values()]
    .sort((a, b) => (order.indexOf(a.stage) - order.indexOf(b.stage)) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .map((u) => ({ stage: u.stage, name: u.name, package: u.package, cells: u.cells.size }))
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
  const fam2 = Paired.family(
    plan.map((t) => ({ metric: t.metric, a: columnsOf(idx.ok.get(baseline.id), t.ids), b: columnsOf(idx.ok.get(t.cell), t.ids) })),
    { seed: summary.seed, resamples: summary.resamples ?? 1000, ...(options.permutations !== undefined ? { permutations: options.permutations } : {}) }
  )
  const deltas = plan.map((t, i): Delta => ({ cell: t.cell, metric: t.metric.name, slice: t.slice, comparison: fam2.comparisons[i]!, pHolm: fam2.adjusted[i]! }))

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
    tests: fam2.tests,
    permutations: fam2.permutations,
    recency: fam.main === undefined ? undefined : recencyBins(fam.main, summary.cells, idx),
    history: fam.main === undefined ? undefined : historyBins(fam.main, summary.cells, idx),
    cost: costRows(summary.cells, idx),
    models: modelUse(rows),
    failures: failureGroups(rows, summary.cells),
    plugins: pluginUses(summary.cells),
    okPairs,
    failedPairs: rows.length - okPairs
  }
}

/** Cells on the cost frontier: no other (non-oracle) cell is at most as costly and at least as good, and better in one. */
export const paretoFront = (points: ReadonlyArray<{ readonly id: string; readonly cost: number; readonly value: number }>): Set<string> => {
  const front = new Set<string>()
  const ok = points.filter((p) => Number.isFinite(p.cost) && Number.isFinite(p.value))
  for (const p of ok) {
    const dominated = ok.some((q) =>
      q !== p && q.cost <= p.cost && q.value >= p.value && (q.cost < p.cost || q.value > p.value)
    )
    if (!dominated) front.add(p.id)
  }
  return front
}
