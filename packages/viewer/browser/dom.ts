/**
 * What every page of the viewer shares: building elements, links and requests, number and cell-name
 * formatting, the run tabs and the table renderer.
 */
import type { Table } from "@cupid-lab/report"
import type { CellEntry, MetricColumn } from "../src/Entries.js"

export type Child = Node | string | null | undefined | false
export type Attrs = Readonly<Record<string, string | undefined>>

/** An element with attributes and children; strings become text nodes. */
export const h = (
  tag: string,
  attrs: Attrs = {},
  ...children: ReadonlyArray<Child | ReadonlyArray<Child>>
): HTMLElement => {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, v)
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue
    el.append(typeof c === "string" ? document.createTextNode(c) : c)
  }
  return el
}

export const main = () => document.getElementById("main")!
export const where = () => document.getElementById("where")!

export const hashOf = (
  page: string,
  params: Readonly<Record<string, string | number | boolean | undefined>>
): string => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === "" || v === false) continue
    q.set(k, v === true ? "1" : String(v))
  }
  const s = q.toString()
  return `#/${page}${s === "" ? "" : `?${s}`}`
}

export const link = (
  text: string,
  page: string,
  params: Readonly<Record<string, string | number | boolean | undefined>>,
  attrs: Attrs = {}
) => h("a", { ...attrs, href: hashOf(page, params) }, text)

class HttpFailure extends Error {}

export const get = async <A>(
  pathname: string,
  params: Readonly<Record<string, string | number | boolean | undefined>> = {}
): Promise<A> => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params))
    if (v !== undefined && v !== "" && v !== false) q.set(k, v === true ? "1" : String(v))
  const response = await fetch(`${pathname}${q.size > 0 ? `?${q.toString()}` : ""}`)
  const body: unknown = await response.json()
  if (!response.ok) {
    const message =
      typeof body === "object" && body !== null && "error" in body ? String(body.error) : `HTTP ${response.status}`
    throw new HttpFailure(message)
  }
  return body as A
}

export const fmt = (v: number | null | undefined, digits = 3): string =>
  v === null || v === undefined || !Number.isFinite(v) ? "–" : v.toFixed(digits)

export const cellName = (cells: ReadonlyArray<CellEntry>, id: string): string => {
  const c = cells.find((x) => x.id === id)
  return c === undefined ? id : `${c.name}${c.oracle ? " ‡" : ""}`
}

/** Longest cell name a column head shows whole. */
export const shortLength = 18

/**
 * A cell name short enough for a column head: `plugin(key=value, ...)` keeps the values, then a
 * hyphenated plugin name its initials (`context-factor(policy=most-recent)` is `cf(most-recent)`),
 * then the name is cut with "…".
 */
export const abbreviate = (name: string): string => {
  if (name.length <= shortLength) return name
  const values = name.replace(/([(,]\s*)[\w.-]+=/g, "$1")
  if (values.length <= shortLength) return values
  const initials = values.replace(/^([a-z0-9]+(?:-[a-z0-9]+)+)(?=\()/i, (w) =>
    w
      .split("-")
      .map((x) => x.charAt(0))
      .join("")
  )
  return initials.length <= shortLength ? initials : `${initials.slice(0, shortLength - 1)}…`
}

/** Each cell's column head: its name, abbreviated when long unless two cells would then read alike. */
export const shortNames = (cells: ReadonlyArray<CellEntry>): ReadonlyMap<string, string> => {
  const short = cells.map((c) => abbreviate(c.name))
  return new Map(
    cells.map((c, i) => [c.id, short.indexOf(short[i]!) === short.lastIndexOf(short[i]!) ? short[i]! : c.name])
  )
}

/** A column head naming a cell: the short name, the full one as its tooltip. */
export const cellHead = (cells: ReadonlyArray<CellEntry>, short: ReadonlyMap<string, string>, id: string) =>
  h(
    "th",
    { class: "cell", title: cellName(cells, id), "data-cell": id },
    `${short.get(id) ?? id}${cells.find((c) => c.id === id)?.oracle === true ? " ‡" : ""}`
  )

/** The full names of the cells whose heads are abbreviated. */
export const cellKey = (
  cells: ReadonlyArray<CellEntry>,
  short: ReadonlyMap<string, string>,
  ids: ReadonlyArray<string>
) => {
  const cut = ids.flatMap((id) => {
    const c = cells.find((x) => x.id === id)
    return c === undefined || short.get(id) === c.name ? [] : [c]
  })
  return cut.length === 0
    ? null
    : h(
        "p",
        { class: "key" },
        "Abbreviated: ",
        ...cut.flatMap((c, i) => [i === 0 ? "" : " · ", h("b", {}, short.get(c.id) ?? c.id), ` ${c.name}`])
      )
}

export const metricName = (m: Pick<MetricColumn, "name" | "heuristic">) => `${m.name}${m.heuristic ? " †" : ""}`

export const setWhere = (...parts: ReadonlyArray<Child>) =>
  where().replaceChildren(
    ...parts.filter((p): p is Node | string => p !== null && p !== undefined && p !== false).flatMap((p) => [" › ", p])
  )

// ------------------------------------------------------------------------------------------ shared

export const runTabs = (run: string, active: "run" | "instances" | "compare") =>
  h(
    "nav",
    { class: "tabs" },
    link("tables", "run", { run }, active === "run" ? { class: "active" } : {}),
    link("instances", "instances", { run }, active === "instances" ? { class: "active" } : {}),
    link("compare two cells", "compare", { a: run, b: run }, active === "compare" ? { class: "active" } : {})
  )

/** Text with its line breaks. */
export const lines = (text: string): Array<Node> =>
  text
    .split("\n")
    .flatMap((line, i) => (i === 0 ? [document.createTextNode(line)] : [h("br"), document.createTextNode(line)]))

/** A table of the reports' table model (report/Table.ts), rendered as report.html renders it: best bold, significance *, superscripts for the cells a cell beats. */
export const renderTable = (t: Table.Table): HTMLElement => {
  const marks = (m: ReadonlyArray<string> | undefined) => (m === undefined || m.length === 0 ? "" : ` ${m.join("")}`)
  const head = h(
    "tr",
    {},
    ...t.columns.map((c) =>
      h(
        "th",
        {},
        ...lines(c.label),
        marks(c.marks),
        c.group === undefined ? null : h("div", { class: "muted" }, c.group)
      )
    )
  )
  const body = t.rows.map((r) =>
    h(
      "tr",
      r.kinds.length > 0 ? { class: r.kinds.join(" ") } : {},
      ...r.cells.map((c, i) => {
        const classes = [
          t.columns[i]?.align === "right" ? "num" : "",
          c.best === true ? "best" : "",
          c.significant === true ? "sig" : ""
        ].filter((x) => x !== "")
        const text = c.code === true ? h("code", {}, ...lines(c.text)) : h("span", {}, ...lines(c.text))
        return h(
          "td",
          {
            ...(classes.length > 0 ? { class: classes.join(" ") } : {}),
            ...(c.tooltip === undefined ? {} : { title: c.tooltip })
          },
          text,
          marks(c.marks),
          c.superscripts !== undefined && c.superscripts.length > 0 ? h("sup", {}, c.superscripts.join(",")) : null,
          c.significant === true ? " *" : "",
          c.detail === undefined ? null : h("div", { class: "muted" }, ...lines(c.detail))
        )
      })
    )
  )
  return h(
    "section",
    { "data-table": t.id },
    h("h2", {}, t.title),
    ...t.notes.map((n) => h("p", { class: "muted" }, n)),
    h("div", { class: "scroll" }, h("table", { class: "metrics" }, h("thead", {}, head), h("tbody", {}, body)))
  )
}

/**
 * A section that fills in when its request answers (the verdict needs the run's paired tests, which
 * take seconds on a large run): `data-ready` is set once it has.
 */
