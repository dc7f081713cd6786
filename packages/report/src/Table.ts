/**
 * A report table as a plain value (text and numbers, never markup, so it can also go as JSON to the
 * viewer), rendered to Markdown, HTML and LaTeX; each renderer escapes every text for its format.
 *
 * @example
 * const t: Table.Table = { id: "demo", title: "Recall", notes: [], columns: [{ label: "recall", align: "right" }],
 *   rows: [{ kinds: ["baseline"], cells: [{ text: "0.500", value: 0.5, best: true }] }] }
 * Table.markdown(t) // "| recall |\n|---|\n| **0.500** |"
 */
import { Schema } from "effect"
import { Exports } from "@cupid-lab/results"
import * as Format from "./Format.js"

/** Symbols after a text: † computed by a heuristic, ‡ reads gold labels, ↓ lower is better. */
export const Mark = Schema.Literal("†", "‡", "↓")
export type Mark = typeof Mark.Type

/** What a row stands for beyond its cells: the baseline, a cell that reads gold labels. */
export const RowKind = Schema.Literal("baseline", "oracle")
export type RowKind = typeof RowKind.Type

export const Column = Schema.Struct({
  label: Schema.String,
  align: Schema.Literal("left", "right"),
  marks: Schema.optionalWith(Schema.Array(Mark), { exact: true }),
  /** A heading over the consecutive columns of the same group. */
  group: Schema.optionalWith(Schema.String, { exact: true })
})
export type Column = typeof Column.Type

export const Cell = Schema.Struct({
  /** A newline starts a new line. */
  text: Schema.String,
  /** The number the text shows, for sorting or plotting; null where the cell has none. Absent on text cells. */
  value: Schema.optionalWith(Schema.NullOr(Schema.Number), { exact: true }),
  /** Secondary figures (p-values, n): after the text in Markdown and LaTeX, a muted line in HTML. */
  detail: Schema.optionalWith(Schema.String, { exact: true }),
  best: Schema.optionalWith(Schema.Boolean, { exact: true }),
  /** Marked * (and shaded in HTML). */
  significant: Schema.optionalWith(Schema.Boolean, { exact: true }),
  /** The numbers of the cells it beats. */
  superscripts: Schema.optionalWith(Schema.Array(Schema.String), { exact: true }),
  marks: Schema.optionalWith(Schema.Array(Mark), { exact: true }),
  code: Schema.optionalWith(Schema.Boolean, { exact: true }),
  /** Shown on hover in HTML. */
  tooltip: Schema.optionalWith(Schema.String, { exact: true })
})
export type Cell = typeof Cell.Type

export const Row = Schema.Struct({
  kinds: Schema.Array(RowKind),
  cells: Schema.Array(Cell)
})
export type Row = typeof Row.Type

export const Table = Schema.Struct({
  /** Unique within a report; the LaTeX label is `tab:<id>`. */
  id: Schema.String,
  title: Schema.String,
  notes: Schema.Array(Schema.String),
  columns: Schema.Array(Column),
  rows: Schema.Array(Row)
})
export type Table = typeof Table.Type

/** Consecutive columns that share a group. */
const groupRuns = (
  columns: ReadonlyArray<Column>
): Array<{ readonly group: string | undefined; readonly from: number; readonly span: number }> => {
  const runs: Array<{ group: string | undefined; from: number; span: number }> = []
  columns.forEach((c, i) => {
    const last = runs[runs.length - 1]
    if (last !== undefined && c.group !== undefined && last.group === c.group) last.span++
    else runs.push({ group: c.group, from: i, span: 1 })
  })
  return runs
}

const grouped = (t: Table): boolean => t.columns.some((c) => c.group !== undefined)

/**
 * {@link Format.md}, except that brackets stay where they cannot make a link (`]` then `(` or `[`):
 * an interval reads `[0.1, 0.2]`, while `[click](javascript:...)` becomes `\[click\](javascript:...)`.
 */
export const mdLine = (text: string): string => {
  const escaped = Format.md(text)
  // Format.md doubles backslashes before escaping brackets: undo a bracket's escape, never a backslash's.
  return /\]\s*[([]/.test(text) ? escaped : escaped.replace(/\\([\\[\]])/g, (m, c: string) => (c === "\\" ? m : c))
}

const mdText = (text: string): string => text.split("\n").map(mdLine).join("<br>")

const markSuffix = (marks: ReadonlyArray<Mark> | undefined): string => (marks ?? []).map((m) => ` ${m}`).join("")

const mdCell = (c: Cell): string => {
  const text = c.code === true ? `\`${mdText(c.text)}\`` : mdText(c.text)
  return (
    (c.best === true ? `**${text}**` : text) +
    markSuffix(c.marks) +
    (c.superscripts !== undefined && c.superscripts.length > 0
      ? ` <sup>${mdLine(c.superscripts.join(","))}</sup>`
      : "") +
    (c.detail !== undefined ? ` ${mdText(c.detail)}` : "") +
    (c.significant === true ? " *" : "")
  )
}

/** A pipe table; a column's group prefixes its label. */
export const markdown = (t: Table): string => {
  const head = t.columns.map(
    (c) => mdText(c.group === undefined ? c.label : `${c.group} ${c.label}`) + markSuffix(c.marks)
  )
  return [
    `| ${head.join(" | ")} |`,
    `|${head.map(() => "---").join("|")}|`,
    ...t.rows.map((r) => `| ${r.cells.map(mdCell).join(" | ")} |`)
  ].join("\n")
}

const e = Format.html

const htmlText = (text: string): string =>
  text
    .split("\n")
    .map((line) => e(Exports.visibleControls(line)))
    .join("<br>")

const htmlCell = (column: Column | undefined, c: Cell): string => {
  const classes = [
    column?.align === "right" ? "num" : "",
    c.best === true ? "best" : "",
    c.significant === true ? "sig" : ""
  ].filter((x) => x !== "")
  const attributes =
    (classes.length > 0 ? ` class="${classes.join(" ")}"` : "") +
    (c.tooltip !== undefined ? ` title="${e(c.tooltip)}"` : "")
  const text = c.code === true ? `<code>${htmlText(c.text)}</code>` : htmlText(c.text)
  return (
    `<td${attributes}>${text}${markSuffix(c.marks)}` +
    (c.superscripts !== undefined && c.superscripts.length > 0 ? `<sup>${e(c.superscripts.join(","))}</sup>` : "") +
    (c.significant === true ? " *" : "") +
    (c.detail !== undefined ? `<div class="muted">${htmlText(c.detail)}</div>` : "") +
    "</td>"
  )
}

const htmlHead = (t: Table): string => {
  const label = (c: Column) => `${htmlText(c.label)}${markSuffix(c.marks)}`
  if (!grouped(t)) return `<tr>${t.columns.map((c) => `<th>${label(c)}</th>`).join("")}</tr>`
  const runs = groupRuns(t.columns)
  const top = runs.map((r) =>
    r.group === undefined
      ? `<th rowspan="2">${label(t.columns[r.from]!)}</th>`
      : `<th${r.span > 1 ? ` colspan="${r.span}"` : ""}>${htmlText(r.group)}</th>`
  )
  const below = t.columns.filter((c) => c.group !== undefined).map((c) => `<th>${label(c)}</th>`)
  return `<tr>${top.join("")}</tr><tr>${below.join("")}</tr>`
}

/** A `<table>` in a horizontally scrolling block; rows carry their kinds as classes. */
export const html = (t: Table): string =>
  `<div class="scroll"><table><thead>${htmlHead(t)}</thead><tbody>${t.rows
    .map(
      (r) =>
        `<tr${r.kinds.length > 0 ? ` class="${r.kinds.join(" ")}"` : ""}>${r.cells.map((c, i) => htmlCell(t.columns[i], c)).join("")}</tr>`
    )
    .join("")}</tbody></table></div>`

const latexSymbol: ReadonlyMap<string, string> = new Map([
  ["\\", "\\textbackslash{}"],
  ["~", "\\textasciitilde{}"],
  ["^", "\\textasciicircum{}"],
  // outside the T1 font encoding these print as other glyphs
  ["|", "\\textbar{}"],
  ["<", "\\textless{}"],
  [">", "\\textgreater{}"]
])

/** Text for LaTeX's text mode: special characters escaped, controls as spaces, bidi controls dropped. */
export const latexEscape = (text: string): string =>
  text
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f]/g, " ")
    .replace(/[\u200E\u200F\u202A-\u202E\u2066-\u2069]/g, "")
    .replace(/[\\{}&%$#_~^|<>]/g, (c) => latexSymbol.get(c) ?? `\\${c}`)

const latexMark: ReadonlyMap<string, string> = new Map([
  ["†", "$^\\dagger$"],
  ["‡", "$^\\ddagger$"],
  ["↓", "$\\downarrow$"]
])

const latexText = (text: string): string => latexEscape(text).replace(/[†‡↓]/g, (m) => latexMark.get(m) ?? m)

const latexMarks = (marks: ReadonlyArray<Mark> | undefined): string =>
  (marks ?? []).map((m) => latexMark.get(m) ?? m).join("")

/** A row follows `\\` or a rule, which would read a leading `[` as an optional argument. */
const guarded = (latex: string): string => (latex.startsWith("[") ? `{}${latex}` : latex)

const latexCell = (c: Cell): string => {
  const text = c.code === true ? `\\texttt{${latexText(c.text)}}` : guarded(latexText(c.text))
  return (
    (c.best === true ? `\\textbf{${text}}` : text) +
    latexMarks(c.marks) +
    (c.superscripts !== undefined && c.superscripts.length > 0 ? `$^{${latexText(c.superscripts.join(","))}}$` : "") +
    (c.significant === true ? "$^{*}$" : "") +
    (c.detail !== undefined ? ` ${latexText(c.detail)}` : "")
  )
}

/** A floating `table` with a booktabs `tabular`; the caption is the title followed by the notes. */
export const latex = (t: Table): string => {
  const spec = t.columns.map((c) => (c.align === "right" ? "r" : "l")).join("")
  const runs = groupRuns(t.columns)
  const head = grouped(t)
    ? [
        `${runs.map((r) => (r.group === undefined ? "" : r.span > 1 ? `\\multicolumn{${r.span}}{c}{${latexText(r.group)}}` : guarded(latexText(r.group)))).join(" & ")} \\\\`,
        runs
          .filter((r) => r.group !== undefined && r.span > 1)
          .map((r) => `\\cmidrule(lr){${r.from + 1}-${r.from + r.span}}`)
          .join("")
      ].filter((line) => line !== "")
    : []
  return [
    "\\begin{table}[t]",
    "\\centering",
    "\\small",
    "\\setlength{\\tabcolsep}{3pt}",
    `\\begin{tabular}{${spec}}`,
    "\\toprule",
    ...head,
    `${t.columns.map((c) => `${guarded(latexText(c.label))}${latexMarks(c.marks)}`).join(" & ")} \\\\`,
    "\\midrule",
    ...t.rows.map((r) => `${r.cells.map(latexCell).join(" & ")} \\\\`),
    "\\bottomrule",
    "\\end{tabular}",
    `\\caption{${latexText([t.title, ...t.notes].join(" "))}}`,
    `\\label{tab:${t.id.replace(/[^A-Za-z0-9-]/g, "-")}}`,
    "\\end{table}"
  ].join("\n")
}
