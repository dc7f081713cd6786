/**
 * `benchmarks.md`: the runs of one grid over several data sources (`sweep: { data.source: [...] }`)
 * side by side, each cell's main metric per source and instance type; never averaged across sources.
 *
 * @example
 * const { file, text } = yield* Benchmarks.write("runs/contextual", [{ source: "sample", dir, summary }])
 */
import type { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as path from "node:path"
import { mainMetric } from "./Analysis.js"
import { Errors, ResultLine, RunDir } from "@cupid-lab/results"

import * as Format from "./Format.js"
import * as Slices from "./Slices.js"

export const fileName = "benchmarks.md"

export interface SourceRun {
  readonly source: string
  readonly dir: string
  readonly summary: ResultLine.Summary
}

/** The folder of the `index`-th source: its position and its name, made safe for a path. */
export const folderOf = (source: string, index: number): string =>
  `${index + 1}-${
    source
      .replace(/[^A-Za-z0-9._=-]+/g, "_")
      .replace(/^[_.]+|_+$/g, "")
      .slice(0, 80) || "source"
  }`

/** The main metric of a run: the config's `report.main`, else the one its analysis would choose. */
const mainOf = (summary: ResultLine.Summary) => {
  const name = summary.main ?? mainMetric(summary).main?.name
  return summary.metrics.find((m) => m.name === name)
}

const cellText = Format.md

/** The side-by-side table in Markdown: a row per cell (by name, in the first source's order), the sources' columns in config order. */
export const render = (runs: ReadonlyArray<SourceRun>): string => {
  const names: Array<string> = []
  for (const r of runs) for (const c of r.summary.cells) if (!names.includes(c.name)) names.push(c.name)
  const head: Array<string> = ["cell"]
  const columns: Array<(cell: string) => string> = []
  const legend: Array<string> = []
  runs.forEach((r, i) => {
    const main = mainOf(r.summary)
    const label = `${i + 1}`
    legend.push(
      `${label}. \`${cellText(r.source)}\`: ${r.summary.dataset.instances} instances, main metric ${main === undefined ? "none" : `${main.name} (${main.direction === "lower" ? "lower" : "higher"} is better)`}; run directory \`${cellText(r.dir)}\``
    )
    const find = (cell: string) => r.summary.cells.find((c) => c.name === cell)
    // The source's own types in its benchmark's order (CUPID's, LongMemEval's question types, LoCoMo's categories, ...).
    const typed: ReadonlyArray<{
      readonly name: string
      readonly of: (c: ResultLine.CellSummary) => ResultLine.SliceSummary | undefined
    }> = Slices.of(r.summary)
      .filter((s) => s !== "all")
      .map((s) => ({ name: s, of: (c: ResultLine.CellSummary) => Slices.get(c, s) }))
    head.push(
      `${label}: ${main?.name ?? "main"} [95% CI]`,
      `${label}: N`,
      ...typed.map((t) => `${label}: ${cellText(t.name)} (n)`)
    )
    const value = (cell: string, t: (typeof typed)[number]) => {
      const c = find(cell)
      const s = c === undefined ? undefined : t.of(c)
      const e = main === undefined ? undefined : s?.metrics[main.name]
      return s === undefined
        ? "–"
        : `${e === undefined || e.mean === null ? "–" : Format.number(e.mean)} (${e?.n ?? 0})`
    }
    columns.push((cell) => {
      const c = find(cell)
      const e = main === undefined ? undefined : c?.slices.all.metrics[main.name]
      return c === undefined || e === undefined || e.mean === null ? "–" : Format.withCi(e)
    })
    columns.push((cell) => {
      const c = find(cell)
      const e = main === undefined ? undefined : c?.slices.all.metrics[main.name]
      return c === undefined ? "–" : String(e?.n ?? 0)
    })
    for (const s of typed) columns.push((cell) => value(cell, s))
  })
  const gold = new Set(runs.flatMap((r) => r.summary.cells.filter((c) => c.usesGold).map((c) => c.name)))
  return [
    "# Benchmarks side by side",
    "",
    "Each data source is its own run; values of different sources are never averaged. Per source: the main metric on all instances with its 95% CI and N, then its instance types; N and n count the instances the main metric has a value for (fewer than the instances scored where it is undefined, e.g. retrieval metrics on questions without evidence).",
    "",
    ...legend,
    "",
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...names.map((n) => `| ${cellText(n)}${gold.has(n) ? " ‡" : ""} | ${columns.map((f) => f(n)).join(" | ")} |`),
    "",
    ...(gold.size > 0 ? ["‡ the cell reads gold labels (an upper bound, not a method).", ""] : [])
  ].join("\n")
}

export const write = (
  dir: string,
  runs: ReadonlyArray<SourceRun>
): Effect.Effect<{ readonly file: string; readonly text: string }, Errors.RunError, FileSystem.FileSystem> => {
  const file = path.join(dir, fileName)
  const text = render(runs)
  return Effect.as(RunDir.write(file, text), { file, text })
}
