/**
 * The results viewer's browser code: one page, routed by the URL's hash, rendering the JSON of
 * the API in docs/viewer.md. Every piece of run or dataset text reaches the page as a text node (no
 * innerHTML, no inline script or style), so it stays inert; the server's CSP forbids the rest.
 *
 * Routes (all state is in the hash, so every view can be bookmarked or reloaded):
 *   #/                                         the runs under the server's root
 *   #/run?run=<id>                             a run's verdict, charts and tables, per instance type, best marked
 *   #/instances?run=<id>&type=&cell=&failed=1&a=&b=&q=&sort=&desc=1&offset=
 *   #/instance?run=<id>&id=<instance>          one instance: sessions, gold labels, each cell's selection and outputs
 *   #/compare?a=<run>&ca=<cell>&b=<run>&cb=<cell>
 *
 * Built by tools/build-cli.mjs into packages/viewer/dist/app.js.
 */
import type { CompareView, PairwiseView, RunDetail, RunList, VerdictView } from "../src/Catalog.js"
import type { FiguresView } from "../src/Entries.js"
import type { CellOutcome, InstanceList } from "../src/Instances.js"
import {
  type Child,
  cellHead,
  cellKey,
  cellName,
  fmt,
  get,
  h,
  hashOf,
  link,
  main,
  metricName,
  renderTable,
  runTabs,
  setWhere,
  shortNames
} from "./dom.js"
import { instancePage } from "./instance.js"

// ---------------------------------------------------------------------------------------------- runs

const runsPage = async () => {
  setWhere()
  const { runs, unreadable } = await get<RunList>("/api/runs")
  const cannotRead =
    unreadable.length === 0
      ? null
      : h(
          "div",
          { class: "notice", id: "unreadable" },
          h("b", {}, `${unreadable.length} run director${unreadable.length === 1 ? "y" : "ies"} cannot be read:`),
          h("ul", {}, ...unreadable.map((u) => h("li", {}, `${u.id}: ${u.reason}`)))
        )
  if (runs.length === 0)
    return [
      h("h1", {}, "Runs"),
      cannotRead,
      h(
        "p",
        {},
        "No runs under this directory yet: run a sweep (npx cupid-lab sweep --config contextual.yaml) and reload."
      )
    ]
  const rows = runs.map((r) =>
    h(
      "tr",
      { "data-run": r.id },
      h(
        "td",
        {},
        link(r.id, "run", { run: r.id }),
        r.latest ? h("span", { class: "tag" }, "latest") : null,
        ...r.problems.map((p) => h("div", { class: "failed" }, p))
      ),
      h("td", {}, r.config, h("span", { class: "muted", title: "config hash" }, ` ${r.configHash.slice(0, 8)}`)),
      h("td", {}, r.data, r.transform === null ? null : h("div", { class: "muted" }, `transform ${r.transform}`)),
      h("td", {}, r.started === null ? "–" : r.started.replace("T", " ").replace(/\.\d+Z$/, "Z")),
      h("td", { class: "num" }, String(r.cells)),
      h("td", { class: "num" }, String(r.instances)),
      h("td", { class: "num" }, String(r.failed)),
      h(
        "td",
        {},
        r.main === null
          ? "–"
          : [
              metricName({ name: r.main.metric, heuristic: r.main.heuristic }),
              ": ",
              h("b", {}, fmt(r.main.value)),
              ` (${r.main.cell ?? "–"}, N=${r.main.n})`
            ]
      )
    )
  )
  return [
    h("h1", {}, "Runs"),
    h(
      "p",
      { class: "muted" },
      `${runs.length} runs, newest first. Headline: the best cell on the run's main metric over all instances, among those that read no gold labels.`
    ),
    cannotRead,
    h(
      "table",
      { id: "runs" },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ...["run", "config", "data", "started", "cells", "instances", "failed pairs", "headline"].map((t) =>
            h("th", {}, t)
          )
        )
      ),
      h("tbody", {}, rows)
    )
  ]
}

const later = <A>(
  id: string,
  title: string,
  waiting: string,
  request: Promise<A>,
  show: (a: A) => ReadonlyArray<Child>
) => {
  const section = h("section", { id }, h("h2", {}, title), h("p", { class: "muted" }, waiting))
  void request.then(
    (a) => {
      section.replaceChildren(
        h("h2", {}, title),
        ...show(a).filter((n): n is Node | string => n !== null && n !== undefined && n !== false)
      )
      section.dataset["ready"] = "1"
    },
    (e: unknown) =>
      section.replaceChildren(
        h("h2", {}, title),
        h("p", { class: "failed" }, e instanceof Error ? e.message : String(e))
      )
  )
  return section
}

/** Who leads per instance type, and the leaderboard: the reports' opening. */
const verdictView = (v: VerdictView): ReadonlyArray<Child> => [
  h("p", { class: "muted" }, v.intro),
  v.notes.length === 0 ? null : h("p", { class: "verdict-notes" }, v.notes.join(" ")),
  v.findings.length === 0
    ? null
    : h("ul", { class: "verdict" }, ...v.findings.map((f) => h("li", { "data-slice": f.slice }, f.sentence))),
  v.leaderboard === null ? null : renderTable(v.leaderboard)
]

/**
 * The report's charts. Each SVG (drawn by Vega from the run's data, cell names included) is shown
 * as an image: an SVG image cannot run script or load anything, whatever its text holds.
 */
const figuresView = (f: FiguresView): ReadonlyArray<Child> =>
  f.figures.length === 0
    ? [h("p", {}, "Nothing to plot: the run has no main metric.")]
    : [
        h(
          "p",
          { class: "muted" },
          "The charts of report.html. Tooltips are in report.html; the tables below hold every value."
        ),
        h(
          "div",
          { class: "figures" },
          ...f.figures.map((x) =>
            h(
              "figure",
              { "data-section": x.section },
              h("img", { src: `data:image/svg+xml;charset=utf-8,${encodeURIComponent(x.svg)}`, alt: x.caption }),
              h("figcaption", {}, x.caption)
            )
          )
        )
      ]

const runPage = async (p: URLSearchParams) => {
  const run = p.get("run") ?? ""
  const d = await get<RunDetail>("/api/run", { run })
  setWhere(link(run, "run", { run }))
  const verdict = later(
    "verdict",
    "Verdict",
    "running the paired tests…",
    get<VerdictView>("/api/verdict", { run }),
    verdictView
  )
  const figures = later(
    "figures",
    "Charts",
    "drawing the charts…",
    get<FiguresView>("/api/figures", { run }),
    figuresView
  )
  const pairwise = later(
    "pairwise",
    "Every cell against every other",
    "running the paired tests…",
    get<PairwiseView>("/api/pairwise", { run }),
    (v) =>
      v.note === null
        ? [h("p", {}, "Nothing to test: the run has fewer than two cells or no headline metric.")]
        : [
            h("p", { class: "muted" }, v.note),
            ...v.slices.flatMap((s) => [
              s.tooSmall === null ? null : h("p", { class: "notice" }, s.tooSmall),
              renderTable(s.table)
            ])
          ]
  )
  return [
    h("h1", {}, `${d.entry.config} · ${d.entry.data}`),
    runTabs(run, "run"),
    h(
      "p",
      { class: "muted" },
      `${d.entry.cells} cells × ${d.entry.instances} instances; main metric ${d.main ?? "none"} (${d.mainReason}).`
    ),
    verdict,
    figures,
    h("h2", { id: "tables" }, "Per instance type"),
    h(
      "p",
      { class: "muted" },
      "Bold: the best cell of each column among those that read no gold labels; † a heuristic metric, ‡ an oracle cell; hover a value for more."
    ),
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
  const d = await get<RunDetail>("/api/run", { run })
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
  const list = await get<InstanceList>("/api/instances", params)
  const short = shortNames(d.cells)
  const cellOptions: Array<readonly [string, string]> = [
    ["", "(any)"],
    ...d.cells.map((c) => [c.id, cellName(d.cells, c.id)] as const)
  ]
  const search = h("input", { type: "search", name: "q", id: "f-q", placeholder: "search text", value: params.q ?? "" })
  const failed = h("input", { type: "checkbox", name: "failed", id: "f-failed" })
  ;(failed as HTMLInputElement).checked = params.failed
  const form = h(
    "form",
    { id: "filters" },
    h("label", {}, "type ", select("type", [["", "(all)"], ...d.types.map((t) => [t, t] as const)], params.type ?? "")),
    h("label", {}, "cell ", select("cell", cellOptions, list.resolved.cell ?? "")),
    h("label", {}, failed, " failed"),
    h(
      "fieldset",
      {},
      h("legend", {}, "disagreement"),
      h("label", {}, "cell A ", select("a", cellOptions, list.resolved.a ?? "")),
      h("label", {}, "cell B ", select("b", cellOptions, list.resolved.b ?? ""))
    ),
    h(
      "label",
      {},
      "sort ",
      select(
        "sort",
        [
          ["instance", "dataset order"],
          ["type", "type"],
          ["length", "history length"],
          ["metric", `main metric (${d.main ?? "–"})`]
        ],
        params.sort ?? "instance"
      )
    ),
    h(
      "label",
      {},
      h("input", { type: "checkbox", name: "desc", id: "f-desc", ...(params.desc ? { checked: "" } : {}) }),
      " descending"
    ),
    search,
    h("button", { type: "submit", id: "apply" }, "apply")
  )
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
  const outcomeText = (o: CellOutcome) =>
    o.status === "failed"
      ? "failed"
      : `${o.selected === null ? "–" : `{${o.selected.join(", ")}}`}${o.main === null ? "" : ` ${fmt(o.main)}`}`
  const shownCells = list.items[0]?.outcomes.map((o) => o.cell) ?? []
  const rows = list.items.map((it) =>
    h(
      "tr",
      { "data-instance": it.id },
      h("td", {}, link(it.id, "instance", { run, id: it.id })),
      h("td", {}, it.type),
      h("td", { class: "num" }, String(it.sessions)),
      h("td", { class: "num" }, String(it.historyTokens)),
      h(
        "td",
        {},
        `{${it.relevant.join(", ")}}`,
        it.stale.length > 0 ? h("span", { class: "muted" }, ` stale {${it.stale.join(", ")}}`) : null
      ),
      ...it.outcomes.map((o) =>
        h("td", { class: o.status === "failed" ? "failed" : undefined, "data-cell": o.cell }, outcomeText(o))
      )
    )
  )
  const next =
    list.offset + list.items.length < list.matched
      ? link("next page", "instances", { ...params, offset: list.offset + list.items.length })
      : null
  return [
    h("h1", {}, `Instances · ${d.entry.config}`),
    runTabs(run, "instances"),
    form,
    h(
      "p",
      { id: "matched" },
      `${list.matched} of ${list.total} instances: ${list.description}.`,
      list.items.length < list.matched ? ` Showing ${list.offset + 1}–${list.offset + list.items.length}.` : ""
    ),
    list.notice === null ? null : h("p", { class: "notice" }, list.notice),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { class: "instances" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ...["instance", "type", "sessions", "tokens", "gold relevant"].map((t) => h("th", {}, t)),
            ...shownCells.map((c) => cellHead(d.cells, short, c))
          )
        ),
        h("tbody", {}, rows)
      )
    ),
    next,
    cellKey(d.cells, short, shownCells),
    h("p", { class: "muted" }, "Each cell column shows the sessions it selected and its main metric for the instance.")
  ]
}

// ------------------------------------------------------------------------------------------- compare

const comparePage = async (p: URLSearchParams) => {
  const { runs } = await get<RunList>("/api/runs")
  const a = p.get("a") ?? runs[0]?.id ?? ""
  const b = p.get("b") ?? a
  const [da, db] = await Promise.all([get<RunDetail>("/api/run", { run: a }), get<RunDetail>("/api/run", { run: b })])
  const ca = p.get("ca") ?? da.cells[0]?.id ?? ""
  const cb = p.get("cb") ?? db.cells[1]?.id ?? db.cells[0]?.id ?? ""
  // The server resolves the URL's cells (id, id prefix, name or @k): the choices show what it chose.
  const v = await get<CompareView>("/api/compare", { a, ca, b, cb })
  setWhere("compare")
  const runOptions = runs.map((r) => [r.id, `${r.id} (${r.config}, ${r.data})`] as const)
  const form = h(
    "form",
    { id: "pick" },
    h(
      "fieldset",
      {},
      h("legend", {}, "A"),
      select("a", runOptions, a),
      select(
        "ca",
        da.cells.map((c) => [c.id, cellName(da.cells, c.id)] as const),
        v.a.cell.id
      )
    ),
    h(
      "fieldset",
      {},
      h("legend", {}, "B"),
      select("b", runOptions, b),
      select(
        "cb",
        db.cells.map((c) => [c.id, cellName(db.cells, c.id)] as const),
        v.b.cell.id
      )
    ),
    h("button", { type: "submit", id: "apply" }, "compare")
  )
  form.addEventListener("submit", (event) => {
    event.preventDefault()
    const data = new FormData(form as HTMLFormElement)
    const next = { a: String(data.get("a")), b: String(data.get("b")) }
    // A changed run keeps no cell choice of the other run.
    location.hash = hashOf("compare", {
      ...next,
      ca: next.a === a ? String(data.get("ca")) : undefined,
      cb: next.b === b ? String(data.get("cb")) : undefined
    })
  })
  const outcome = (o: CellOutcome) =>
    o.status === "failed" ? "failed" : `{${(o.selected ?? []).join(", ")}} ${fmt(o.main)}`
  return [
    h("h1", {}, "Two cells side by side"),
    form,
    h(
      "p",
      {},
      `A: ${a} ${cellName(da.cells, v.a.cell.id)}; B: ${b} ${cellName(db.cells, v.b.cell.id)}. ${v.shared} instances in both; ${v.disagreements.length} where the selections differ or one failed.`
    ),
    ...v.warnings.map((w) => h("p", { class: "notice" }, w)),
    h("div", { class: "compare" }, ...v.tables.map(renderTable)),
    h("h2", {}, "Instances where they disagree"),
    h(
      "table",
      { class: "instances" },
      h("thead", {}, h("tr", {}, ...["instance", "type", "A", "B"].map((t) => h("th", {}, t)))),
      h(
        "tbody",
        {},
        ...v.disagreements.map((x) =>
          h(
            "tr",
            { "data-instance": x.instance },
            h(
              "td",
              {},
              link(x.instance, "instance", { run: a, id: x.instance }),
              a === b ? null : [" ", link("(B's run)", "instance", { run: b, id: x.instance })]
            ),
            h("td", {}, x.type),
            h("td", {}, outcome(x.a)),
            h("td", {}, outcome(x.b))
          )
        )
      )
    )
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
