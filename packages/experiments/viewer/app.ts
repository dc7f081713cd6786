/**
 * The results viewer's browser code: one page, routed by the URL's hash, rendering the JSON of
 * ../src/view/Api.ts. Every piece of run or dataset text reaches the page as a text node (no
 * innerHTML, no inline script or style), so it stays inert; the server's CSP forbids the rest.
 *
 * Routes (all state is in the hash, so every view can be bookmarked or reloaded):
 *   #/                                         the runs under the server's root
 *   #/run?run=<id>                             a run's verdict, charts and tables, per instance type, best marked
 *   #/instances?run=<id>&type=&cell=&failed=1&a=&b=&q=&sort=&desc=1&offset=
 *   #/instance?run=<id>&id=<instance>          one instance: sessions, gold labels, each cell's selection and outputs
 *   #/compare?a=<run>&ca=<cell>&b=<run>&cb=<cell>
 *
 * Built by tools/build-cli.mjs into packages/experiments/dist/viewer/app.js.
 */
import type * as Api from "../src/view/Api.js"

type Child = Node | string | null | undefined | false
type Attrs = Readonly<Record<string, string | undefined>>

/** An element with attributes and children; strings become text nodes. */
const h = (tag: string, attrs: Attrs = {}, ...children: ReadonlyArray<Child | ReadonlyArray<Child>>): HTMLElement => {
  const el = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) if (v !== undefined) el.setAttribute(k, v)
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue
    el.append(typeof c === "string" ? document.createTextNode(c) : c)
  }
  return el
}

const main = () => document.getElementById("main")!
const where = () => document.getElementById("where")!

const hashOf = (page: string, params: Readonly<Record<string, string | number | boolean | undefined>>): string => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) {
    if (v === undefined || v === "" || v === false) continue
    q.set(k, v === true ? "1" : String(v))
  }
  const s = q.toString()
  return `#/${page}${s === "" ? "" : `?${s}`}`
}

const link = (text: string, page: string, params: Readonly<Record<string, string | number | boolean | undefined>>, attrs: Attrs = {}) =>
  h("a", { ...attrs, href: hashOf(page, params) }, text)

class HttpFailure extends Error {}

const get = async <A>(pathname: string, params: Readonly<Record<string, string | number | boolean | undefined>> = {}): Promise<A> => {
  const q = new URLSearchParams()
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== "" && v !== false) q.set(k, v === true ? "1" : String(v))
  const response = await fetch(`${pathname}${q.size > 0 ? `?${q.toString()}` : ""}`)
  const body: unknown = await response.json()
  if (!response.ok) {
    const message = typeof body === "object" && body !== null && "error" in body ? String(body.error) : `HTTP ${response.status}`
    throw new HttpFailure(message)
  }
  return body as A
}

const fmt = (v: number | null | undefined, digits = 3): string => (v === null || v === undefined || !Number.isFinite(v) ? "–" : v.toFixed(digits))

const cellName = (cells: ReadonlyArray<Api.CellEntry>, id: string): string => {
  const c = cells.find((x) => x.id === id)
  return c === undefined ? id : `${c.name}${c.oracle ? " ‡" : ""}`
}

/** Longest cell name a column head shows whole. */
const shortLength = 18

/**
 * A cell name short enough for a column head: `plugin(key=value, ...)` keeps the values, then a
 * hyphenated plugin name its initials (`context-factor(policy=most-recent)` is `cf(most-recent)`),
 * then the name is cut with "…".
 */
const abbreviate = (name: string): string => {
  if (name.length <= shortLength) return name
  const values = name.replace(/([(,]\s*)[\w.-]+=/g, "$1")
  if (values.length <= shortLength) return values
  const initials = values.replace(/^([a-z0-9]+(?:-[a-z0-9]+)+)(?=\()/i, (w) => w.split("-").map((x) => x.charAt(0)).join(""))
  return initials.length <= shortLength ? initials : `${initials.slice(0, shortLength - 1)}…`
}

/** Each cell's column head: its name, abbreviated when long unless two cells would then read alike. */
const shortNames = (cells: ReadonlyArray<Api.CellEntry>): ReadonlyMap<string, string> => {
  const short = cells.map((c) => abbreviate(c.name))
  return new Map(cells.map((c, i) => [c.id, short.indexOf(short[i]!) === short.lastIndexOf(short[i]!) ? short[i]! : c.name]))
}

/** A column head naming a cell: the short name, the full one as its tooltip. */
const cellHead = (cells: ReadonlyArray<Api.CellEntry>, short: ReadonlyMap<string, string>, id: string) =>
  h("th", { class: "cell", title: cellName(cells, id), "data-cell": id }, `${short.get(id) ?? id}${cells.find((c) => c.id === id)?.oracle === true ? " ‡" : ""}`)

/** The full names of the cells whose heads are abbreviated. */
const cellKey = (cells: ReadonlyArray<Api.CellEntry>, short: ReadonlyMap<string, string>, ids: ReadonlyArray<string>) => {
  const cut = ids.flatMap((id) => {
    const c = cells.find((x) => x.id === id)
    return c === undefined || short.get(id) === c.name ? [] : [c]
  })
  return cut.length === 0 ? null : h("p", { class: "key" }, "Abbreviated: ",
    ...cut.flatMap((c, i) => [i === 0 ? "" : " · ", h("b", {}, short.get(c.id) ?? c.id), ` ${c.name}`]))
}

const metricName = (m: Pick<Api.MetricColumn, "name" | "heuristic">) => `${m.name}${m.heuristic ? " †" : ""}`

const setWhere = (...parts: ReadonlyArray<Child>) => where().replaceChildren(...parts.filter((p): p is Node | string => p !== null && p !== undefined && p !== false).flatMap((p) => [" › ", p]))

// ---------------------------------------------------------------------------------------------- runs

const runsPage = async () => {
  setWhere()
  const { runs, unreadable } = await get<Api.RunList>("/api/runs")
  const cannotRead = unreadable.length === 0 ? null : h("div", { class: "notice", id: "unreadable" },
    h("b", {}, `${unreadable.length} run director${unreadable.length === 1 ? "y" : "ies"} cannot be read:`),
    h("ul", {}, ...unreadable.map((u) => h("li", {}, `${u.id}: ${u.reason}`))))
  if (runs.length === 0) return [h("h1", {}, "Runs"), cannotRead, h("p", {}, "No runs under this directory yet: run a sweep (npx cupid-lab sweep --config contextual.yaml) and reload.")]
  const rows = runs.map((r) =>
    h("tr", { "data-run": r.id },
      h("td", {}, link(r.id, "run", { run: r.id }), r.latest ? h("span", { class: "tag" }, "latest") : null, ...r.problems.map((p) => h("div", { class: "failed" }, p))),
      h("td", {}, r.config, h("span", { class: "muted", title: "config hash" }, ` ${r.configHash.slice(0, 8)}`)),
      h("td", {}, r.data, r.transform === null ? null : h("div", { class: "muted" }, `transform ${r.transform}`)),
      h("td", {}, r.started === null ? "–" : r.started.replace("T", " ").replace(/\.\d+Z$/, "Z")),
      h("td", { class: "num" }, String(r.cells)),
      h("td", { class: "num" }, String(r.instances)),
      h("td", { class: "num" }, String(r.failed)),
      h("td", {}, r.main === null ? "–" : [metricName({ name: r.main.metric, heuristic: r.main.heuristic }), ": ", h("b", {}, fmt(r.main.value)), ` (${r.main.cell ?? "–"}, N=${r.main.n})`])
    )
  )
  return [
    h("h1", {}, "Runs"),
    h("p", { class: "muted" }, `${runs.length} runs, newest first. Headline: the best cell on the run's main metric over all instances, among those that read no gold labels.`),
    cannotRead,
    h("table", { id: "runs" },
      h("thead", {}, h("tr", {}, ...["run", "config", "data", "started", "cells", "instances", "failed pairs", "headline"].map((t) => h("th", {}, t)))),
      h("tbody", {}, rows))
  ]
}

// ----------------------------------------------------------------------------------------------- run

const runTabs = (run: string, active: "run" | "instances" | "compare") =>
  h("nav", { class: "tabs" },
    link("tables", "run", { run }, active === "run" ? { class: "active" } : {}),
    link("instances", "instances", { run }, active === "instances" ? { class: "active" } : {}),
    link("compare two cells", "compare", { a: run, b: run }, active === "compare" ? { class: "active" } : {}))

/** Text with its line breaks. */
const lines = (text: string): Array<Node> => text.split("\n").flatMap((line, i) => (i === 0 ? [document.createTextNode(line)] : [h("br"), document.createTextNode(line)]))

/** A table of the reports' table model (report/Table.ts), rendered as report.html renders it: best bold, significance *, superscripts for the cells a cell beats. */
const renderTable = (t: Api.Table): HTMLElement => {
  const marks = (m: ReadonlyArray<string> | undefined) => (m === undefined || m.length === 0 ? "" : ` ${m.join("")}`)
  const head = h("tr", {}, ...t.columns.map((c) => h("th", {}, ...lines(c.label), marks(c.marks), c.group === undefined ? null : h("div", { class: "muted" }, c.group))))
  const body = t.rows.map((r) =>
    h("tr", r.kinds.length > 0 ? { class: r.kinds.join(" ") } : {}, ...r.cells.map((c, i) => {
      const classes = [t.columns[i]?.align === "right" ? "num" : "", c.best === true ? "best" : "", c.significant === true ? "sig" : ""].filter((x) => x !== "")
      const text = c.code === true ? h("code", {}, ...lines(c.text)) : h("span", {}, ...lines(c.text))
      return h("td", { ...(classes.length > 0 ? { class: classes.join(" ") } : {}), ...(c.tooltip === undefined ? {} : { title: c.tooltip }) },
        text,
        marks(c.marks),
        c.superscripts !== undefined && c.superscripts.length > 0 ? h("sup", {}, c.superscripts.join(",")) : null,
        c.significant === true ? " *" : "",
        c.detail === undefined ? null : h("div", { class: "muted" }, ...lines(c.detail)))
    })))
  return h("section", { "data-table": t.id },
    h("h2", {}, t.title),
    ...t.notes.map((n) => h("p", { class: "muted" }, n)),
    h("div", { class: "scroll" }, h("table", { class: "metrics" }, h("thead", {}, head), h("tbody", {}, body))))
}

/**
 * A section that fills in when its request answers (the verdict needs the run's paired tests, which
 * take seconds on a large run): `data-ready` is set once it has.
 */
const later = <A>(id: string, title: string, waiting: string, request: Promise<A>, show: (a: A) => ReadonlyArray<Child>) => {
  const section = h("section", { id }, h("h2", {}, title), h("p", { class: "muted" }, waiting))
  void request.then(
    (a) => {
      section.replaceChildren(h("h2", {}, title), ...show(a).filter((n): n is Node | string => n !== null && n !== undefined && n !== false))
      section.dataset["ready"] = "1"
    },
    (e: unknown) => section.replaceChildren(h("h2", {}, title), h("p", { class: "failed" }, e instanceof Error ? e.message : String(e)))
  )
  return section
}

/** Who leads per instance type, and the leaderboard: the reports' opening. */
const verdictView = (v: Api.VerdictView): ReadonlyArray<Child> => [
  h("p", { class: "muted" }, v.intro),
  v.findings.length === 0 ? null : h("ul", { class: "verdict" }, ...v.findings.map((f) => h("li", { "data-slice": f.slice }, f.sentence))),
  v.leaderboard === null ? null : renderTable(v.leaderboard)
]

/**
 * The report's charts. Each SVG (drawn by Vega from the run's data, cell names included) is shown
 * as an image: an SVG image cannot run script or load anything, whatever its text holds.
 */
const figuresView = (f: Api.FiguresView): ReadonlyArray<Child> =>
  f.figures.length === 0 ? [h("p", {}, "Nothing to plot: the run has no main metric.")] : [
    h("p", { class: "muted" }, "The charts of report.html. Tooltips are in report.html; the tables below hold every value."),
    h("div", { class: "figures" }, ...f.figures.map((x) =>
      h("figure", { "data-section": x.section },
        h("img", { src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(x.svg)}`, alt: x.caption }),
        h("figcaption", {}, x.caption))))
  ]

const runPage = async (p: URLSearchParams) => {
  const run = p.get("run") ?? ""
  const d = await get<Api.RunDetail>("/api/run", { run })
  setWhere(link(run, "run", { run }))
  const verdict = later("verdict", "Verdict", "running the paired tests…", get<Api.VerdictView>("/api/verdict", { run }), verdictView)
  const figures = later("figures", "Charts", "drawing the charts…", get<Api.FiguresView>("/api/figures", { run }), figuresView)
  const pairwise = later("pairwise", "Every cell against every other", "running the paired tests…", get<Api.PairwiseView>("/api/pairwise", { run }), (v) =>
    v.note === null
      ? [h("p", {}, "Nothing to test: the run has fewer than two cells or no headline metric.")]
      : [h("p", { class: "muted" }, v.note), ...v.slices.flatMap((s) => [s.tooSmall === null ? null : h("p", { class: "notice" }, s.tooSmall), renderTable(s.table)])])
  return [
    h("h1", {}, `${d.entry.config} · ${d.entry.data}`),
    runTabs(run, "run"),
    h("p", { class: "muted" }, `${d.entry.cells} cells × ${d.entry.instances} instances; main metric ${d.main ?? "none"} (${d.mainReason}).`),
    verdict,
    figures,
    h("h2", { id: "tables" }, "Per instance type"),
    h("p", { class: "muted" }, "Bold: the best cell of each column among those that read no gold labels; † a heuristic metric, ‡ an oracle cell; hover a value for more."),
    ...d.tables.map(renderTable),
    pairwise
  ]
}

// ----------------------------------------------------------------------------------------- instances

const select = (name: string, options: ReadonlyArray<readonly [string, string]>, value: string) => {
  const el = h("select", { name, id: `f-${name}` }, ...options.map(([v, t]) => h("option", { value: v }, t)))
  ;(el as HTMLSelectElement).value = value
  return el
}

const instancesPage = async (p: URLSearchParams) => {
  const run = p.get("run") ?? ""
  const d = await get<Api.RunDetail>("/api/run", { run })
  setWhere(link(run, "run", { run }), "instances")
  const params = {
    run,
    type: p.get("type") ?? undefined,
    cell: p.get("cell") ?? undefined,
    failed: p.get("failed") === "1",
    a: p.get("a") ?? undefined,
    b: p.get("b") ?? undefined,
    q: p.get("q") ?? undefined,
    sort: p.get("sort") ?? undefined,
    desc: p.get("desc") === "1",
    offset: p.get("offset") ?? undefined
  }
  const list = await get<Api.InstanceList>("/api/instances", params)
  const short = shortNames(d.cells)
  const cellOptions: Array<readonly [string, string]> = [["", "(any)"], ...d.cells.map((c) => [c.id, cellName(d.cells, c.id)] as const)]
  const search = h("input", { type: "search", name: "q", id: "f-q", placeholder: "search text", value: params.q ?? "" })
  const failed = h("input", { type: "checkbox", name: "failed", id: "f-failed" })
  ;(failed as HTMLInputElement).checked = params.failed
  const form = h("form", { id: "filters" },
    h("label", {}, "type ", select("type", [["", "(all)"], ["consistent", "consistent"], ["contrastive", "contrastive"], ["changing", "changing"]], params.type ?? "")),
    h("label", {}, "cell ", select("cell", cellOptions, list.resolved.cell ?? "")),
    h("label", {}, failed, " failed"),
    h("fieldset", {}, h("legend", {}, "disagreement"), h("label", {}, "cell A ", select("a", cellOptions, list.resolved.a ?? "")), h("label", {}, "cell B ", select("b", cellOptions, list.resolved.b ?? ""))),
    h("label", {}, "sort ", select("sort", [["instance", "dataset order"], ["type", "type"], ["length", "history length"], ["metric", `main metric (${d.main ?? "–"})`]], params.sort ?? "instance")),
    h("label", {}, h("input", { type: "checkbox", name: "desc", id: "f-desc", ...(params.desc ? { checked: "" } : {}) }), " descending"),
    search,
    h("button", { type: "submit", id: "apply" }, "apply"))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const data = new FormData(form as HTMLFormElement)
    const value = (k: string) => {
      const v = data.get(k)
      return typeof v === "string" && v !== "" ? v : undefined
    }
    location.hash = hashOf("instances", {
      run,
      type: value("type"),
      cell: value("cell"),
      failed: data.get("failed") !== null,
      a: value("a"),
      b: value("b"),
      q: value("q"),
      sort: value("sort") === "instance" ? undefined : value("sort"),
      desc: data.get("desc") !== null
    })
  })
  const outcomeText = (o: Api.CellOutcome) =>
    o.status === "failed" ? "failed" : `${o.selected === null ? "–" : `{${o.selected.join(", ")}}`}${o.main === null ? "" : ` ${fmt(o.main)}`}`
  const shownCells = list.items[0]?.outcomes.map((o) => o.cell) ?? []
  const rows = list.items.map((it) =>
    h("tr", { "data-instance": it.id },
      h("td", {}, link(it.id, "instance", { run, id: it.id })),
      h("td", {}, it.type),
      h("td", { class: "num" }, String(it.sessions)),
      h("td", { class: "num" }, String(it.historyTokens)),
      h("td", {}, `{${it.relevant.join(", ")}}`, it.stale.length > 0 ? h("span", { class: "muted" }, ` stale {${it.stale.join(", ")}}`) : null),
      ...it.outcomes.map((o) => h("td", { class: o.status === "failed" ? "failed" : undefined, "data-cell": o.cell }, outcomeText(o)))))
  const next = list.offset + list.items.length < list.matched
    ? link("next page", "instances", { ...params, offset: list.offset + list.items.length })
    : null
  return [
    h("h1", {}, `Instances · ${d.entry.config}`),
    runTabs(run, "instances"),
    form,
    h("p", { id: "matched" }, `${list.matched} of ${list.total} instances: ${list.description}.`, list.items.length < list.matched ? ` Showing ${list.offset + 1}–${list.offset + list.items.length}.` : ""),
    list.notice === null ? null : h("p", { class: "notice" }, list.notice),
    h("div", { class: "scroll" }, h("table", { class: "instances" },
      h("thead", {}, h("tr", {}, ...["instance", "type", "sessions", "tokens", "gold relevant"].map((t) => h("th", {}, t)), ...shownCells.map((c) => cellHead(d.cells, short, c)))),
      h("tbody", {}, rows))),
    next,
    cellKey(d.cells, short, shownCells),
    h("p", { class: "muted" }, "Each cell column shows the sessions it selected and its main metric for the instance.")
  ]
}

// ------------------------------------------------------------------------------------------ instance

/** A retriever's score in a few characters (the exact value is in the cell's tooltip). */
const scoreText = (x: number | null): string =>
  x === null || !Number.isFinite(x) ? "–" : Math.abs(x) >= 1000 ? x.toFixed(0) : Number(x.toPrecision(3)).toString()

const ratingText = (x: number) => (x === 1 ? "✓ 1" : x === 0 ? "✗ 0" : `◐ ${x}`)

/** Each checklist item with its rating: the gold items (covered by the inferred preference?) and the inferred ones (covered by the gold?). */
const ratingsTable = (ratings: Api.CellResult["ratings"]) =>
  h("table", { class: "ratings" },
    h("thead", {}, h("tr", {}, h("th", {}, "checklist item"), h("th", {}, "side"), h("th", {}, "rating"))),
    h("tbody", {}, ...ratings.map((x) =>
      h("tr", { "data-side": x.side, class: x.rating === 1 ? "covered" : x.rating === 0 ? "missed" : "partial" },
        h("td", {}, x.item),
        h("td", {}, x.side === "gold" ? "gold (covered by the inference?)" : "inferred (covered by the gold?)"),
        h("td", { class: "num" }, ratingText(x.rating))))))

/** One call of a transcript: what was sent, what came back, what the caller read, and how it went. */
const callView = (c: Api.Call, n: number) => {
  const facts = [
    `${c.provider}/${c.model}`,
    c.cached ? "answered by the cache" : `${c.requests} request${c.requests === 1 ? "" : "s"}${c.requests > 1 ? ` (${c.requests - 1} retr${c.requests === 2 ? "y" : "ies"})` : ""}`,
    `${c.latencyMs} ms`,
    `${c.promptTokens} + ${c.completionTokens} tokens`,
    c.finishReason === undefined ? null : `finish: ${c.finishReason}`,
    c.inputs === undefined ? null : `${c.inputs} inputs`
  ].filter((x): x is string => x !== null)
  const read = c.read === undefined ? null : c.read.ok
    ? h("p", { class: "read" }, h("b", {}, "read: "), typeof c.read.value === "string" ? c.read.value : JSON.stringify(c.read.value))
    : h("p", { class: "failed read" }, h("b", {}, "could not read the answer: "), c.read.reason)
  return h("details", { class: `call${c.failed || c.error !== undefined ? " failed" : ""}`, "data-stage": c.stage },
    h("summary", {}, `${n}. ${c.stage} · ${c.kind} · `, facts.join(" · "), c.error === undefined ? "" : " · failed"),
    c.error === undefined ? null : h("p", { class: "failed" }, c.error),
    read,
    ...(c.request?.messages ?? []).map((m) => h("div", { class: `message ${m.role}` }, h("b", {}, m.role), h("pre", {}, m.content))),
    c.request === undefined ? null : h("p", { class: "muted" }, "settings: ", JSON.stringify(Object.fromEntries(Object.entries(c.request).filter(([k]) => k !== "messages")))),
    c.answer === undefined ? null : h("div", { class: "message answer" }, h("b", {}, "raw answer"), h("pre", {}, c.answer)))
}

/** A cell's model calls on the instance, grouped by stage in the order they were made. */
const callsSection = (t: Api.InstanceCalls["cells"][number] | undefined) =>
  t === undefined ? null : h("details", { class: "transcript" },
    h("summary", {}, `Model calls: ${t.calls.length} (${t.calls.filter((c) => c.cached).length} from the cache, ${t.calls.reduce((n, c) => n + c.requests, 0)} requests sent)`,
      t.attempts > 1 ? `; latest of ${t.attempts} attempts (${t.ranAt})` : ""),
    ...t.calls.map((c, i) => callView(c, i + 1)))

const instancePage = async (p: URLSearchParams) => {
  const run = p.get("run") ?? ""
  const id = p.get("id") ?? ""
  const [d, transcripts] = await Promise.all([get<Api.InstanceDetail>("/api/instance", { run, id }), get<Api.InstanceCalls>("/api/calls", { run, id })])
  const callsOf = new Map(transcripts.cells.map((c) => [c.cell, c]))
  setWhere(link(run, "run", { run }), link("instances", "instances", { run }), id)
  const withResult = d.cells.filter((c) => d.results.some((r) => r.cell === c.id))
  const short = shortNames(d.cells)
  // Each cell's rank and score of each session, from its retriever's ranking.
  const ranks = new Map(d.results.map((r) => [r.cell, new Map((r.ranking ?? []).map((x) => [x.session, x]))]))
  const sessionRows = d.sessions.map((s) =>
    h("tr", { "data-session": s.id, class: s.label === null ? undefined : `label-${s.label}` },
      h("td", { class: "num" }, String(s.position)),
      h("td", {}, s.id),
      h("td", { class: "gold" }, s.label ?? "?"),
      h("td", {}, s.factor ?? "–"),
      ...withResult.map((c) => {
        const picked = s.selectedBy.includes(c.id)
        const r = ranks.get(c.id)?.get(s.id)
        return h("td", {
          class: picked ? "sel picked" : "sel",
          "data-cell": c.id,
          ...(r === undefined ? {} : { "data-rank": String(r.rank), "data-score": r.score === null ? "" : String(r.score) }),
          title: `${cellName(d.cells, c.id)}: ${picked ? "selected" : "not selected"}${r === undefined ? "" : `; rank ${r.rank}, score ${r.score ?? "–"}`}`
        },
          h("span", { class: "pick" }, picked ? "●" : ""),
          r === undefined ? null : h("span", { class: "rank" }, `#${r.rank}`),
          r === undefined ? null : h("span", { class: "score" }, scoreText(r.score)))
      }),
      h("td", { class: "dialogue" }, s.turns.length === 0 ? "–" : h("details", {},
        h("summary", {}, `${s.turns.length} turns: ${(s.turns[0]?.content ?? "").slice(0, 70)}…`),
        ...s.turns.map((t) => h("div", { class: `turn ${t.role === "user" ? "user" : "assistant"}` }, h("b", {}, `${t.role}: `), t.content)),
        s.preference === null ? null : h("p", { class: "muted" }, `gold preference of this session: ${s.preference}`)))))
  const results = d.results.map((r) => {
    const headline = r.scores.filter((x) => x.headline)
    const scoreLine = (x: Api.ScoreValue) => `${metricName({ name: x.metric, heuristic: x.heuristic })} ${fmt(x.value)}${x.num === undefined ? "" : ` (${x.num}/${x.den})`}`
    const covered = (side: "gold" | "inferred") => {
      const items = r.ratings.filter((x) => x.side === side)
      return items.length === 0 ? null : `${side} items ${Number(items.reduce((n, x) => n + x.rating, 0).toFixed(2))} of ${items.length}`
    }
    return h("section", { class: "result", "data-cell": r.cell },
      h("h3", {}, cellName(d.cells, r.cell), " ", h("span", { class: r.status === "ok" ? "tag" : "tag failed" }, r.status)),
      h("p", { class: "line" }, h("b", {}, "selected "), r.selected === null ? "–" : `{${r.selected.join(", ")}}`,
        ...headline.map((x) => [" · ", x.metric === d.main ? h("b", { class: "main-metric" }, scoreLine(x)) : scoreLine(x)])),
      r.error === null ? null : h("p", { class: "failed" }, `${r.error.stage} (${r.error.plugin}) ${r.error.tag}: ${r.error.message}`),
      r.inference === null ? null : h("p", { class: "inferred" }, h("b", {}, "inferred: "), r.inference),
      r.ratings.length === 0 ? null : h("details", { class: "ratings" },
        h("summary", {}, "checklist covered: ", [covered("gold"), covered("inferred")].filter((x) => x !== null).join("; ")),
        ratingsTable(r.ratings)),
      r.generation === null ? null : h("details", {}, h("summary", {}, `generation (${r.generation.length} characters)`), h("p", { class: "pre" }, r.generation)),
      h("details", { class: "all-scores" },
        h("summary", {}, `all ${r.scores.length} metrics, usage`),
        h("table", { class: "scores" }, h("tbody", {}, ...r.scores.map((x) =>
          h("tr", { "data-metric": x.metric }, h("td", {}, metricName({ name: x.metric, heuristic: x.heuristic })), h("td", { class: "num" }, fmt(x.value), x.num === undefined ? "" : ` (${x.num}/${x.den})`))))),
        h("p", { class: "muted" }, `usage: ${r.usage.calls} calls, ${r.usage.promptTokens} prompt + ${r.usage.completionTokens} completion tokens`)),
      callsSection(callsOf.get(r.cell)))
  })
  return [
    h("h1", {}, `${d.id} (${d.type})`),
    runTabs(run, "instances"),
    d.datasetNote === null ? null : h("p", { class: "notice" }, d.datasetNote),
    h("h2", {}, "Request"),
    h("p", { class: "pre", id: "request" }, d.request ?? "–"),
    d.gold === null ? null : h("div", { class: "gold-box" },
      h("p", {}, h("b", {}, "gold context factor: "), d.gold.factor),
      h("p", {}, h("b", {}, "gold preference: "), d.gold.preference),
      h("b", {}, "checklist"), h("ul", { id: "checklist" }, ...d.gold.checklist.map((c) => h("li", {}, c)))),
    h("h2", {}, "History"),
    h("p", { class: "muted" }, "Gold label of each prior session for this request (relevant: same factor and preference; stale: same factor, earlier preference; other). Under each cell: ● when it selected the session, then the session's rank and score in the cell's retriever ranking."),
    h("div", { class: "scroll" }, h("table", { class: "sessions" },
      h("thead", {}, h("tr", {}, h("th", {}, "#"), h("th", {}, "session"), h("th", {}, "gold"), h("th", {}, "factor"),
        ...withResult.map((c) => cellHead(d.cells, short, c.id)), h("th", {}, "dialogue"))),
      h("tbody", {}, sessionRows))),
    cellKey(d.cells, short, withResult.map((c) => c.id)),
    d.otherSelected.length === 0 ? null : h("p", { class: "notice" }, "Selected but not in the history above (added by a transform): ",
      d.otherSelected.map((o) => `${o.session} by ${o.cells.map((c) => cellName(d.cells, c)).join(", ")}`).join("; ")),
    h("h2", {}, "Cells"),
    h("p", { class: "muted" }, `Each cell's selection, its headline metrics${d.main === null ? "" : ` (${d.main} in bold)`} and inferred preference; open a cell's parts for the checklist ratings, the generation, every metric and the model calls.`),
    h("div", { class: "results" }, ...results)
  ]
}

// ------------------------------------------------------------------------------------------- compare

const comparePage = async (p: URLSearchParams) => {
  const { runs } = await get<Api.RunList>("/api/runs")
  const a = p.get("a") ?? runs[0]?.id ?? ""
  const b = p.get("b") ?? a
  const [da, db] = await Promise.all([get<Api.RunDetail>("/api/run", { run: a }), get<Api.RunDetail>("/api/run", { run: b })])
  const ca = p.get("ca") ?? da.cells[0]?.id ?? ""
  const cb = p.get("cb") ?? db.cells[1]?.id ?? db.cells[0]?.id ?? ""
  // The server resolves the URL's cells (id, id prefix, name or @k): the choices show what it chose.
  const v = await get<Api.CompareView>("/api/compare", { a, ca, b, cb })
  setWhere("compare")
  const runOptions = runs.map((r) => [r.id, `${r.id} (${r.config}, ${r.data})`] as const)
  const form = h("form", { id: "pick" },
    h("fieldset", {}, h("legend", {}, "A"), select("a", runOptions, a), select("ca", da.cells.map((c) => [c.id, cellName(da.cells, c.id)] as const), v.a.cell.id)),
    h("fieldset", {}, h("legend", {}, "B"), select("b", runOptions, b), select("cb", db.cells.map((c) => [c.id, cellName(db.cells, c.id)] as const), v.b.cell.id)),
    h("button", { type: "submit", id: "apply" }, "compare"))
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const data = new FormData(form as HTMLFormElement)
    const next = { a: String(data.get("a")), b: String(data.get("b")) }
    // A changed run keeps no cell choice of the other run.
    location.hash = hashOf("compare", { ...next, ca: next.a === a ? String(data.get("ca")) : undefined, cb: next.b === b ? String(data.get("cb")) : undefined })
  })
  const outcome = (o: Api.CellOutcome) => (o.status === "failed" ? "failed" : `{${(o.selected ?? []).join(", ")}} ${fmt(o.main)}`)
  return [
    h("h1", {}, "Two cells side by side"),
    form,
    h("p", {}, `A: ${a} ${cellName(da.cells, v.a.cell.id)}; B: ${b} ${cellName(db.cells, v.b.cell.id)}. ${v.shared} instances in both; ${v.disagreements.length} where the selections differ or one failed.`),
    ...v.warnings.map((w) => h("p", { class: "notice" }, w)),
    h("div", { class: "compare" }, ...v.tables.map(renderTable)),
    h("h2", {}, "Instances where they disagree"),
    h("table", { class: "instances" },
      h("thead", {}, h("tr", {}, ...["instance", "type", "A", "B"].map((t) => h("th", {}, t)))),
      h("tbody", {}, ...v.disagreements.map((x) =>
        h("tr", { "data-instance": x.instance },
          h("td", {}, link(x.instance, "instance", { run: a, id: x.instance }), a === b ? null : [" ", link("(B's run)", "instance", { run: b, id: x.instance })]),
          h("td", {}, x.type), h("td", {}, outcome(x.a)), h("td", {}, outcome(x.b))))))
  ]
}

// -------------------------------------------------------------------------------------------- router

const pages: Readonly<Record<string, (p: URLSearchParams) => Promise<ReadonlyArray<Child>>>> = {
  "": runsPage,
  run: runPage,
  instances: instancesPage,
  instance: instancePage,
  compare: comparePage
}

let generation = 0

const render = async () => {
  const mine = ++generation
  const raw = location.hash.replace(/^#\/?/, "")
  const [page = "", query = ""] = raw.split("?", 2)
  const view = pages[page]
  document.body.classList.add("loading")
  try {
    const nodes = view === undefined ? [h("p", {}, `No page "${page}".`)] : await view(new URLSearchParams(query))
    if (mine !== generation) return
    main().replaceChildren(...nodes.filter((n): n is Node | string => n !== null && n !== undefined && n !== false))
  } catch (e) {
    if (mine !== generation) return
    main().replaceChildren(h("p", { class: "failed", id: "error" }, e instanceof Error ? e.message : String(e)))
  } finally {
    if (mine === generation) {
      document.body.classList.remove("loading")
      document.body.dataset["ready"] = raw
    }
  }
}

window.addEventListener("hashchange", () => void render())
void render()
