/**
 * `<out>/report.md`: the run's tables in the paper's layout (inference P / R / F1 with an oracle
 * column, generation, retrieval, cost), differences against the baseline with paired statistics,
 * the recency and history-length analyses as tables, failures, examples and an appendix with every
 * metric. Rendered from an {@link Analysis} (summary.json + results.jsonl) and the dataset's
 * examples only: no wall-clock time or cache figures, so reruns give the same bytes (those live in
 * report.html, fed from run.json).
 *
 * @example
 * import * as Markdown from "@cupid-lab/experiments/report/Markdown"
 * fs.writeFileSync("runs/x/report.md", Markdown.render(analysis, examples, versions))
 */
import type { MetricDescription, MetricEstimate } from "../ResultLine.js"
import { slices } from "../ResultLine.js"
import type { Analysis, CellView, Delta } from "./Analysis.js"
import type { Binned } from "./Bins.js"
import { opening } from "./Examples.js"
import type { Examples } from "./Examples.js"
import * as Format from "./Format.js"
import * as Interventions from "./Interventions.js"
import * as Notes from "./Notes.js"

const t = Format.md

const table = (head: ReadonlyArray<string>, rows: ReadonlyArray<ReadonlyArray<string>>): Array<string> => [
  `| ${head.join(" | ")} |`,
  `|${head.map(() => "---").join("|")}|`,
  ...rows.map((r) => `| ${r.join(" | ")} |`),
  ""
]

const label = (a: Analysis, c: CellView): string => t(Notes.cellLabel(c.summary, a.baseline.id))

/** A value with its own n when it differs from the row's N. */
const valueWithN = (e: MetricEstimate | undefined, n: number): string => {
  if (e === undefined) return "–"
  const v = Format.number(e.mean)
  return e.n === n ? v : `${v} (n=${e.n})`
}

const inferenceSection = (a: Analysis): Array<string> => {
  if (a.inference.length === 0) return []
  const out = ["## Inference (preference match)", ""]
  const micro = a.inference.some((m) => m.aggregate._tag !== "Mean")
  out.push(
    micro
      ? "P / R / F1 are micro averages (counts pooled over instances, as the reference harness and the paper's headline numbers); macro F1 is the mean of per-instance F1."
      : "P / R / F1 are means of per-instance values (macro); the scorer reports no pooled counts.",
    ""
  )
  const heuristic = a.inference.filter((m) => m.heuristic)
  if (heuristic.length > 0) out.push(`${Notes.heuristicMark} ${heuristic.map((m) => m.name).join(", ")}: computed by an offline heuristic (lexical matching), not the paper's LLM judge.`, "")
  const f1 = a.inference[a.inference.length - 1]!
  const macroF1 = a.inferenceMacro.find((m) => m.name === "inference.f1")
  const hasOracle = a.cells.some((c) => c.oracle !== undefined)
  for (const s of slices) {
    out.push(`### ${Notes.sliceTitle(s)}`, "")
    const head = ["cell", "N", ...a.inference.map((m) => `${Notes.shortName(m.name)}${m === f1 ? " [95% CI]" : ""}${m.heuristic ? ` ${Notes.heuristicMark}` : ""}`)]
    if (macroF1 !== undefined) head.push(`macro F1${macroF1.heuristic ? ` ${Notes.heuristicMark}` : ""}`)
    if (hasOracle) head.push(`oracle F1 ${Notes.oracleMark}`)
    const rows = a.cells.map((c) => {
      const m = c.summary.slices[s].metrics
      const n = m[f1.name]?.n ?? 0
      const row = [label(a, c), String(n), ...a.inference.map((x) => (x === f1 ? Format.estimate(m[x.name]).replace(/ n=\d+$/, "") + (m[x.name]?.n === n ? "" : ` (n=${m[x.name]?.n ?? 0})`) : valueWithN(m[x.name], n)))]
      if (macroF1 !== undefined) row.push(valueWithN(m[macroF1.name], n))
      if (hasOracle) {
        const o = c.oracle?.slices[s].metrics[f1.name]
        row.push(o === undefined ? "–" : `${Format.number(o.mean)} (n=${o.n})`)
      }
      return row
    })
    out.push(...table(head, rows))
  }
  if (hasOracle) out.push(`Oracle F1: the F1 of the oracle cell ${Notes.oracleMark} that has the same summarizer, inferrer and generator as the row's cell.`, "")
  return out
}

const perSliceTable = (a: Analysis, metrics: ReadonlyArray<MetricDescription>): Array<string> =>
  metrics.flatMap((m) => [
    `### ${t(Notes.metricLabel(m))}`,
    "",
    `${t(m.description)} (${Notes.aggregateNote(m)}; ${m.direction} is better)`,
    "",
    ...table(["cell", ...slices], a.cells.map((c) => [label(a, c), ...slices.map((s) => Format.estimate(c.summary.slices[s].metrics[m.name]))]))
  ])

const generationSection = (a: Analysis): Array<string> =>
  a.generation.length === 0 ? [] : ["## Generation", "", "Each entry: value [95% CI] n=N.", "", ...perSliceTable(a, a.generation)]

const retrievalSection = (a: Analysis): Array<string> => {
  if (a.retrieval.length === 0) return []
  const out = ["## Retrieval", "", "Means over instances; the appendix gives every value with its 95% CI.", ""]
  for (const s of slices) {
    out.push(`### ${Notes.sliceTitle(s)}`, "")
    const head = ["cell", "N", ...a.retrieval.map((m) => `${t(Notes.shortName(m.name))}${m.direction === "higher" ? "" : " ↓"}`)]
    const rows = a.cells.map((c) => {
      const m = c.summary.slices[s].metrics
      const n = c.summary.slices[s].n
      return [label(a, c), String(n), ...a.retrieval.map((x) => valueWithN(m[x.name], n))]
    })
    out.push(...table(head, rows))
  }
  out.push("↓ lower is better. N: instances scored; a value with its own n is defined on fewer instances (e.g. precision of an empty selection).", "")
  return out
}

export const formatDelta = (d: Delta | undefined): string => {
  if (d === undefined || d.comparison.n === 0) return "– n=0"
  const c = d.comparison
  if (!Number.isFinite(c.p)) return `${Format.signed(c.delta)} n=${c.n}`
  const star = d.pHolm < 0.05 ? " *" : ""
  return `${Format.signed(c.delta)} [${Format.signed(c.ci95[0])}, ${Format.signed(c.ci95[1])}] p=${Format.p(c.p)} Holm=${Format.p(d.pHolm)} n=${c.n}${star}`
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
  const byKey = new Map(a.deltas.map((d) => [`${d.cell}\0${d.metric}\0${d.slice}`, d]))
  for (const m of a.compared) {
    out.push(`### ${t(Notes.metricLabel(m))}`, "")
    const rows = a.cells.filter((c) => c.summary.id !== a.baseline.id).map((c) => [
      label(a, c),
      ...slices.map((s) => formatDelta(byKey.get(`${c.summary.id}\0${m.name}\0${s}`)))
    ])
    out.push(...table(["cell", ...slices], rows))
  }
  return out
}

const pairwiseSection = (a: Analysis): Array<string> => {
  const p = a.pairwise
  if (p === undefined) return []
  const out = ["## Every cell against every other", "", t(Notes.pairwiseNote(p)), ""]
  for (const s of p.slices) {
    out.push(`### ${t(Notes.sliceTitle(s.slice))}`, "")
    if (s.tooSmall !== undefined) out.push(`> ${t(Notes.tooSmallNote(s.slice, s.tooSmall.n, s.tooSmall.needed, p.tests))}`, "")
    const rows = p.cells.map((c, k) => [
      String(k + 1),
      t(Notes.cellLabel(c, a.baseline.id)),
      ...p.metrics.map((m) => {
        const beaten = s.beats.get(m.name)?.get(c.id) ?? []
        const v = Format.number(c.slices[s.slice].metrics[m.name]?.mean)
        return beaten.length > 0 ? `${v} <sup>${beaten.join(",")}</sup>` : v
      })
    ])
    out.push(...table(["#", "cell", ...p.metrics.map((m) => t(Notes.metricLabel(m)))], rows))
  }
  return out
}

const binnedSection = (a: Analysis, b: Binned | undefined, title: string): Array<string> => {
  if (b === undefined) return []
  const head = ["cell", ...b.bins.map((x) => `${x.label} (${x.instances} inst.)`)]
  const rows = a.cells.map((c) => [label(a, c), ...b.bins.map((x) => {
    const v = x.values.get(c.summary.id)
    return v === undefined || v.n === 0 ? "– n=0" : `${Format.number(v.value)} n=${v.n}`
  })])
  return [`## ${title}`, "", `${t(Notes.binHeader(b))}; ${Notes.aggregateNote(b.metric)} within each bin.`, "", ...table(head, rows)]
}

/** Tables of the transform curves: one per axis, metric and slice; value [95% CI] n per point. */
const interventionSection = (a: Analysis): Array<string> => {
  if (a.interventions.length === 0) return []
  const out = ["## History transforms", "", t("Each metric against a swept transform axis, per instance type: the same instances with their histories rewritten (docs/data.md, History transforms); relevance never changes. value [95% CI] n=N.")]
  for (const curve of a.interventions) {
    for (const slice of slices) {
      out.push("", `### ${curve.metric.name} against ${curve.axis}, ${slice}`, "")
      const rows = curve.series.map((s) => [
        t(s.label),
        ...s.cells.map((c) => {
          const est = Interventions.point(c, slice, curve.metric.name)
          return est === undefined ? "–" : `${Format.estimate(est)}`
        })
      ])
      out.push(...table([`cell / ${curve.axis}`, ...curve.categories], rows))
    }
  }
  return out
}

const costSection = (a: Analysis): Array<string> => {
  const usd = a.summary.metrics.find((m) => m.name === "cost.usd")
  const head = ["cell", "pairs", "calls / inst.", "prompt tok. / inst.", "completion tok. / inst.", "total tokens", "scoring calls", ...(usd ? ["usd / inst. (n)"] : [])]
  const rows = a.cost.map((r, i) => {
    const c = a.cells[i]!
    const per = (x: number) => (r.pairs === 0 ? "–" : Format.number(x / r.pairs))
    const u = c.summary.slices.all.metrics["cost.usd"]
    return [
      label(a, c),
      String(r.pairs),
      per(r.calls),
      per(r.promptTokens),
      per(r.completionTokens),
      Format.integer(r.promptTokens + r.completionTokens),
      Format.integer(r.scoringCalls),
      ...(usd ? [u === undefined || u.mean === null ? `– (n=${u?.n ?? 0})` : `${u.mean.toFixed(4)} (n=${u.n})`] : [])
    ]
  })
  return [
    "## Cost",
    "",
    "Model calls and tokens of the pipeline stages per result line (failed pairs included: their calls were made); cached calls count in full, since they describe the method. Scoring calls (LLM judges) are shown apart and are not part of a method's cost.",
    "",
    ...table(head, rows),
    ...(usd !== undefined && a.cells.some((c) => (c.summary.slices.all.metrics["cost.usd"]?.n ?? 0) < c.summary.slices.all.n) ? [t(Notes.usdNote), ""] : [])
  ]
}

const failuresSection = (a: Analysis): Array<string> => {
  const out: Array<string> = []
  if (a.failures.length > 0) {
    out.push("## Failures", "", `${a.failedPairs} failed pairs, grouped by stage, plugin and error; a rerun of the sweep retries them.`, "")
    out.push(...table(
      ["stage", "plugin", "error", "count", "cells", "first examples"],
      a.failures.map((f) => [
        t(f.stage),
        t(f.plugin),
        t(f.tag),
        String(f.count),
        t(f.cells.join(", ")),
        f.examples.map((e) => `${t(e.cell)} · ${t(e.instance)}: ${t(Format.clip(e.message, 200))}`).join("<br>")
      ])
    ))
  }
  const skipped = a.summary.dataset.skipped
  if (skipped.length > 0) {
    out.push("## Skipped dataset rows", "", `${skipped.length} rows of the dataset were skipped (onInvalid: skip) and are in no table.`, "")
    out.push(...table(["row", "reason"], skipped.slice(0, 50).map((s) => [t(s.row), t(Format.clip(s.reason, 300))])))
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
    out.push("", ...table(
      ["cell", "selected", "inferred preference", ex.metric ?? "score"],
      e.cells.map((c) => {
        const cell = a.cells.find((x) => x.summary.id === c.cell)!
        return [
          label(a, cell),
          c.selected === null ? "–" : c.selected.join(" "),
          c.status === "failed" ? `failed: ${t(Format.clip(c.error ?? "", 200))}` : t(Format.clip(c.preference ?? "–", 300)),
          Format.number(c.value)
        ]
      })
    ))
  }
  return out
}

const appendix = (a: Analysis): Array<string> => {
  const out = ["## Appendix: every metric", "", "Each entry: value [95% CI] n=N, from summary.json.", ""]
  for (const m of a.summary.metrics) {
    out.push(`### ${t(Notes.metricLabel(m))}`, "", `${t(m.description)} (${Notes.aggregateNote(m)}; ${m.direction} is better)`, "")
    out.push(...table(["cell", ...slices], a.cells.map((c) => [label(a, c), ...slices.map((s) => Format.estimate(c.summary.slices[s].metrics[m.name]))])))
  }
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
  out.push(`- Models called: ${a.models.length === 0 ? "none (every stage ran offline)" : a.models.map((m) => `\`${t(m.id)}\` (${Format.integer(m.calls)} calls, ${Format.integer(m.promptTokens + m.completionTokens)} tokens)`).join(", ")}`)
  out.push("")
  out.push(...Notes.marks(a).map((m) => `${m}  `), "")
  out.push("## Cells", "")
  out.push(...table(
    ["#", "cell", "id", "retriever / summarizer / inferrer / generator", "scored", "failed", "heuristic stages"],
    a.cells.map((c, i) => [
      String(i + 1),
      label(a, c),
      `\`${t(c.summary.id)}\``,
      t(Notes.stages(c.summary)),
      String(c.summary.slices.all.n),
      String(c.summary.slices.all.failed),
      t((c.summary.heuristicStages ?? []).join(", ")) || "–"
    ])
  ))
  if (a.plugins.length > 0) {
    out.push("## Plugins", "")
    out.push(...table(["stage", "plugin", "package", "cells"], a.plugins.map((p) => [
      p.stage,
      t(p.name),
      p.package === undefined ? "config module" : `${p.package}${versions[p.package] !== undefined ? ` ${t(versions[p.package]!)}` : ""}`,
      String(p.cells)
    ])))
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
