/**
 * `report.md`: the verdict, the run's facts and the all-instances tables, then an appendix of the
 * long tables. No wall-clock or cache figures (those are in report.html), so reruns give the same bytes.
 *
 * @example
 * fs.writeFileSync("runs/x/report.md", Markdown.render(analysis, examples, versions))
 */
import type { MetricDescription, Slice } from "../results/ResultLine.js"
import { slices } from "../results/ResultLine.js"
import type { Analysis } from "../analysis/Analysis.js"
import type { Binned } from "../analysis/Bins.js"
import { opening } from "../analysis/Examples.js"
import type { Examples } from "../analysis/Examples.js"
import * as Verdict from "../analysis/Verdict.js"
import * as ByAxis from "./ByAxis.js"
import * as Format from "./Format.js"
import * as Leaderboard from "./Leaderboard.js"
import * as Notes from "./Notes.js"
import * as Repeats from "./Repeats.js"
import * as Table from "./Table.js"
import * as Tables from "./Tables.js"

const t = Format.md

const table = (x: Table.Table): Array<string> => [Table.markdown(x), ""]

/** The heading of a section over one slice or over every instance type (each with its own `###`). */
const bySlice = (title: string, chosen: ReadonlyArray<Slice>): string =>
  `## ${title}${chosen.length === 1 ? `, ${Notes.sliceTitle(chosen[0]!)}` : ", by instance type"}`

const sliceHeading = (chosen: ReadonlyArray<Slice>, s: Slice): Array<string> => (chosen.length > 1 ? [`### ${Notes.sliceTitle(s)}`, ""] : [])

const inferenceSection = (a: Analysis, chosen: ReadonlyArray<Slice>): Array<string> => {
  if (a.inference.length === 0) return []
  const out = [bySlice("Inference (preference match)", chosen), "", Tables.inferenceNote(a), ""]
  const heuristic = a.inference.filter((m) => m.heuristic)
  if (heuristic.length > 0) out.push(`${Notes.heuristicMark} ${heuristic.map((m) => m.name).join(", ")}: computed by an offline heuristic (lexical matching), not the paper's LLM judge.`, "")
  for (const s of chosen) out.push(...sliceHeading(chosen, s), ...table(Tables.inference(a, s)))
  if (a.cells.some((c) => c.oracle !== undefined)) out.push(Tables.oracleNote, "")
  return out
}

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

const retrievalSection = (a: Analysis, chosen: ReadonlyArray<Slice>): Array<string> => {
  if (a.retrieval.length === 0) return []
  const out = [bySlice("Retrieval", chosen), "", `Means over instances; ${everyMetric}`, ""]
  for (const s of chosen) out.push(...sliceHeading(chosen, s), ...table(Tables.retrieval(a, s)))
  out.push(Tables.retrievalNote, "")
  return out
}

const deltaSection = (a: Analysis, metrics: ReadonlyArray<MetricDescription>, title: string): Array<string> => {
  if (a.cells.length < 2 || metrics.length === 0) return []
  const out = [
    `## ${title}`,
    "",
    `Baseline: ${t(a.baseline.name)}. Each entry: difference (cell - baseline) [paired bootstrap 95% CI] p=permutation p-value, the p adjusted within its family (Holm=, BH=, Bonferroni=), n=paired instances, (family); * adjusted p < 0.05. ${t(Notes.familiesNote(a))}`,
    ""
  ]
  for (const [slice, small] of a.baselineTooSmall) out.push(`> ${t(Notes.tooSmallNote(slice, small.n, small.needed, small.tests, small.correction))}`, "")
  for (const m of metrics) out.push(`### ${t(Notes.metricLabel(m))}`, "", ...table(Tables.deltas(a, m)))
  return out
}

/** Every pair of cells on all instances; the per-type tables are in report.html and the viewer. */
const pairwiseSection = (a: Analysis): Array<string> => {
  const p = a.pairwise
  if (p === undefined) return []
  const out = ["## Every cell against every other", "", t(Notes.pairwiseNote(p)), "", "All instances here; report.html and the results viewer (`npx nx run experiments:view`) give the table of each instance type.", ""]
  for (const s of p.slices.filter((x) => x.slice === "all")) {
    out.push(`### ${t(Notes.sliceTitle(s.slice))}`, "")
    if (s.tooSmall !== undefined) out.push(`> ${t(Notes.tooSmallNote(s.slice, s.tooSmall.n, s.tooSmall.needed, p.tests))}`, "")
    out.push(...table(Tables.pairwise(a, p, s)))
  }
  return out
}

const binnedSection = (a: Analysis, b: Binned | undefined, title: string): Array<string> =>
  b === undefined ? [] : [`## ${title}`, "", `${t(Notes.binHeader(b))}; ${Notes.aggregateNote(b.metric)} within each bin.`, "", ...table(Tables.binned(a, b))]

const interventionSection = (a: Analysis): Array<string> => {
  if (a.interventions.length === 0) return []
  const out = ["## History transforms", "", t("Each metric against a swept transform axis, per instance type: the same instances with their histories rewritten (docs/data.md, History transforms); relevance never changes. value [95% CI] n=N.")]
  for (const curve of a.interventions) {
    for (const slice of slices) out.push("", `### ${curve.metric.name} against ${curve.axis}, ${slice}`, "", ...table(Tables.transform(curve, slice)))
  }
  return out
}

const costSection = (a: Analysis): Array<string> =>
  ["## Cost", "", Tables.costNote, "", ...table(Tables.cost(a)), ...(Tables.unpriced(a) ? [t(Notes.usdNote), ""] : [])]

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
  if (a.cells.length > Leaderboard.openingLimit) out.push("The results viewer (`npx nx run experiments:view`) browses every instance, with what each cell selected.", "")
  if (ex.examples.length === 0) return [...out, `No examples: ${t(ex.note ?? "none")}.`, ""]
  out.push("The first instance of each type: the request, the gold preference, the prior sessions (gold label and opening user message) and what each cell selected and inferred.", "")
  for (const e of ex.examples) {
    const i = e.instance
    out.push(`### ${t(e.id)} (${e.type})`, "")
    out.push(`- Request: ${t(Format.clip(i.query.request, 400))}`)
    out.push(`- Gold preference: ${t(i.gold.preference)}`)
    out.push("- Prior sessions:")
    out.push(...i.query.sessions.map((s, k) => `  - ${s.id} (${i.gold.sessions[k]?.label ?? "?"}): ${t(Format.clip(opening(s), 160))}`))
    out.push("", ...table(Tables.example(a, ex, e)))
  }
  return out
}

const everyMetric = "every metric of every cell and instance type, with its 95% CI and N, is in report.html (Appendix) and summary.json."

const appendix = (a: Analysis, v: Verdict.Verdict, examples: Examples, versions: Readonly<Record<string, string>>): Array<string> => {
  const board = Leaderboard.table(a, v)
  const others = a.compared.filter((m) => m.name !== a.main?.name)
  const perType = slices.filter((s) => s !== "all")
  return [
    "# Appendix",
    "",
    ...(v.boards[0] !== undefined && v.boards[0].contenders.length > Leaderboard.openingLimit ? ["## Leaderboard: every cell", "", ...table(board)] : []),
    ...cellsSection(a, versions),
    ...inferenceSection(a, perType),
    ...retrievalSection(a, perType),
    ...deltaSection(a, others, "Differences against the baseline: the other headline metrics"),
    ...pairwiseSection(a),
    ...examplesSection(a, examples),
    "## Every metric",
    "",
    a.summary.metrics.length === 0 ? "No metrics: the config lists no scorers." : `Every metric the scorers declared: ${everyMetric}`,
    ""
  ]
}

const verdictSection = (a: Analysis, v: Verdict.Verdict): Array<string> => {
  const board = Leaderboard.table(a, v, Leaderboard.openingLimit)
  const findings = v.findings.map((f) => `- ${Table.mdLine(f.sentence)}`)
  const leaderboard = v.metric === undefined ? [] : [...table(board), t(board.notes.join(" ")), ""]
  return ["## Verdict", "", Table.mdLine(Leaderboard.intro(a, v)), "", ...findings, ...(findings.length > 0 ? [""] : []), ...leaderboard]
}

const runSection = (a: Analysis): Array<string> => {
  const s = a.summary
  const d = s.dataset
  const out = ["## Run", ""]
  out.push(`- Config: \`${t(s.config.name)}\`, hash \`${t(s.config.hash)}\``)
  out.push(`- Data: \`${t(d.source)}\`, fingerprint \`${t(d.hash)}\`, ${d.instances} instances; ${d.skipped.length} rows skipped`)
  out.push(`- Cells: ${a.cells.length}; result lines: ${a.okPairs} scored, ${a.failedPairs} failed`)
  out.push(`- Baseline: ${t(a.baseline.name)} (${t(a.baselineReason)})`)
  if (a.main !== undefined) out.push(`- Main metric: ${t(Notes.metricLabel(a.main))} (${Notes.aggregateNote(a.main)}); ${t(a.mainReason)}`)
  const oracle = a.cells.filter((c) => c.summary.usesGold).map((c) => c.summary.name)
  out.push(`- Cells that read gold labels ${Notes.oracleMark}: ${oracle.length === 0 ? "none" : t(oracle.join(", "))}`)
  const heuristic = s.metrics.filter((m) => m.heuristic).map((m) => m.name)
  out.push(`- Metrics from heuristics ${Notes.heuristicMark} (not LLM judges): ${heuristic.length === 0 ? "none" : heuristic.join(", ")}`)
  out.push(`- Models called: ${a.models.length === 0 ? "none (every stage ran offline)" : a.models.map((m) => `\`${t(m.id)}\` (${Format.integer(m.calls)} calls answered by the model or the cache, ${Format.integer(m.promptTokens + m.completionTokens)} tokens)`).join(", ")}`)
  if (s.modelCalls !== undefined) out.push(`- ${Notes.modelCalls(s.modelCalls)}`)
  out.push("")
  out.push(...Notes.marks(a).map((m) => `${m}  `), "")
  return out
}

const cellsSection = (a: Analysis, versions: Readonly<Record<string, string>>): Array<string> => [
  "## Cells",
  "",
  ...table(Tables.cells(a)),
  ...(a.plugins.length > 0 ? ["## Plugins", "", ...table(Tables.plugins(a, versions))] : [])
]

/** `versions` (package -> version, from run.json) only fills the Plugins table. */
export const render = (a: Analysis, examples: Examples, versions: Readonly<Record<string, string>> = {}): string => {
  const v = Verdict.verdict(a)
  return [
    `# ${t(a.summary.config.name)}: sweep report`,
    "",
    ...verdictSection(a, v),
    ...runSection(a),
    ...deltaSection(a, a.main === undefined ? [] : [a.main], "Differences against the baseline"),
    ...ByAxis.markdown(a),
    ...inferenceSection(a, ["all"]),
    ...generationSection(a),
    ...repeatsSection(a),
    ...retrievalSection(a, ["all"]),
    ...binnedSection(a, a.recency, "Recency: relevant-session position"),
    ...binnedSection(a, a.history, "History length"),
    ...interventionSection(a),
    ...costSection(a),
    ...failuresSection(a),
    "## How the numbers were computed",
    "",
    ...Notes.statistics(a).flatMap((p) => [t(p), ""]),
    ...appendix(a, v, examples, versions)
  ].join("\n")
}
