/**
 * compare.md and compare.html for a {@link Compare.Comparison}, as one {@link Document.Document}: the two
 * runs, how cells were matched, and per compared metric a table of matched cells by slice with both
 * values on the shared instances, the difference (second run - first), its paired CI, p and Holm-adjusted p.
 *
 * @example
 * fs.writeFileSync("compare.md", Markdown.render(Render.document(comparison)))
 */
import { type CellSummary, slices } from "../results/ResultLine.js"
import * as Document from "../render/Document.js"
import * as Format from "../render/Format.js"
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

const names = (cells: ReadonlyArray<CellSummary>): string => (cells.length === 0 ? "none" : cells.map((x) => x.name).join(", "))

/** compare.md and compare.html (Markdown.render, Html.render); `chart` (Figures.compare) is shown in compare.html only. */
export const document = (c: Comparison, chart = ""): Document.Document => {
  const count = (by: Match["by"]) => c.matches.filter((m) => m.by === by).length
  const matched = count("chosen") > 0 ? `${count("chosen")} chosen with --cell-a and --cell-b` : `${count("id")} by id, ${count("name")} by name`
  return {
    title: `Comparison: ${c.a.summary.config.name} vs ${c.b.summary.config.name}`,
    blocks: [
      Document.list([
        [runLine("First", c.a)],
        [runLine("Second", c.b)],
        [`Matched cells: ${c.matches.length} (${matched})`],
        [`Only in the first run: ${names(c.onlyA)}`],
        [`Only in the second run: ${names(c.onlyB)}`]
      ]),
      ...(c.warnings.length === 0 ? [] : [Document.section("Warnings", [Document.list(c.warnings.map((w) => [w]))])]),
      { _tag: "html", html: chart },
      ...(c.matches.length === 0 ? [] : metricTables(c)).map((t) => Document.section(t.title, [...t.notes.map((n) => Document.p(n)), Document.table(t)])),
      ...(c.metrics.length === 0 || c.matches.length === 0 ? [Document.p("Nothing to compare: no matched cells or no metric scored in both runs.")] : []),
      Document.section("How the numbers were computed", method(c).map((x) => Document.p(x)))
    ]
  }
}
