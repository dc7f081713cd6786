/**
 * `<out>/report.md`: the run's tables in the paper's layout (inference P / R / F1 with an oracle
 * column, generation, retrieval, cost), differences against the baseline with paired statistics,
 * the recency and history-length analyses as tables, failures, examples and an appendix with every
 * metric. Rendered from an {@link Analysis} (summary.json + results.jsonl) and the dataset's
 * examples only: no wall-clock time or cache figures, so reruns give the same bytes (those live in
 * report.html, fed from run.json). The tables are {@link Tables}' values, rendered by
 * {@link Table.markdown}.
 *
 * @example
 * import * as Markdown from "@cupid-lab/experiments/render/Markdown"
 * fs.writeFileSync("runs/x/report.md", Markdown.render(analysis, examples, versions))
 */
import type { MetricDescription } from "../results/ResultLine.js"
import { slices } from "../results/ResultLine.js"
import type { Analysis } from "../analysis/Analysis.js"
import type { Binned } from "../analysis/Bins.js"
import { opening } from "../analysis/Examples.js"
import type { Examples } from "../analysis/Examples.js"
import * as Format from "./Format.js"
import * as Notes from "./Notes.js"
import * as Repeats from "./Repeats.js"
import * as Table from "./Table.js"
import * as Tables from "./Tables.js"

const t = Format.md

/** A table and the blank line after it. */
const table = (x: Table.Table): Array<string> => [Table.markdown(x), ""]

const inferenceSection = (a: Analysis): Array<string> => {
  if (a.inference.length === 0) return []
  const out = ["## Inference (preference match)", ""]
  out.push(Tables.inferenceNote(a), "")
  const heuristic = a.inference.filter((m) => m.heuristic)
  if (heuristic.length > 0) out.push(`${Notes.heuristicMark} ${heuristic.map((m) => m.name).join(", ")}: computed by an offline heuristic (lexical matching), not the paper's LLM judge.`, "")
  for (const s of slices) out.push(`### ${Notes.sliceTitle(s)}`, "", ...table(Tables.inference(a, s)))
  if (a.cells.some((c) => c.oracle !== undefined)) out.push(Tables.oracleNote, "")
  return out
}

/** Per metric: its label, what it is, and its values by cell and slice. */
const estimateTables = (a: Analysis, metrics: ReadonlyArray<MetricDescription>): Array<string> =>
  metrics.flatMap((m) => [
    `### ${t(Notes.metricLabel(m))}`,
    "",
    t(Tables.metricNote(m)),
    "",
    ...table(Tables.estimates(a, m))
  ])

const generationSection = (a: Analysis): Array<string> =>
  a.generation.length === 0 ? [] : ["## Generation", "", "Each entry: value [95% CI] n=N.", "", ...estimateTables(a, a.generation)]

const repeatsSection = (a: Analysis): Array<string> => {
  const r = Repeats.table(a)
  return r === undefined ? [] : ["## Repeated judgments", "", t(Repeats.note), "", ...table(r)]
}

const retrievalSection = (a: Analysis): Array<string> => {
  if (a.retrieval.length === 0) return []
  const out = ["## Retrieval", "", "Means over instances; the appendix gives every value with its 95% CI.", ""]
  for (const s of slices) out.push(`### ${Notes.sliceTitle(s)}`, "", ...table(Tables.retrieval(a, s)))
  out.push(Tables.retrievalNote, "")
  return out
}

const deltaSection = (a: Analysis): Array<string> => {
  if (a.cells.length < 2 || a.compared.length === 0) return []
  const out = [
    "## Differences against the baseline",
    "",
    `Baseline: ${t(a.baseline.name)}. Each entry: difference (cell - baseline) [paired bootstrap 95% CI] p=permutation p-value Holm=Holm-adjusted p n=paired instances; * Holm < 0.05. Holm family: all ${a.tests} tests below.`,
    ""
  ]
  for (const [slice, small] of a.baselineTooSmall) out.push(`> ${t(Notes.tooSmallNote(slice, small.n, small.needed, a.tests))}`, "")
  for (const m of a.compared) out.push(`### ${t(Notes.metricLabel(m))}`, "", ...table(Tables.deltas(a, m)))
  return out
}

const pairwiseSection = (a: Analysis): Array<string> => {
  const p = a.pairwise
  if (p === undefined) return []
  const out = ["## Every cell against every other", "", t(Notes.pairwiseNote(p)), ""]
  for (const s of p.slices) {
    out.push(`### ${t(Notes.sliceTitle(s.slice))}`, "")
    if (s.tooSmall !== undefined) out.push(`> ${t(Notes.tooSmallNote(s.slice, s.tooSmall.n, s.tooSmall.needed, p.tests))}`, "")
    out.push(...table(Tables.pairwise(a, p, s)))
  }
  return out
}

const binnedSection = (a: Analysis, b: Binned | undefined, title: string): Array<string> =>
  b === undefined ? [] : [`## ${title}`, "", `${t(Notes.binHeader(b))}; ${Notes.aggregateNote(b.metric)} within each bin.`, "", ...table(Tables.binned(a, b))]

/** Tables of the transform curves: one per axis, metric and slice; value [95% CI] n per point. */
const interventionSection = (a: Analysis): Array<string> => {
  if (a.interventions.length === 0) return []
  const out = ["## History transforms", "", t("Each metric against a swept transform axis, per instance type: the same instances with their histories rewritten (docs/data.md, History transforms); relevance never changes. value [95% CI] n=N.")]
  for (const curve of a.interventions) {
    for (const slice of slices) out.push("", `### ${curve.metric.name} against ${curve.axis}, ${slice}`, "", ...table(Tables.transform(curve, slice)))
  }
  return out
}

const costSection = (a: Analysis): Array<string> => {
  const usd = a.summary.metrics.some((m) => m.name === "cost.usd")
  return [
    "## Cost",
    "",
    Tables.costNote,
    "",
    ...table(Tables.cost(a)),
    ...(usd && a.cells.some((c) => (c.summary.slices.all.metrics["cost.usd"]?.n ?? 0) < c.summary.slices.all.n) ? [t(Notes.usdNote), ""] : [])
  ]
}

const failuresSection = (a: Analysis): Array<string> => {
  const out: Array<string> = []
  if (a.failures.length > 0) {
    out.push("## Failures", "", `${a.failedPairs} failed pairs, grouped by stage, plugin and error; a rerun of the sweep retries them.`, "", ...table(Tables.failures(a)))
  }
  const skipped = a.summary.dataset.skipped
  if (skipped.length > 0) {
    out.push("## Skipped dataset rows", "", `${skipped.length} rows of the dataset were skipped (onInvalid: skip) and are in no table.`, "", ...table(Tables.skipped(a)))
    if (skipped.length > 50) out.push(`(${skipped.length - 50} more in summary.json)`, "")
  }
  return out
}

const examplesSection = (a: Analysis, ex: Examples): Array<string> => {
  const out = ["## Examples", ""]
  if (ex.examples.length === 0) return [...out, `No examples: ${t(ex.note ?? "none")}.`, ""]
  out.push("The first instance of each type: the request, the gold preference, the prior sessions (gold label and opening user message) and what each cell selected and inferred.", "")
  for (const e of ex.examples) {
    const i = e.instance
    out.push(`### ${t(e.id)} (${e.type})`, "")
    out.push(`- Request: ${t(Format.clip(i.query.request, 400))}`)
    out.push(`- Gold preference: ${t(i.gold.preference)}`)
    out.push("- Prior sessions:")
    i.query.sessions.forEach((s, k) => {
      out.push(`  - ${s.id} (${i.gold.sessions[k]?.label ?? "?"}): ${t(Format.clip(opening(s), 160))}`)
    })
    out.push("", ...table(Tables.example(a, ex, e)))
  }
  return out
}

const appendix = (a: Analysis): Array<string> => {
  const out = ["## Appendix: every metric", "", "Each entry: value [95% CI] n=N, from summary.json.", "", ...estimateTables(a, a.summary.metrics)]
  if (a.summary.metrics.length === 0) out.push("No metrics: the config lists no scorers.", "")
  return out
}

const runSection = (a: Analysis, versions: Readonly<Record<string, string>>): Array<string> => {
  const s = a.summary
  const d = s.dataset
  const out = [`# ${t(s.config.name)}: sweep report`, ""]
  out.push(`- Config: \`${t(s.config.name)}\`, hash \`${t(s.config.hash)}\``)
  out.push(`- Data: \`${t(d.source)}\`, fingerprint \`${t(d.hash)}\`, ${d.instances} instances; ${d.skipped.length} rows skipped`)
  out.push(`- Cells: ${a.cells.length}; result lines: ${a.okPairs} scored, ${a.failedPairs} failed`)
  out.push(`- Baseline: ${t(a.baseline.name)} (${t(a.baselineReason)})`)
  if (a.main !== undefined) out.push(`- Main metric: ${t(Notes.metricLabel(a.main))} (${Notes.aggregateNote(a.main)}); ${t(a.mainReason)}`)
  const oracle = a.cells.filter((c) => c.summary.usesGold).map((c) => c.summary.name)
  out.push(`- Cells that read gold labels ${Notes.oracleMark}: ${oracle.length === 0 ? "none" : t(oracle.join(", "))}`)
  const heuristic = s.metrics.filter((m) => m.heuristic).map((m) => m.name)
  out.push(`- Metrics from heuristics ${Notes.heuristicMark} (not LLM judges): ${heuristic.length === 0 ? "none" : heuristic.join(", ")}`)
  out.push(`- Models called: ${a.models.length === 0 ? "none (every stage ran offline)" : a.models.map((m) => `\`${t(m.id)}\` (${Format.integer(m.calls)} calls answered by the model or the cache, ${Format.integer(m.promptTokens + m.completionTokens)} tokens)`).join(", ")}${a.models.length === 0 ? "" : "; the requests this run sent, retries included, are counted in run.json"}`)
  out.push("")
  out.push(...Notes.marks(a).map((m) => `${m}  `), "")
  out.push("## Cells", "")
  out.push(...table(Tables.cells(a)))
  if (a.plugins.length > 0) {
    out.push("## Plugins", "")
    out.push(...table(Tables.plugins(a, versions)))
  }
  return out
}

/**
 * The report as Markdown. `versions` (package -> version, from run.json) only fills the Plugins
 * table; everything else comes from the analysis and the examples.
 */
export const render = (a: Analysis, examples: Examples, versions: Readonly<Record<string, string>> = {}): string =>
  [
    ...runSection(a, versions),
    ...inferenceSection(a),
    ...generationSection(a),
    ...repeatsSection(a),
    ...retrievalSection(a),
    ...deltaSection(a),
    ...pairwiseSection(a),
    ...binnedSection(a, a.recency, "Recency: relevant-session position"),
    ...binnedSection(a, a.history, "History length"),
    ...interventionSection(a),
    ...costSection(a),
    ...failuresSection(a),
    ...examplesSection(a, examples),
    "## How the numbers were computed",
    "",
    ...Notes.statistics(a).flatMap((p) => [t(p), ""]),
    ...appendix(a)
  ].join("\n")
