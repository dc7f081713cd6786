/**
 * `<out>/report.md`, rendered from summary.json alone (so `report --run <dir>` can regenerate it):
 * a header naming the config, data and counts, a table of cells, then one section per metric
 * family (retrieval, inference, generation, cost) with a table per metric: cells as rows, slices
 * as columns, each entry `value [95% CI] n=N`.
 *
 * @example
 * import { Markdown } from "@cupid-lab/experiments/report/Markdown"
 * fs.writeFileSync("runs/x/report.md", Markdown.render(summary))
 */
import type { CellSummary, MetricDescription, MetricEstimate, Summary } from "../ResultLine.js"
import { slices } from "../ResultLine.js"

const families = ["retrieval", "inference", "generation", "cost"] as const
const familyTitle: Record<string, string> = {
  retrieval: "Retrieval",
  inference: "Inference (preference match)",
  generation: "Generation",
  cost: "Cost"
}

/** Fixed formatting so reports are byte-identical across reruns. */
export const formatNumber = (x: number | null): string => {
  if (x === null) return "–"
  const a = Math.abs(x)
  return a >= 1000 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(3)
}

export const formatEstimate = (e: MetricEstimate | undefined): string => {
  if (e === undefined || e.n === 0 || e.mean === null) return `– n=${e?.n ?? 0}`
  return `${formatNumber(e.mean)} [${formatNumber(e.ci95[0])}, ${formatNumber(e.ci95[1])}] n=${e.n}`
}

const escape = (text: string): string => text.replace(/\|/g, "\\|").replace(/\n/g, " ")

const aggregateNote = (m: MetricDescription): string =>
  m.aggregate === "mean"
    ? "mean over instances"
    : m.aggregate === "pooled"
    ? "pooled over instances (micro average)"
    : `micro F1 of ${m.aggregate.f1Of[0]} and ${m.aggregate.f1Of[1]}`

const cellLabel = (c: CellSummary, baseline: string | undefined): string =>
  `${escape(c.name)}${c.usesGold ? " ‡" : ""}${c.id === baseline ? " (baseline)" : ""}`

const familyOf = (name: string): string => name.split(".")[0] ?? name

export const render = (summary: Summary): string => {
  const out: Array<string> = []
  const { config, dataset, cells } = summary
  const failed = cells.reduce((n, c) => n + c.slices.all.failed, 0)
  const heuristicInference = cells.some((c) => (c.heuristicStages ?? []).length > 0)
  out.push(`# ${config.name}: sweep report`, "")
  out.push(`- Config: \`${config.name}\`, hash \`${config.hash}\``)
  out.push(`- Data: \`${dataset.source}\`, fingerprint \`${dataset.hash}\`, ${dataset.instances} instances`)
  out.push(`- Skipped rows: ${dataset.skipped.length}${dataset.skipped.length > 0 ? " (listed at the end)" : ""}`)
  out.push(`- Cells: ${cells.length}; failed pairs: ${failed}${failed > 0 ? " (status \"failed\" in results.jsonl; a rerun retries them)" : ""}`)
  out.push(`- Intervals: 95% percentile bootstrap over instances, ${summary.resamples ?? 1000} resamples, seed ${summary.seed}`)
  out.push("")
  out.push("Marks: † computed by a heuristic, not the paper's LLM procedure; ‡ the cell reads gold labels (oracle), an upper bound rather than a method.")
  if (heuristicInference) out.push("Cells whose stages are heuristic (no model) list them in the table below; their inference scores measure the heuristic.")
  out.push("")

  out.push("## Cells", "")
  out.push("| # | cell | id | scored | failed | heuristic stages |")
  out.push("|---|---|---|---|---|---|")
  cells.forEach((c, i) => {
    out.push(`| ${i + 1} | ${cellLabel(c, summary.baseline)} | \`${c.id}\` | ${c.slices.all.n} | ${c.slices.all.failed} | ${(c.heuristicStages ?? []).join(", ") || "–"} |`)
  })
  out.push("")

  const byFamily = new Map<string, Array<MetricDescription>>()
  for (const m of summary.metrics) {
    const f = familyOf(m.name)
    byFamily.set(f, [...(byFamily.get(f) ?? []), m])
  }
  const order = [...families.filter((f) => byFamily.has(f)), ...[...byFamily.keys()].filter((f) => !(families as ReadonlyArray<string>).includes(f)).sort()]
  for (const family of order) {
    out.push(`## ${familyTitle[family] ?? family}`, "")
    for (const m of byFamily.get(family)!) {
      out.push(`### ${m.name}${m.heuristic ? " †" : ""}`, "")
      const direction = m.higherIsBetter ? "higher is better" : "lower is better"
      out.push(`${m.description ? `${escape(m.description)} ` : ""}(${aggregateNote(m)}; ${direction})`, "")
      out.push(`| cell | ${slices.join(" | ")} |`)
      out.push(`|---|${slices.map(() => "---").join("|")}|`)
      for (const c of cells) {
        out.push(`| ${cellLabel(c, summary.baseline)} | ${slices.map((s) => formatEstimate(c.slices[s].metrics[m.name])).join(" | ")} |`)
      }
      out.push("")
    }
  }
  if (summary.metrics.length === 0) out.push("No metrics: the config lists no scorers.", "")

  if (dataset.skipped.length > 0) {
    out.push("## Skipped rows", "")
    for (const s of dataset.skipped) out.push(`- ${escape(s.row)}: ${escape(s.reason)}`)
    out.push("")
  }
  return out.join("\n")
}
