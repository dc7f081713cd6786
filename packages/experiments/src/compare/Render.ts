/**
 * compare.md and compare.html for a {@link Compare.Comparison}: the two runs, how cells were
 * matched, and per compared metric a table of matched cells by slice with both values on the
 * shared instances, the difference (second run - first), its paired CI, p and Holm-adjusted p.
 *
 * @example
 * fs.writeFileSync("compare.md", Render.markdown(comparison))
 */
import { slices } from "../results/ResultLine.js"
import * as Format from "../render/Format.js"
import { style } from "../render/Html.js"
import * as Notes from "../render/Notes.js"
import * as Table from "../render/Table.js"
import * as Tables from "../render/Tables.js"
import type { Comparison, Match, Row } from "./Compare.js"

const runLine = (label: string, r: Comparison["a"]): string =>
  `${label}: ${r.dir} (config ${r.summary.config.name}, hash ${r.summary.config.hash}; data ${r.summary.dataset.source}, fingerprint ${r.summary.dataset.hash.slice(0, 16)}; ${r.summary.cells.length} cells)`

/** A matched pair's name (both names when they differ), marked when the cells read gold labels. */
export const matchLabel = (m: Match): string => (m.a.name === m.b.name ? m.a.name : `${m.a.name} / ${m.b.name}`) + (m.a.usesGold ? ` ${Notes.oracleMark}` : "")

const method = (c: Comparison): Array<string> => [
  `Pairs: each cell of the first run is matched to the cell of the second with the same id (same normalized parameters), else with the same name. Values are computed on the instances both cells scored ok (N = their count), so they can differ from each run's own report.`,
  `Statistics: difference = second - first; paired bootstrap 95% CI (${c.resamples} resamples, seed ${c.seed}); two-sided paired permutation p (${Notes.permutationsNote(c.permutations)}; micro metrics swap the two cells' per-instance counts, macro metrics flip signs of per-instance differences). Holm's correction over all ${c.tests} tests of this comparison (${c.matches.length} matched cells x ${c.metrics.length} metrics x 4 slices); * Holm < 0.05.`
]

/**
 * A table per compared metric: one row per matched cell, one column per slice, each entry first →
 * second: difference [95% CI], p, Holm-adjusted p and n (the reports' table model, so compare.md and
 * compare.html render it as report.md and report.html do).
 */
export const metricTables = (c: Comparison): Array<Table.Table> => {
  const rows = new Map(c.rows.map((r) => [`${r.match.a.id}\0${r.metric.name}\0${r.slice}`, r]))
  const entry = (r: Row | undefined): Table.Cell => Tables.deltaCell(r, r === undefined ? "" : `${Format.number(r.a.value)} → ${Format.number(r.b.value)}: `)
  return c.metrics.map((m) => ({
    id: `compare-${m.name}`,
    title: Notes.metricLabel(m),
    notes: [`${Notes.aggregateNote(m)}; entry: first → second: difference [95% CI] p Holm n.`],
    columns: [{ label: "cell", align: "left" }, ...slices.map((s): Table.Column => ({ label: s, align: "right" }))],
    rows: c.matches.map((match) => ({
      kinds: match.a.usesGold ? ["oracle"] : [],
      cells: [{ text: matchLabel(match) }, ...slices.map((s) => entry(rows.get(`${match.a.id}\0${m.name}\0${s}`)))]
    }))
  }))
}

const nothing = (c: Comparison): boolean => c.metrics.length === 0 || c.matches.length === 0
const nothingText = "Nothing to compare: no matched cells or no metric scored in both runs."

export const markdown = (c: Comparison): string => {
  const t = Format.md
  const out = [`# Comparison: ${t(c.a.summary.config.name)} vs ${t(c.b.summary.config.name)}`, ""]
  out.push(`- ${t(runLine("First", c.a))}`, `- ${t(runLine("Second", c.b))}`)
  const chosen = c.matches.filter((m) => m.by === "chosen").length
  out.push(`- Matched cells: ${c.matches.length} (${chosen > 0 ? `${chosen} chosen with --cell-a and --cell-b` : `${c.matches.filter((m) => m.by === "id").length} by id, ${c.matches.filter((m) => m.by === "name").length} by name`})`)
  out.push(`- Only in the first run: ${c.onlyA.length === 0 ? "none" : t(c.onlyA.map((x) => x.name).join(", "))}`)
  out.push(`- Only in the second run: ${c.onlyB.length === 0 ? "none" : t(c.onlyB.map((x) => x.name).join(", "))}`, "")
  if (c.warnings.length > 0) out.push("## Warnings", "", ...c.warnings.map((w) => `- ${t(w)}`), "")
  for (const table of c.matches.length === 0 ? [] : metricTables(c)) {
    out.push(`## ${t(table.title)}`, "", ...table.notes.map(t), "", Table.markdown(table), "")
  }
  if (nothing(c)) out.push(nothingText, "")
  out.push("## How the numbers were computed", "", ...method(c).flatMap((p) => [t(p), ""]))
  return out.join("\n")
}

/** compare.html, with its chart already rendered (Figures.compare; "" for none). */
export const html = (c: Comparison, chart: string): string => {
  const e = Format.html
  const title = `Comparison: ${c.a.summary.config.name} vs ${c.b.summary.config.name}`
  const parts: Array<string> = []
  parts.push(`<ul><li>${e(runLine("First", c.a))}</li><li>${e(runLine("Second", c.b))}</li>` +
    `<li>Matched cells: ${c.matches.length}; only in the first run: ${e(c.onlyA.map((x) => x.name).join(", ") || "none")}; only in the second: ${e(c.onlyB.map((x) => x.name).join(", ") || "none")}</li></ul>`)
  if (c.warnings.length > 0) parts.push(`<h2>Warnings</h2><ul>${c.warnings.map((w) => `<li>${e(w)}</li>`).join("")}</ul>`)
  parts.push(chart)
  for (const table of c.matches.length === 0 ? [] : metricTables(c)) {
    parts.push(`<h2>${e(table.title)}</h2>${table.notes.map((n) => `<p class="note">${e(n)}</p>`).join("")}${Table.html(table)}`)
  }
  if (nothing(c)) parts.push(`<p class="note">${nothingText}</p>`)
  parts.push(`<h2>How the numbers were computed</h2>${method(c).map((p) => `<p>${e(p)}</p>`).join("")}`)
  return [
    "<!DOCTYPE html>",
    `<html lang="en"><head><meta charset="utf-8">`,
    `<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">`,
    `<title>${e(title)}</title><style>${style}</style></head><body><main>`,
    `<h1>${e(title)}</h1>`,
    ...parts,
    "</main></body></html>",
    ""
  ].join("\n")
}
