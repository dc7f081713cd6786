/**
 * The results viewer's catalog and HTTP API, on runs written by the real runner (test plugins,
 * hand-made data whose selections are known): the run list, the tables with best marks, the
 * instance filters (type, cell, failed, disagreement, search, sort), an instance page with the gold
 * labels next to each cell's selection, two cells side by side, the errors, and the server's
 * headers, Host check and status codes over real HTTP on loopback. The page itself is driven in
 * Chromium by viewer-browser.test.ts.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import * as path from "node:path"
import type { Dataset } from "@cupid-lab/data"
import { Config } from "@cupid-lab/runner"
import type { Table } from "@cupid-lab/report"
import { Catalog, type Entries, type Instances, Server } from "@cupid-lab/viewer"

import { flaky, instance, opener, tempDir, testPlugins, visibleSignature } from "./support.js"
import * as Sweeps from "../src/Sweeps.js"

const data = [
  instance("p1", "consistent", [1, 2]),
  instance("p1", "contrastive", [0]),
  instance("p2", "changing", [2, 3])
]
const failing = { failing: new Set([visibleSignature(data[2]!.query)]) }
const plugins = [...testPlugins, flaky(failing)]

const configText = (name: string, extra: ReadonlyArray<string> = []) =>
  [
    ...extra,
    `name: ${name}`,
    "seed: 5",
    "pipeline: { inferrer: echo }",
    "scorers: [hits]",
    "cells:",
    "  - { name: first, retriever: first }",
    "  - { name: latest2, retriever: { use: latest, k: 2 } }",
    "  - { name: gold, retriever: gold }",
    "  - { name: flaky, retriever: flaky }"
  ].join("\n")

const sweep = (root: string, name: string, fingerprint = "fixture", extra: ReadonlyArray<string> = []) =>
  Effect.gen(function* () {
    const parsed = yield* Config.parse(configText(name, extra), `${name}.yaml`, {})
    const config = { ...parsed, out: path.join(root, name), outGiven: false, cacheDir: path.join(root, "..", "cache") }
    return yield* Sweeps.sweep(config, { plugins, openDataset: opener(data, fingerprint) })
  })

/** Two runs of config v (other data), one of w; the catalog reads texts through the same opener. */
const setup = Effect.gen(function* () {
  const root = path.join(tempDir(), "runs")
  const v1 = yield* sweep(root, "v")
  const v2 = yield* sweep(root, "v", "other data")
  const w = yield* sweep(root, "w")
  const catalog = yield* Catalog.make(root, { openDataset: opener(data) })
  const id = (out: string) => path.relative(root, out).split(path.sep).join("/")
  return { root, catalog, v1: id(v1.out), v2: id(v2.out), w: id(w.out) }
})

describe("viewer catalog", () => {
  it.effect("lists every run with its identity, latest mark and headline", () =>
    Effect.gen(function* () {
      const { catalog, v1, v2, w } = yield* setup
      const { runs, unreadable } = yield* catalog.list
      expect(runs.map((r) => r.id).sort()).toEqual([v1, v2, w].sort())
      expect(unreadable).toEqual([])
      expect(runs.every((r) => r.problems.length === 0)).toBe(true)
      const byId = new Map(runs.map((r) => [r.id, r]))
      // v2 ran after v1 with the same config: latest points at it
      expect([byId.get(v1)!.latest, byId.get(v2)!.latest, byId.get(w)!.latest]).toEqual([false, true, true])
      expect(byId.get(v2)!.fingerprint).toBe("other data")
      const head = byId.get(v1)!
      expect([head.config, head.cells, head.instances, head.failed]).toEqual(["v", 4, 3, 1])
      // main metric: retrieval.hit (the heuristic inference F1 is passed over); gold is an oracle, so
      // the best non-oracle cell is latest2 (mean of 0.5, 0, 1) over first (0, 1, 0) and flaky (2 instances)
      expect(head.main).toEqual({ metric: "retrieval.hit", heuristic: false, cell: "latest2", value: 0.5, n: 3 })
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect(
    "lists a run it cannot read with the reason, says which records it could not read, and serves no path outside the root",
    () =>
      Effect.gen(function* () {
        const { root, catalog, v1 } = yield* setup
        const broken = path.join(root, "broken", "0123456789ab")
        fs.mkdirSync(broken, { recursive: true })
        fs.writeFileSync(path.join(broken, "summary.json"), `{"config": {"name": "x"}}`)
        fs.writeFileSync(path.join(root, v1, "run.json"), "{ not json")
        // An entry that cannot be read (a link to nothing) may hide runs: it is named, not skipped.
        fs.symlinkSync(path.join(root, "gone"), path.join(root, "dangling"))
        const { runs, unreadable } = yield* catalog.list
        expect(unreadable).toEqual([
          {
            id: "dangling",
            reason: expect.stringMatching(/^cannot be read \(.*ENOENT.*\); runs below it are not shown$/)
          },
          { id: "broken/0123456789ab", reason: expect.stringContaining(`${path.join(broken, "summary.json")}: `) }
        ])
        expect(runs.length).toBe(3)
        const withProblem = runs.find((r) => r.id === v1)!
        expect([withProblem.started, withProblem.problems]).toEqual([
          null,
          [expect.stringMatching(/^run\.json cannot be read \(.*\); start time and duration are not shown$/)]
        ])
        // ... and the run still opens, with the same note.
        const opened = yield* catalog.detail(v1)
        expect([opened.entry.started, opened.entry.problems]).toEqual([null, withProblem.problems])
        for (const id of ["..", "../runs", root, `${v1}/../../..`]) {
          const refused = yield* Effect.flip(catalog.detail(id))
          expect([refused.status, refused.message], id).toEqual([404, `no run "${id}" under ${catalog.root}`])
        }
      }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("tables per type (the reports' headline tables) mark the best non-oracle cell of each column", () =>
    Effect.gen(function* () {
      const { catalog, v1 } = yield* setup
      const d = yield* catalog.detail(v1)
      expect(d.main).toBe("retrieval.hit")
      expect(d.metrics[0]!.name).toBe("retrieval.hit")
      expect(d.tables.map((t) => t.id)).toEqual([
        "headline-all",
        "headline-consistent",
        "headline-contrastive",
        "headline-changing"
      ])
      const all = d.tables[0]!
      expect(all.columns.slice(0, 3).map((c) => c.label)).toEqual(["cell", "N", "retrieval.hit"])
      const hit = (t: Table.Table, name: string) =>
        t.rows.find((r) => r.cells[0]!.text.split(" ")[0] === name)!.cells[2]!
      expect([hit(all, "first").value, hit(all, "latest2").value, hit(all, "gold").value]).toEqual([1 / 3, 0.5, 1])
      const best = (t: Table.Table) => t.rows.filter((r) => r.cells[2]!.best === true).map((r) => r.cells[0]!.text)
      // gold reads gold labels: never best; flaky failed on p2:changing and is scored on 2
      expect(best(all)).toEqual(["latest2"])
      expect(all.rows.find((r) => r.cells[0]!.text === "flaky")!.cells[1]!.value).toBe(2)
      // contrastive (relevant s1): only first selects it; changing (s3, s4): latest2 finds both, flaky (s4) one
      expect(best(d.tables[2]!)).toEqual(["first (baseline)"])
      expect(best(d.tables[3]!)).toEqual(["latest2"])
      expect(d.cells.find((c) => c.name === "gold")!.oracle).toBe(true)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("every cell against every other, as the reports test them", () =>
    Effect.gen(function* () {
      const { catalog, v1 } = yield* setup
      const p = yield* catalog.pairwise(v1)
      expect(p.note).toMatch(/Holm/)
      expect(p.slices.map((s) => s.slice)).toEqual(["all", "consistent", "contrastive", "changing"])
      // n = 1 to 3 per type: no difference can reach significance, and the view says so
      expect(p.slices.every((s) => s.tooSmall !== null)).toBe(true)
      // rows are the cells by number, with their names
      expect(p.slices[0]!.table.rows.map((r) => r.cells.slice(0, 2).map((c) => c.text))).toEqual([
        ["1", "first (baseline)"],
        ["2", "latest2"],
        ["3", "gold ‡"],
        ["4", "flaky"]
      ])
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect(
    "opens a run as its reports do: the verdict per instance type, the leaderboard and the report's charts",
    () =>
      Effect.gen(function* () {
        const { catalog, v1 } = yield* setup
        const v = yield* catalog.verdict(v1)
        expect(v.metric).toBe("retrieval.hit")
        expect(v.intro).toMatch(/^Ranked on retrieval\.hit .* against the baseline first;/)
        expect(v.findings.map((f) => f.slice)).toEqual(["all", "consistent", "contrastive", "changing"])
        // latest2 0.5 leads first (1/3, the baseline) and flaky (0 on its 2 instances); gold reads gold labels: a ceiling
        expect(v.findings[0]!.sentence).toMatch(
          /^All instances: latest2 leads on retrieval\.hit with 0\.500 \[.*\] on n = 3 instances, ahead of the baseline and runner-up first \(0\.333\) by 0\.167/
        )
        const board = v.leaderboard!
        expect(board.id).toBe("leaderboard")
        expect(board.rows.map((r) => r.cells.slice(0, 2).map((c) => c.text))).toEqual([
          ["1", "latest2"],
          ["2", "first (baseline)"],
          ["3", "flaky"],
          ["ceiling", "gold ‡"]
        ])
        expect(board.rows.map((r) => r.cells[3]!.text)).toEqual(["3", "3", "2", "3"])
        const f = yield* catalog.figures(v1)
        expect(f.figures.map((x) => x.section)).toEqual(["overview", "recency", "history", "cost"])
        for (const x of f.figures) {
          expect(x.svg).toMatch(/^<svg [^>]*class="chart chart-/)
          expect(x.svg).toContain("latest2")
          expect(x.caption.length).toBeGreaterThan(20)
        }
        expect(f.figures[0]!.caption).toMatch(/^retrieval\.hit .* per cell/)
        // computed once per run and kept
        expect(yield* catalog.figures(v1)).toBe(f)
      }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("filters instances by type, failed cell, disagreement and text, and sorts them", () =>
    Effect.gen(function* () {
      const { catalog, v1 } = yield* setup
      const ids = (l: Instances.InstanceList) => l.items.map((i) => i.id)
      expect(ids(yield* catalog.instances(v1, {}))).toEqual(["p1:consistent", "p1:contrastive", "p2:changing"])
      expect(ids(yield* catalog.instances(v1, { type: "contrastive" }))).toEqual(["p1:contrastive"])
      expect(ids(yield* catalog.instances(v1, { failed: true }))).toEqual(["p2:changing"])
      expect(ids(yield* catalog.instances(v1, { cell: "flaky", failed: true }))).toEqual(["p2:changing"])
      expect(ids(yield* catalog.instances(v1, { cell: "first", failed: true }))).toEqual([])
      // first {s1} against gold: {s2,s3} / {s1} / {s3,s4}
      const firstGold = yield* catalog.instances(v1, { a: "first", b: "gold" })
      expect(ids(firstGold)).toEqual(["p1:consistent", "p2:changing"])
      expect(firstGold.description).toBe("cells first and gold selected different sessions, or one failed")
      // the ids the selectors named (by name, @k or id prefix), for the page's choices
      const [firstId, goldId] = firstGold.items[0]!.outcomes.map((o) => o.cell)
      expect(firstGold.resolved).toEqual({ cell: null, a: firstId, b: goldId })
      const byOther = yield* catalog.instances(v1, { cell: "@3", a: firstGold.resolved.a!.slice(0, 6), b: "gold" })
      expect(byOther.resolved).toEqual({ cell: firstGold.resolved.b, a: firstGold.resolved.a, b: firstGold.resolved.b })
      expect(byOther.description).toBe("cell gold; cells first and gold selected different sessions, or one failed")
      expect(firstGold.items[0]!.outcomes.map((o) => o.selected)).toEqual([["s1"], ["s2", "s3"]])
      // latest2 {s3,s4} against gold
      expect(ids(yield* catalog.instances(v1, { a: "@2", b: "@3" }))).toEqual(["p1:consistent", "p1:contrastive"])
      // flaky {s4} against latest2 {s3,s4}: differ where both ran, and where flaky failed
      expect(ids(yield* catalog.instances(v1, { a: "flaky", b: "latest2" }))).toEqual([
        "p1:consistent",
        "p1:contrastive",
        "p2:changing"
      ])
      // search: a dataset text (the request "help p2") and a result text (echo quotes the first session)
      expect(ids(yield* catalog.instances(v1, { q: "HELP p2" }))).toEqual(["p2:changing"])
      expect(ids(yield* catalog.instances(v1, { q: "p1 a0" }))).toEqual(["p1:contrastive"])
      // sort by the main metric of latest2 (0.5, 0, 1), descending
      expect(ids(yield* catalog.instances(v1, { cell: "latest2", sort: "metric", desc: true }))).toEqual([
        "p2:changing",
        "p1:consistent",
        "p1:contrastive"
      ])
      const page = yield* catalog.instances(v1, { offset: 1, limit: 1 })
      expect([page.total, page.matched, page.offset, ids(page)]).toEqual([3, 3, 1, ["p1:contrastive"]])
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect(
    "a main metric that is an F1 of two ratios has a value per instance: the F1 of that instance's counts",
    () =>
      Effect.gen(function* () {
        const root = path.join(tempDir(), "runs")
        const f1 = yield* sweep(root, "f", "fixture", ["report: { main: inference.f1 }"])
        const catalog = yield* Catalog.make(root, { openDataset: opener(data) })
        const id = path.relative(root, f1.out).split(path.sep).join("/")
        const list = yield* catalog.instances(id, { a: "latest2", b: "first" })
        // p1:consistent (relevant s2, s3): latest2 {s3, s4} finds 1 of 2 selected and of 2 relevant: F1 0.5; first {s1} finds none: 0
        expect(list.items[0]!.id).toBe("p1:consistent")
        expect(list.items[0]!.outcomes.map((o) => o.main)).toEqual([0.5, 0])
      }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("an instance page puts each cell's selection next to the gold labels", () =>
    Effect.gen(function* () {
      const { catalog, v1 } = yield* setup
      const d = yield* catalog.instance(v1, "p1:consistent")
      expect([d.request, d.gold?.preference, d.datasetNote]).toEqual(["help p1", "pA", null])
      const id = (name: string) => d.cells.find((c) => c.name === name)!.id
      expect(d.sessions.map((s) => [s.id, s.position, s.label])).toEqual([
        ["s1", 1, "other"],
        ["s2", 2, "relevant"],
        ["s3", 3, "relevant"],
        ["s4", 4, "other"]
      ])
      const by = Object.fromEntries(d.sessions.map((s) => [s.id, [...s.selectedBy].sort()]))
      expect(by).toEqual({
        s1: [id("first")],
        s2: [id("gold")],
        s3: [id("gold"), id("latest2")].sort(),
        s4: [id("flaky"), id("latest2")].sort()
      })
      expect(d.sessions[1]!.turns[0]).toEqual({ role: "user", content: "p1 a1 text" })
      const latest2 = d.results.find((r) => r.cell === id("latest2"))!
      expect(latest2.inference).toBe("p1 a2 text / p1 other 3 words here")
      expect(latest2.scores.find((s) => s.metric === "retrieval.hit")).toEqual({
        metric: "retrieval.hit",
        heuristic: false,
        headline: true,
        value: 0.5
      })
      expect(latest2.scores.find((s) => s.metric === "inference.p")).toEqual({
        metric: "inference.p",
        heuristic: true,
        headline: false,
        value: 0.5,
        num: 1,
        den: 2
      })
      // the main metric first, then the headline metrics, then the rest, each by name
      expect(d.main).toBe("retrieval.hit")
      expect(latest2.scores[0]!.metric).toBe("retrieval.hit")
      const headlines = latest2.scores.map((s) => s.headline)
      expect(headlines).toEqual([...headlines].sort((x, y) => Number(y) - Number(x)))
      const rest = latest2.scores.filter((s) => !s.headline).map((s) => s.metric)
      expect(rest).toEqual([...rest].sort())
      // each retriever's ranking, best first, read from results.jsonl: first scores -index, latest and flaky +index; gold ranks nothing
      const ranking = (name: string) =>
        d.results.find((r) => r.cell === id(name))!.ranking?.map((x) => [x.session, x.score, x.rank])
      expect(ranking("first")).toEqual([
        ["s1", 0, 1],
        ["s2", -1, 2],
        ["s3", -2, 3],
        ["s4", -3, 4]
      ])
      expect(ranking("latest2")).toEqual([
        ["s4", 3, 1],
        ["s3", 2, 2],
        ["s2", 1, 3],
        ["s1", 0, 4]
      ])
      expect(ranking("flaky")).toEqual(ranking("latest2"))
      expect(ranking("gold")).toEqual([])
      const failed = (yield* catalog.instance(v1, "p2:changing")).results.find((r) => r.cell === id("flaky"))!
      expect([failed.status, failed.error?.message, failed.ranking]).toEqual([
        "failed",
        "retrieve (flaky): no luck with this history",
        null
      ])
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("says when the dataset's text is not the run's", () =>
    Effect.gen(function* () {
      const { catalog, v2 } = yield* setup
      const d = yield* catalog.instance(v2, "p1:consistent")
      expect(d.datasetNote).toMatch(
        /has changed since the run \(fingerprint .*, the run's .*\): its text may not be what the cells saw/
      )
      expect(d.sessions[2]!.label).toBe("relevant")
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("an instance whose dataset row is now invalid says so, with the row and the reason", () =>
    Effect.gen(function* () {
      const root = path.join(tempDir(), "runs")
      const run = yield* sweep(root, "s")
      const withoutLast = (source: string, options: Dataset.LoadOptions) =>
        Effect.map(opener(data.slice(0, 2))(source, options), (o) => ({
          ...o,
          skipped: () => [{ row: "3", id: "p2:changing", reason: "field current_request: expected a string" }]
        }))
      const catalog = yield* Catalog.make(root, { openDataset: withoutLast })
      const d = yield* catalog.instance(path.relative(root, run.out).split(path.sep).join("/"), "p2:changing")
      expect(d.datasetNote).toBe(
        "instance p2:changing is not in the run's dataset any more; 1 rows of it were skipped as invalid (row 3 (p2:changing): field current_request: expected a string)"
      )
      // the sessions are still shown by id, with the gold labels the results hold
      expect(d.sessions.map((x) => [x.id, x.label])).toEqual([
        ["s1", "other"],
        ["s2", "other"],
        ["s3", "relevant"],
        ["s4", "relevant"]
      ])
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("compares a cell of one run with a cell of another on their shared instances", () =>
    Effect.gen(function* () {
      const { catalog, v1, w } = yield* setup
      const view = yield* catalog.compare({ run: v1, cell: "first" }, { run: w, cell: "latest2" })
      expect([view.a.cell.name, view.b.cell.name, view.shared]).toEqual(["first", "latest2", 3])
      expect(view.disagreements.map((x) => x.instance)).toEqual(["p1:consistent", "p1:contrastive", "p2:changing"])
      // Paired over the 3 shared instances: first (0, 1, 0) against latest2 (0.5, 0, 1). The
      // differences 0.5, -1, 1 have mean 1/6, and all 8 sign patterns are at least as extreme: p = 1.
      const hit = view.tables.find((t) => t.id === "compare-retrieval.hit")!
      expect(hit.rows.map((r) => r.cells.map((c) => [c.text, c.detail ?? null]))).toEqual([
        [
          ["first / latest2", null],
          ["0.333 → 0.500: +0.167 [-1.000, +1.000]", "p=1.000 Holm=1.000 n=3"],
          ["0.000 → 0.500: +0.500 [n/a]", "p=1.000 Holm=1.000 n=1"],
          ["1.000 → 0.000: -1.000 [n/a]", "p=1.000 Holm=1.000 n=1"],
          ["0.000 → 1.000: +1.000 [n/a]", "p=1.000 Holm=1.000 n=1"]
        ]
      ])
      expect(view.warnings).toEqual([])
      const same = yield* catalog.compare({ run: v1, cell: "first" }, { run: w, cell: "first" })
      expect(same.disagreements).toEqual([])
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("names what it cannot find, and the valid choices", () =>
    Effect.gen(function* () {
      const { catalog, v1 } = yield* setup
      const noRun = yield* Effect.flip(catalog.detail("nope/000000000000"))
      expect([noRun.status, noRun.message]).toEqual([404, `no run "nope/000000000000" under ${catalog.root}`])
      const noCell = yield* Effect.flip(catalog.instances(v1, { a: "bm25", b: "first" }))
      expect(noCell.status).toBe(404)
      expect(noCell.message).toContain(
        `no cell "bm25" (by id, id prefix of 4+ characters, name, or @k); cells: @1 first (`
      )
      const oneSide = yield* Effect.flip(catalog.instances(v1, { a: "first" }))
      expect([oneSide.status, oneSide.message]).toEqual([400, "disagreement needs two cells: give both a and b"])
      const noInstance = yield* Effect.flip(catalog.instance(v1, "p9:consistent"))
      expect([noInstance.status, noInstance.message]).toEqual([404, `run ${v1} has no instance "p9:consistent"`])
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.effect("a run that changes on disk is read again", () =>
    Effect.gen(function* () {
      const { root, catalog, w } = yield* setup
      expect((yield* catalog.instances(w, {})).total).toBe(3)
      const file = path.join(root, w, "results.jsonl")
      const kept = fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "" && !l.includes('"p2:changing"'))
      fs.writeFileSync(file, `${kept.join("\n")}\n`)
      expect((yield* catalog.instances(w, {})).total).toBe(2)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )
})

interface Reply {
  readonly status: number
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

/** A GET with an explicit Host header (fetch does not let a test set one). */
const get = (url: string, host?: string) =>
  Effect.async<Reply>((resume) => {
    const u = new URL(url)
    const req = http.get(
      {
        hostname: u.hostname,
        port: u.port,
        path: `${u.pathname}${u.search}`,
        headers: host === undefined ? {} : { host }
      },
      (res) => {
        let body = ""
        res.setEncoding("utf8")
        res.on("data", (chunk: string) => (body += chunk))
        res.on("end", () => resume(Effect.succeed({ status: res.statusCode ?? 0, headers: res.headers, body })))
      }
    )
    req.on("error", (e) => resume(Effect.die(e)))
  })

describe("viewer server", () => {
  it.scoped(
    "serves the page and the API with a strict CSP, refuses foreign Host headers, and answers errors as JSON",
    () =>
      Effect.gen(function* () {
        const { root, v1 } = yield* setup
        const { url } = yield* Server.start({ root, port: 0, catalog: { openDataset: opener(data) } })
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/)
        const page = yield* get(url)
        expect(page.status).toBe(200)
        expect(page.headers["content-security-policy"]).toBe(Server.contentSecurityPolicy)
        expect(page.headers["x-content-type-options"]).toBe("nosniff")
        expect(page.body).toContain(`<script src="/app.js" defer></script>`)
        expect(page.body).not.toMatch(/<script>|style=/)
        const js = yield* get(`${url}app.js`)
        expect([js.status, js.headers["content-type"]]).toEqual([200, "text/javascript; charset=utf-8"])
        expect(js.body).not.toContain("innerHTML")
        const runs = yield* get(`${url}api/runs`)
        expect((JSON.parse(runs.body) as Catalog.RunList).runs.length).toBe(3)
        const q = new URLSearchParams({ run: v1, a: "first", b: "gold" })
        const list = JSON.parse((yield* get(`${url}api/instances?${q.toString()}`)).body) as Instances.InstanceList
        expect(list.items.map((i) => i.id)).toEqual(["p1:consistent", "p2:changing"])
        const verdict = JSON.parse(
          (yield* get(`${url}api/verdict?run=${encodeURIComponent(v1)}`)).body
        ) as Catalog.VerdictView
        expect(verdict.findings.length).toBe(4)
        const figures = JSON.parse(
          (yield* get(`${url}api/figures?run=${encodeURIComponent(v1)}`)).body
        ) as Entries.FiguresView
        expect(figures.figures.length).toBeGreaterThan(0)
        expect((yield* get(`${url}api/verdict`)).status).toBe(400)
        const bad = yield* get(`${url}api/instances?run=${encodeURIComponent(v1)}&sort=random`)
        expect([bad.status, JSON.parse(bad.body)]).toEqual([
          400,
          { error: `sort must be one of instance, type, length, metric; got "random"` }
        ])
        const missing = yield* get(`${url}api/run`)
        expect([missing.status, JSON.parse(missing.body)]).toEqual([400, { error: `missing query parameter "run"` }])
        const unknown = yield* get(`${url}api/run?run=x`)
        expect(unknown.status).toBe(404)
        const noPage = yield* get(`${url}etc/passwd`)
        expect([noPage.status, JSON.parse(noPage.body)]).toEqual([404, { error: "no such page: /etc/passwd" }])
        const port = new URL(url).port
        const foreign = yield* get(`${url}api/runs`, `attacker.example:${port}`)
        expect(foreign.status).toBe(421)
        expect(foreign.body).not.toContain(v1)
        const localhost = yield* get(`${url}api/runs`, `localhost:${port}`)
        expect(localhost.status).toBe(200)
      }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.scoped("accepts the bare run id the sweep prints, and names the runs when several have it", () =>
    Effect.gen(function* () {
      const root = path.join(tempDir(), "runs")
      const printed: Array<string> = []
      const parsed = yield* Config.parse(configText("contextual"), "contextual.yaml", {})
      const config = {
        ...parsed,
        out: path.join(root, "contextual"),
        outGiven: false,
        cacheDir: path.join(root, "..", "cache")
      }
      const outcome = yield* Sweeps.sweep(config, { plugins, openDataset: opener(data), log: (l) => printed.push(l) })
      const bare = /^run (\S+): /.exec(printed.find((l) => l.startsWith("run ")) ?? "")?.[1]
      const full = path.relative(root, outcome.out).split(path.sep).join("/")
      expect(full).toBe(`contextual/${bare}`)
      const { url } = yield* Server.start({ root, port: 0, catalog: { openDataset: opener(data) } })
      const json = (route: string, run: string) =>
        Effect.map(get(`${url}api/${route}?${new URLSearchParams({ run, id: "p1:consistent" })}`), (r) => ({
          status: r.status,
          body: JSON.parse(r.body) as Record<string, unknown>
        }))
      const byPath = yield* json("run", full)
      const byId = yield* json("run", bare!)
      expect(byId).toEqual(byPath)
      expect([byId.status, (byId.body["entry"] as Entries.RunEntry).id]).toEqual([200, full])
      for (const route of ["verdict", "instances", "instance", "calls"]) {
        const r = yield* json(route, bare!)
        expect(r.status, `${route}: ${JSON.stringify(r.body)}`).toBe(200)
      }
      expect((yield* json("instance", bare!)).body["run"]).toBe(full)
      // The same id under another config's folder (a copied run): which runs match, not one of them.
      fs.cpSync(outcome.out, path.join(root, "copy", bare!), { recursive: true })
      const ambiguous = yield* json("run", bare!)
      expect(ambiguous).toEqual({
        status: 400,
        body: {
          error: `run "${bare}" names 2 runs under ${root}: contextual/${bare}, copy/${bare}; name one by its path`
        }
      })
      expect((yield* json("run", full)).status).toBe(200)
      expect((yield* json("run", "nosuchrun")).status).toBe(404)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )

  it.scoped("on every interface (--host 0.0.0.0) it answers whatever name the machine is reached by", () =>
    Effect.gen(function* () {
      const { root } = yield* setup
      const { url } = yield* Server.start({ root, port: 0, host: "0.0.0.0", catalog: { openDataset: opener(data) } })
      const port = new URL(url).port
      const byName = yield* get(`http://127.0.0.1:${port}/api/runs`, `lab-machine.local:${port}`)
      expect(byName.status).toBe(200)
      expect((JSON.parse(byName.body) as Catalog.RunList).runs.length).toBe(3)
    }).pipe(Effect.provide(NodeFileSystem.layer))
  )
})
