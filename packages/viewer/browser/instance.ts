/** The instance page: the request, the gold labels, the sessions each cell selected with its scores and ranks, and each cell's outputs and model calls. */
import type { Calls } from "@cupid-lab/results"
import type { InstanceCalls } from "../src/Catalog.js"
import type { InstanceDetail } from "../src/Instances.js"
import { cellHead, cellKey, cellName, fmt, get, h, link, metricName, runTabs, setWhere, shortNames } from "./dom.js"

type CellResult = InstanceDetail["results"][number]

// ------------------------------------------------------------------------------------------ instance

/** A retriever's score in a few characters (the exact value is in the cell's tooltip). */
const scoreText = (x: number | null): string =>
  x === null || !Number.isFinite(x) ? "–" : Math.abs(x) >= 1000 ? x.toFixed(0) : Number(x.toPrecision(3)).toString()

const ratingText = (x: number) => (x === 1 ? "✓ 1" : x === 0 ? "✗ 0" : `◐ ${x}`)

/** Each checklist item with its rating: the gold items (covered by the inferred preference?) and the inferred ones (covered by the gold?). */
const ratingsTable = (ratings: CellResult["ratings"]) =>
  h(
    "table",
    { class: "ratings" },
    h("thead", {}, h("tr", {}, h("th", {}, "checklist item"), h("th", {}, "side"), h("th", {}, "rating"))),
    h(
      "tbody",
      {},
      ...ratings.map((x) =>
        h(
          "tr",
          { "data-side": x.side, class: x.rating === 1 ? "covered" : x.rating === 0 ? "missed" : "partial" },
          h("td", {}, x.item),
          h("td", {}, x.side === "gold" ? "gold (covered by the inference?)" : "inferred (covered by the gold?)"),
          h("td", { class: "num" }, ratingText(x.rating))
        )
      )
    )
  )

/** One call of a transcript: what was sent, what came back, what the caller read, and how it went. */
const callView = (c: Calls.Call, n: number) => {
  const facts = [
    `${c.provider}/${c.model}`,
    c.cached
      ? "answered by the cache"
      : c.batch !== undefined
        ? `in batch ${c.batch}`
        : `${c.requests} request${c.requests === 1 ? "" : "s"}${c.requests > 1 ? ` (${c.requests - 1} retr${c.requests === 2 ? "y" : "ies"})` : ""}`,
    `${c.latencyMs} ms`,
    c.limiterMs === undefined ? null : `limiter ${c.limiterMs} ms`,
    c.kind === "service" ? null : `${c.promptTokens} + ${c.completionTokens} tokens`,
    c.finishReason === undefined ? null : `finish: ${c.finishReason}`,
    c.inputs === undefined ? null : `${c.inputs} ${c.kind === "service" ? "sessions" : "inputs"}`
  ].filter((x): x is string => x !== null)
  const read =
    c.read === undefined
      ? null
      : c.read.ok
        ? h(
            "p",
            { class: "read" },
            h("b", {}, "read: "),
            !("value" in c.read)
              ? "yes (transcripts: counts keeps no text)"
              : typeof c.read.value === "string"
                ? c.read.value
                : JSON.stringify(c.read.value)
          )
        : h(
            "p",
            { class: "failed read" },
            h("b", {}, "could not read the answer"),
            c.read.reason === undefined ? "" : `: ${c.read.reason}`
          )
  return h(
    "details",
    { class: `call${c.failed || c.error !== undefined ? " failed" : ""}`, "data-stage": c.stage },
    h("summary", {}, `${n}. ${c.stage} · ${c.kind} · `, facts.join(" · "), c.error === undefined ? "" : " · failed"),
    c.error === undefined ? null : h("p", { class: "failed" }, c.error),
    read,
    ...(c.request?.messages ?? []).map((m) =>
      h("div", { class: `message ${m.role}` }, h("b", {}, m.role), h("pre", {}, m.content))
    ),
    // A service call (an http stage) sent a JSON body to a url instead of messages.
    c.kind !== "service" || c.request === undefined
      ? null
      : h(
          "div",
          { class: "message user" },
          h("b", {}, `POST ${String(c.request["url"])}`),
          h("pre", {}, JSON.stringify(c.request["body"], null, 2))
        ),
    c.request === undefined || c.kind === "service"
      ? null
      : h(
          "p",
          { class: "muted" },
          "settings: ",
          JSON.stringify(Object.fromEntries(Object.entries(c.request).filter(([k]) => k !== "messages")))
        ),
    c.answer === undefined
      ? null
      : h(
          "div",
          { class: "message answer" },
          h("b", {}, "raw answer"),
          answerCut(c.answer, c.answerChars, c.answerSha256),
          h("pre", {}, c.answer)
        )
  )
}

/** Says that a transcript keeps only the start of a long answer (calls.jsonl caps each answer). */
const answerCut = (kept: string, chars: number | undefined, sha256: string | undefined) =>
  chars === undefined || chars <= kept.length
    ? null
    : h(
        "p",
        { class: "muted answer-cut" },
        `first ${kept.length} of ${chars} characters${sha256 === undefined ? "" : ` (sha256 ${sha256})`}`
      )

/** A cell's model calls on the instance, grouped by stage in the order they were made. */
const callsSection = (t: InstanceCalls["cells"][number] | undefined) =>
  t === undefined
    ? null
    : h(
        "details",
        { class: "transcript" },
        h(
          "summary",
          {},
          `Model calls: ${t.calls.length} (${t.calls.filter((c) => c.cached).length} from the cache, ${t.calls.reduce((n, c) => n + c.requests, 0)} requests sent)`,
          t.attempts > 1 ? `; latest of ${t.attempts} attempts (${t.ranAt})` : ""
        ),
        ...t.calls.map((c, i) => callView(c, i + 1))
      )

export const instancePage = async (p: URLSearchParams) => {
  const run = p.get("run") ?? ""
  const id = p.get("id") ?? ""
  const [d, transcripts] = await Promise.all([
    get<InstanceDetail>("/api/instance", { run, id }),
    get<InstanceCalls>("/api/calls", { run, id })
  ])
  const callsOf = new Map(transcripts.cells.map((c) => [c.cell, c]))
  setWhere(link(run, "run", { run }), link("instances", "instances", { run }), id)
  const withResult = d.cells.filter((c) => d.results.some((r) => r.cell === c.id))
  const short = shortNames(d.cells)
  // Each cell's rank and score of each session, from its retriever's ranking.
  const ranks = new Map(d.results.map((r) => [r.cell, new Map((r.ranking ?? []).map((x) => [x.session, x]))]))
  const sessionRows = d.sessions.map((s) =>
    h(
      "tr",
      { "data-session": s.id, class: s.label === null ? undefined : `label-${s.label}` },
      h("td", { class: "num" }, String(s.position)),
      h("td", {}, s.id),
      h("td", { class: "gold" }, s.label ?? "?"),
      h("td", {}, s.factor ?? "–"),
      ...withResult.map((c) => {
        const picked = s.selectedBy.includes(c.id)
        const r = ranks.get(c.id)?.get(s.id)
        return h(
          "td",
          {
            class: picked ? "sel picked" : "sel",
            "data-cell": c.id,
            ...(r === undefined
              ? {}
              : { "data-rank": String(r.rank), "data-score": r.score === null ? "" : String(r.score) }),
            title: `${cellName(d.cells, c.id)}: ${picked ? "selected" : "not selected"}${r === undefined ? "" : `; rank ${r.rank}, score ${r.score ?? "–"}`}`
          },
          h("span", { class: "pick" }, picked ? "●" : ""),
          r === undefined ? null : h("span", { class: "rank" }, `#${r.rank}`),
          r === undefined ? null : h("span", { class: "score" }, scoreText(r.score))
        )
      }),
      h(
        "td",
        { class: "dialogue" },
        s.turns.length === 0
          ? "–"
          : h(
              "details",
              {},
              h("summary", {}, `${s.turns.length} turns: ${(s.turns[0]?.content ?? "").slice(0, 70)}…`),
              ...s.turns.map((t) =>
                h(
                  "div",
                  { class: `turn ${t.role === "user" ? "user" : "assistant"}` },
                  h("b", {}, `${t.role}: `),
                  t.content
                )
              ),
              s.preference === null
                ? null
                : h("p", { class: "muted" }, `gold preference of this session: ${s.preference}`)
            )
      )
    )
  )
  const results = d.results.map((r) => {
    const headline = r.scores.filter((x) => x.headline)
    const scoreLine = (x: CellResult["scores"][number]) =>
      `${metricName({ name: x.metric, heuristic: x.heuristic })} ${fmt(x.value)}${"num" in x ? ` (${x.num}/${x.den})` : ""}`
    const covered = (side: "gold" | "inferred") => {
      const items = r.ratings.filter((x) => x.side === side)
      return items.length === 0
        ? null
        : `${side} items ${Number(items.reduce((n, x) => n + x.rating, 0).toFixed(2))} of ${items.length}`
    }
    return h(
      "section",
      { class: "result", "data-cell": r.cell },
      h(
        "h3",
        {},
        cellName(d.cells, r.cell),
        " ",
        h("span", { class: r.status === "ok" ? "tag" : "tag failed" }, r.status)
      ),
      h(
        "p",
        { class: "line" },
        h("b", {}, "selected "),
        r.selected === null ? "–" : `{${r.selected.join(", ")}}`,
        ...headline.map((x) => [
          " · ",
          x.metric === d.main ? h("b", { class: "main-metric" }, scoreLine(x)) : scoreLine(x)
        ])
      ),
      r.error === null
        ? null
        : h("p", { class: "failed" }, `${r.error.stage} (${r.error.plugin}) ${r.error.tag}: ${r.error.message}`),
      r.inference === null ? null : h("p", { class: "inferred" }, h("b", {}, "inferred: "), r.inference),
      r.ratings.length === 0
        ? null
        : h(
            "details",
            { class: "ratings" },
            h(
              "summary",
              {},
              "checklist covered: ",
              [covered("gold"), covered("inferred")].filter((x) => x !== null).join("; ")
            ),
            ratingsTable(r.ratings)
          ),
      r.generation === null
        ? null
        : h(
            "details",
            {},
            h("summary", {}, `generation (${r.generation.length} characters)`),
            h("p", { class: "pre" }, r.generation)
          ),
      h(
        "details",
        { class: "all-scores" },
        h("summary", {}, `all ${r.scores.length} metrics, usage`),
        h(
          "table",
          { class: "scores" },
          h(
            "tbody",
            {},
            ...r.scores.map((x) =>
              h(
                "tr",
                { "data-metric": x.metric },
                h("td", {}, metricName({ name: x.metric, heuristic: x.heuristic })),
                h("td", { class: "num" }, fmt(x.value), "num" in x ? ` (${x.num}/${x.den})` : "")
              )
            )
          )
        ),
        h(
          "p",
          { class: "muted" },
          `usage: ${r.usage.calls} calls, ${r.usage.promptTokens} prompt + ${r.usage.completionTokens} completion tokens`
        )
      ),
      callsSection(callsOf.get(r.cell))
    )
  })
  return [
    h("h1", {}, `${d.id} (${d.type})`),
    runTabs(run, "instances"),
    d.datasetNote === null ? null : h("p", { class: "notice" }, d.datasetNote),
    transcripts.unreadable === 0
      ? null
      : h(
          "p",
          { class: "notice" },
          `${transcripts.unreadable} line${transcripts.unreadable === 1 ? "" : "s"} of calls.jsonl about this instance could not be read (the file was edited or damaged); the calls shown leave them out.`
        ),
    h("h2", {}, "Request"),
    h("p", { class: "pre", id: "request" }, d.request ?? "–"),
    d.gold === null
      ? null
      : h(
          "div",
          { class: "gold-box" },
          h("p", {}, h("b", {}, "gold context factor: "), d.gold.factor),
          h("p", {}, h("b", {}, "gold preference: "), d.gold.preference),
          h("b", {}, "checklist"),
          h("ul", { id: "checklist" }, ...d.gold.checklist.map((c) => h("li", {}, c)))
        ),
    h("h2", {}, "History"),
    h(
      "p",
      { class: "muted" },
      "Gold label of each prior session for this request (relevant: same factor and preference; stale: same factor, earlier preference; other). Under each cell: ● when it selected the session, then the session's rank and score in the cell's retriever ranking."
    ),
    h(
      "div",
      { class: "scroll" },
      h(
        "table",
        { class: "sessions" },
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            h("th", {}, "#"),
            h("th", {}, "session"),
            h("th", {}, "gold"),
            h("th", {}, "factor"),
            ...withResult.map((c) => cellHead(d.cells, short, c.id)),
            h("th", {}, "dialogue")
          )
        ),
        h("tbody", {}, sessionRows)
      )
    ),
    cellKey(
      d.cells,
      short,
      withResult.map((c) => c.id)
    ),
    d.otherSelected.length === 0
      ? null
      : h(
          "p",
          { class: "notice" },
          "Selected but not in the history above (added by a transform): ",
          d.otherSelected
            .map((o) => `${o.session} by ${o.cells.map((c) => cellName(d.cells, c)).join(", ")}`)
            .join("; ")
        ),
    h("h2", {}, "Cells"),
    h(
      "p",
      { class: "muted" },
      `Each cell's selection, its headline metrics${d.main === null ? "" : ` (${d.main} in bold)`} and inferred preference; open a cell's parts for the checklist ratings, the generation, every metric and the model calls.`
    ),
    h("div", { class: "results" }, ...results)
  ]
}
