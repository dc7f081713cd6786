/**
 * `report.html`: report.md's tables plus charts and the run record (run.json), as one self-contained
 * page (inline CSS and SVG; a Content-Security-Policy forbids scripts and external resources).
 *
 * @example
 * fs.writeFileSync("runs/x/report.html", Html.render(analysis, examples, info, yield* Figures.report(analysis)))
 */
import type { MetricDescription, Slice } from "../results/ResultLine.js"
import { slices } from "../results/ResultLine.js"
import type { Analysis } from "../analysis/Analysis.js"
import type { ReportFigures } from "./Figures.js"
import type { Binned } from "../analysis/Bins.js"
import { opening } from "../analysis/Examples.js"
import type { Examples } from "../analysis/Examples.js"
import * as Verdict from "../analysis/Verdict.js"
import * as ByAxis from "./ByAxis.js"
import * as Format from "./Format.js"
import * as Leaderboard from "./Leaderboard.js"
import * as Notes from "./Notes.js"
import * as Repeats from "./Repeats.js"
import type { RunInfo } from "../results/RunDir.js"
import * as Table from "./Table.js"
import * as Tables from "./Tables.js"

const e = Format.html

export const style = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, Helvetica, Arial, sans-serif; color: #1d1d1f; margin: 0; background: #fafafa; }
main { max-width: 1200px; margin: 0 auto; padding: 24px 32px 64px; background: #fff; }
h1 { font-size: 24px; margin: 0 0 12px; } h2 { font-size: 19px; margin: 32px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 20px 0 6px; } p.note, figcaption, .muted { color: #555; font-size: 13px; }
table { border-collapse: collapse; margin: 6px 0 14px; font-size: 13px; }
th, td { border: 1px solid #ddd; padding: 3px 8px; text-align: left; vertical-align: top; }
th { background: #f2f2f4; font-weight: 600; } td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
tr.baseline td { background: #f5f8ff; } tr.oracle td { color: #555; font-style: italic; }
td.sig { background: #eaf6ea; font-weight: 600; } td.best { font-weight: 700; } td .muted { font-weight: 400; font-size: 12px; } td:first-child { white-space: nowrap; } .scroll { overflow-x: auto; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 16px; margin: 8px 0; } dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; }
figure { margin: 12px 0 24px; overflow-x: auto; } figcaption { margin-top: 4px; max-width: 900px; }
details { margin: 8px 0; } summary { cursor: pointer; font-weight: 600; }
.example { border: 1px solid #e3e3e3; border-radius: 6px; padding: 8px 14px; margin: 10px 0; }
ul.verdict li { margin: 4px 0; }
.example ol { margin: 4px 0; padding-left: 22px; } .label-relevant { color: #1a7f37; font-weight: 600; } .label-stale { color: #b35900; }
code { font-size: 12px; background: #f3f3f3; padding: 0 3px; border-radius: 3px; }
`

const metaSection = (a: Analysis): string => {
  const s = a.summary
  const d = s.dataset
  const items: Array<readonly [string, string]> = [
    ["Config", `<code>${e(s.config.name)}</code>, hash <code>${e(s.config.hash)}</code>`],
    ["Data", `<code>${e(d.source)}</code>, fingerprint <code>${e(d.hash)}</code>, ${d.instances} instances, ${d.skipped.length} rows skipped`],
    ["Cells", `${a.cells.length}; result lines: ${a.okPairs} scored, ${a.failedPairs} failed`],
    ["Baseline", `${e(a.baseline.name)} (${e(a.baselineReason)})`],
    ["Main metric", a.main === undefined ? "none" : `${e(Notes.metricLabel(a.main))} (${e(Notes.aggregateNote(a.main))}); ${e(a.mainReason)}`],
    ["Oracle cells ‡", e(a.cells.filter((c) => c.summary.usesGold).map((c) => c.summary.name).join(", ") || "none")],
    ["Heuristic metrics †", e(s.metrics.filter((m) => m.heuristic).map((m) => m.name).join(", ") || "none")],
    ["Models called", a.models.length === 0 ? "none (every stage ran offline)" : a.models.map((m) => `<code>${e(m.id)}</code> ${Format.integer(m.calls)} calls, ${Format.integer(m.promptTokens + m.completionTokens)} tokens`).join("; ")],
    ...(s.modelCalls === undefined ? [] : [["Transcripts", e(Notes.modelCalls(s.modelCalls))] as const])
  ]
  const meta = `<dl class="meta">${items.map(([k, v]) => `<dt>${e(k)}</dt><dd>${v}</dd>`).join("")}</dl>`
  return `${meta}<p class="note">${Notes.marks(a).map(e).join("<br>")}</p>`
}

const runRecord = (info: RunInfo | undefined): string => {
  if (info === undefined) return `<h2 id="run-record">Run record</h2><p class="note">No run.json in the run directory.</p>`
  const { cache, modelCalls: calls, pairs: p, stageTimeMs, tokens, versions } = info
  const items: Array<readonly [string, string | undefined]> = [
    ["Started", info.startedAt],
    ["Ended", info.endedAt],
    ["Duration", info.durationMs === undefined ? undefined : `${(info.durationMs / 1000).toFixed(1)} s`],
    ["Interrupted", info.interrupted === undefined ? undefined : info.interrupted ? "yes (outputs cover the pairs done)" : "no"],
    ["Pairs", p && `${p.total ?? "?"} total; ${p.ran ?? "?"} run now, ${p.resumed ?? "?"} resumed from an earlier run, ${p.failed ?? "?"} failed`],
    ["Pairs per second", info.pairsPerSecond === undefined || info.pairsPerSecond === null ? undefined : info.pairsPerSecond.toFixed(2)],
    ["Model cache", cache && `${cache.hits ?? 0} hits, ${cache.misses ?? 0} misses, ${cache.writes ?? 0} writes`],
    ["Model calls this run", calls && `${calls.made ?? 0} made, ${calls.cached ?? 0} answered by the cache; ${calls.requestsSent ?? 0} HTTP requests sent, ${calls.retries ?? 0} of them retries`],
    ["Tokens this run", tokens && `${Format.integer(tokens.prompt ?? 0)} prompt, ${Format.integer(tokens.completion ?? 0)} completion`],
    ["Stage time (summed over pairs)", stageTimeMs && (Object.entries(stageTimeMs).map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`).join(", ") || "–")],
    ["Versions", versions && Object.entries(versions).map(([k, v]) => `${k} ${v}`).join(", ")]
  ]
  return `<h2 id="run-record">Run record</h2><p class="note">From run.json: how this run went (time, cache, versions). These figures change between reruns, so report.md leaves them out.</p>` +
    `<dl class="meta">${items.map(([k, v]) => (v === undefined ? "" : `<dt>${e(k)}</dt><dd>${e(v)}</dd>`)).join("")}</dl>`
}

const cellsSection = (a: Analysis, info: RunInfo | undefined): string => {
  const plugins = a.plugins.length === 0 ? "" : `<h3>Plugins</h3>${Table.html(Tables.plugins(a, info?.versions ?? {}))}`
  return `<h2 id="cells">Cells</h2>${Table.html(Tables.cells(a))}${plugins}`
}

const verdictSection = (a: Analysis, v: Verdict.Verdict): string => {
  const board = Leaderboard.table(a, v, Leaderboard.openingLimit)
  return `<h2 id="verdict">Verdict</h2><p class="note">${e(Leaderboard.intro(a, v))}</p>` +
    (v.findings.length === 0 ? "" : `<ul class="verdict">${v.findings.map((f) => `<li>${e(f.sentence)}</li>`).join("")}</ul>`) +
    (v.metric === undefined ? "" : `${Table.html(board)}<p class="note">${e(board.notes.join(" "))}</p>`)
}

const fold = (title: string, body: string): string => (body === "" ? "" : `<details><summary>${e(title)}</summary>${body}</details>`)

const inferenceSection = (a: Analysis, chosen: ReadonlyArray<Slice>): string => {
  if (a.inference.length === 0) return ""
  const micro = a.inference.some((m) => m.aggregate._tag !== "Mean")
  let out = `<h2 id="inference">Inference (preference match)</h2><p class="note">${e(micro
    ? "P / R / F1 are micro averages (counts pooled over instances, as the paper's headline numbers); macro F1 is the mean of per-instance F1."
    : "P / R / F1 are means of per-instance values (macro).")}${a.inference.some((m) => m.heuristic) ? e(` ${Notes.heuristicMark} computed by an offline heuristic, not the paper's LLM judge.`) : ""}</p>`
  for (const s of chosen) out += `<h3>${e(Notes.sliceTitle(s))}</h3>${Table.html(Tables.inference(a, s))}`
  return out
}

const estimateTable = (a: Analysis, m: MetricDescription) =>
  `<h3>${e(Notes.metricLabel(m))}</h3><p class="note">${e(Tables.metricNote(m))}</p>` + Table.html(Tables.estimates(a, m))

const repeatsSection = (a: Analysis): string => {
  const r = Repeats.table(a)
  return r === undefined ? "" : `<h2 id="repeats">Repeated judgments</h2><p class="note">${e(Repeats.note)}</p>${Table.html(r)}`
}

const retrievalSection = (a: Analysis, chosen: ReadonlyArray<Slice>): string => {
  if (a.retrieval.length === 0) return ""
  let out = `<h2 id="retrieval">Retrieval</h2><p class="note">Means over instances (↓ lower is better); the appendix gives each with its 95% CI.</p>`
  for (const s of chosen) out += `<h3>${e(Notes.sliceTitle(s))}</h3>${Table.html(Tables.retrieval(a, s))}`
  return out
}

const deltaSection = (a: Analysis, metrics: ReadonlyArray<MetricDescription>): string => {
  if (a.cells.length < 2 || metrics.length === 0) return ""
  let out = `<h2 id="differences">Differences against the baseline</h2><p class="note">${e(`Baseline: ${a.baseline.name}. Each entry: difference (cell − baseline) [paired bootstrap 95% CI], permutation p, the p adjusted within its family, paired instances n, (family); shaded and * when the adjusted p < 0.05. ${Notes.familiesNote(a)}`)}</p>`
  for (const [slice, small] of a.baselineTooSmall) out += `<p class="note">${e(Notes.tooSmallNote(slice, small.n, small.needed, small.tests, small.correction))}</p>`
  for (const m of metrics) out += `<h3>${e(Notes.metricLabel(m))}</h3>${Table.html(Tables.deltas(a, m))}`
  return out
}

const pairwiseSection = (a: Analysis): string => {
  const p = a.pairwise
  if (p === undefined) return ""
  let out = `<h2 id="pairwise">Every cell against every other</h2><p class="note">${e(Notes.pairwiseNote(p))}</p>`
  for (const s of p.slices) {
    out += `<h3>${e(Notes.sliceTitle(s.slice))}</h3>`
    if (s.tooSmall !== undefined) out += `<p class="note">${e(Notes.tooSmallNote(s.slice, s.tooSmall.n, s.tooSmall.needed, p.tests))}</p>`
    out += Table.html(Tables.pairwise(a, p, s))
  }
  return out
}

const binnedSection = (a: Analysis, b: Binned | undefined, chart: string, id: string, title: string): string =>
  b === undefined ? "" : `<h2 id="${id}">${e(title)}</h2>${chart}${Table.html(Tables.binned(a, b))}`

const interventionSection = (a: Analysis, charts: ReadonlyArray<string>): string => {
  if (a.interventions.length === 0) return ""
  const parts = [`<h2 id="transforms">History transforms</h2><p>${e("Each metric against a swept transform axis, per instance type: the same instances with their histories rewritten (docs/data.md, History transforms); relevance never changes.")}</p>`]
  for (const [i, curve] of a.interventions.entries()) {
    parts.push(`<h3>${e(`${curve.metric.name} against ${curve.axis}`)}</h3>`, charts[i] ?? "")
    parts.push(Table.html(Tables.transform(curve, "all")))
  }
  return parts.join("")
}

const costSection = (a: Analysis, chart: string): string =>
  `<h2 id="cost">Cost</h2><p class="note">Pipeline calls and tokens per result line (failed pairs included; cached calls count in full). Scoring calls are shown apart.</p>${chart}${Table.html(Tables.cost(a))}${Tables.unpriced(a) ? `<p class="note">${e(Notes.usdNote)}</p>` : ""}`

const failuresSection = (a: Analysis): string => {
  let out = ""
  if (a.failures.length > 0) {
    out += `<h2 id="failures">Failures</h2><p class="note">${a.failedPairs} failed pairs, grouped by stage, plugin and error; a rerun retries them.</p>${Table.html(Tables.failures(a))}`
  }
  const skipped = a.summary.dataset.skipped
  if (skipped.length > 0) {
    out += `<h2 id="skipped">Skipped dataset rows</h2><p class="note">${skipped.length} rows were skipped (onInvalid: skip) and are in no table.</p>${Table.html(Tables.skipped(a))}`
  }
  return out
}

const examplesSection = (a: Analysis, ex: Examples): string => {
  let out = `<h2 id="examples">Examples</h2>`
  if (ex.examples.length === 0) return `${out}<p class="note">No examples: ${e(ex.note ?? "none")}.</p>`
  out += `<p class="note">The first instance of each type: request, gold preference, prior sessions (gold label and opening user message) and each cell's selection and inference.</p>`
  for (const x of ex.examples) {
    const i = x.instance
    const sessions = i.query.sessions.map((s, k) => {
      const lab = i.gold.sessions[k]?.label ?? "other"
      return `<li><span class="label-${e(lab)}">${e(s.id)} ${e(lab)}</span>: ${e(Format.clip(opening(s), 220))}</li>`
    }).join("")
    out += `<div class="example"><h3>${e(x.id)} (${e(x.type)})</h3><p><b>Request:</b> ${e(Format.clip(i.query.request, 500))}</p><p><b>Gold preference:</b> ${e(i.gold.preference)}</p>` +
      `<details><summary>Prior sessions</summary><ol>${sessions}</ol></details>${Table.html(Tables.example(a, ex, x))}</div>`
  }
  return out
}

export const render = (a: Analysis, examples: Examples, info: RunInfo | undefined, figures: ReportFigures): string => {
  const title = `${a.summary.config.name}: sweep report`
  const v = Verdict.verdict(a)
  return [
    "<!DOCTYPE html>",
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    `<meta name="viewport" content="width=device-width, initial-scale=1">`,
    `<title>${e(title)}</title><style>${style}</style></head><body><main>`,
    `<h1>${e(title)}</h1>`,
    verdictSection(a, v),
    metaSection(a),
    figures.overview,
    deltaSection(a, a.main === undefined ? [] : [a.main]),
    ByAxis.html(a),
    inferenceSection(a, ["all"]),
    a.generation.length === 0 ? "" : `<h2 id="generation">Generation</h2>${a.generation.map((m) => estimateTable(a, m)).join("")}`,
    repeatsSection(a),
    retrievalSection(a, ["all"]),
    binnedSection(a, a.recency, figures.recency, "recency", "Recency: relevant-session position"),
    binnedSection(a, a.history, figures.history, "history", "History length"),
    interventionSection(a, figures.interventions),
    costSection(a, figures.cost),
    failuresSection(a),
    `<h2 id="statistics">How the numbers were computed</h2>${Notes.statistics(a).map((p) => `<p>${e(p)}</p>`).join("")}`,
    runRecord(info),
    `<h2 id="appendix">Appendix</h2>`,
    fold("Leaderboard: every cell", Table.html(Leaderboard.table(a, v))),
    fold("Cells and plugins", cellsSection(a, info)),
    fold("Inference by instance type", inferenceSection(a, slices.filter((s) => s !== "all"))),
    fold("Retrieval by instance type", retrievalSection(a, slices.filter((s) => s !== "all"))),
    fold("Differences against the baseline: the other headline metrics", deltaSection(a, a.compared.filter((m) => m.name !== a.main?.name))),
    fold("Every cell against every other", pairwiseSection(a)),
    fold("Examples", examplesSection(a, examples)),
    fold(`Every metric: ${a.summary.metrics.length} metrics, value [95% CI] n=N`, a.summary.metrics.map((m) => estimateTable(a, m)).join("")),
    "</main></body></html>",
    ""
  ].join("\n")
}
