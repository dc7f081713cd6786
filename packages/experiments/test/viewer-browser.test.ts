/**
 * The results viewer as a user meets it: the compiled CLI sweeps contextual.yaml on the sample,
 * then on synthetic data, then a copy of the config with another seed (three runs, never mixed),
 * `cupid-lab view --port 0` serves them, and headless Chromium (Debian's /usr/bin/chromium, driven
 * by playwright-core) opens the run list, a run's verdict (the sweep's own console verdict) and
 * charts, filters to the instances where two context-factor cells disagree (named in the URL as
 * the docs show), and opens one to see the sessions each selected, with each retriever's rank and
 * score, next to the gold labels. Expected values are computed here from results.jsonl,
 * independently of the viewer. A run whose dataset, results and cell names hold markup checks that
 * nothing of it runs, its charts included.
 *
 * UPDATE_SCREENSHOTS=1 writes the screenshots into docs/images/ (the README and docs/viewer.md show them).
 * Skipped, with a message, when Chromium is not installed (.ci/run installs it).
 */
import { type ChildProcess, spawn } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Subprocess } from "@cupid-lab/core/testing"
import { hostile, instances as fixtureInstances, tempDir, writeHostileRun } from "./report-fixtures.js"
import { buildCli } from "./support.js"

const executable = "/usr/bin/chromium"
const available = fs.existsSync(executable)
if (!available)
  console.warn(`viewer browser test skipped: ${executable} not found (install it with: apt-get install -y chromium)`)

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(repo, "packages", "experiments", "dist", "cli.mjs")
const shots = process.env["UPDATE_SCREENSHOTS"] === "1" ? path.join(repo, "docs", "images") : undefined

interface Line {
  readonly cell: string
  readonly cellName: string
  readonly instance: string
  readonly status: string
  readonly selected: ReadonlyArray<string> | null
  readonly ranking: ReadonlyArray<{ readonly sessionId: string; readonly score: number | null }> | null
  readonly meta: {
    readonly relevant: ReadonlyArray<string>
    readonly stale: ReadonlyArray<string>
    readonly sessions: number
  }
}

const readLines = (dir: string): Array<Line> =>
  fs
    .readFileSync(path.join(dir, "results.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as Line)

/** The disagreement rule, written again here: one failed and the other not, or different sets of sessions. */
const disagreeing = (lines: ReadonlyArray<Line>, a: string, b: string): Array<string> => {
  const of = (cell: string) => new Map(lines.filter((l) => l.cellName === cell).map((l) => [l.instance, l]))
  const la = of(a),
    lb = of(b)
  const order = [...new Set(lines.map((l) => l.instance))]
  return order.filter((i) => {
    const x = la.get(i),
      y = lb.get(i)
    if (x === undefined || y === undefined) return false
    if (x.status !== y.status) return true
    return JSON.stringify([...(x.selected ?? [])].sort()) !== JSON.stringify([...(y.selected ?? [])].sort())
  })
}

describe.skipIf(!available)("the results viewer in a real browser", () => {
  let cwd: string
  let server: ChildProcess | undefined
  let hostileServer: ChildProcess | undefined
  let url: string
  let hostileUrl: string
  let browser: Browser
  const runs: Array<string> = []
  /** What each sweep printed (its console verdict), by run. */
  const printed = new Map<string, string>()
  const problems: Array<string> = []

  const cupid = async (...args: Array<string>) => {
    const r = await Subprocess.run(process.execPath, [cli, ...args], {
      cwd,
      env: { ...process.env, FORCE_COLOR: "0", CUPID_CACHE_DIR: path.join(cwd, "cache") }
    })
    expect(r.code, r.stderr).toBe(0)
    const id = /run ([0-9a-f]{12}): runs\/contextual\/\1\n/.exec(r.stderr)?.[1]
    expect(id, r.stderr).toBeDefined()
    printed.set(`contextual/${id!}`, `${r.stdout}\n${r.stderr}`)
    return `contextual/${id!}`
  }

  beforeAll(async () => {
    await buildCli()
    cwd = tempDir("viewer")
    const config = fs.readFileSync(path.join(repo, "configs", "contextual.yaml"), "utf8")
    fs.writeFileSync(path.join(cwd, "contextual.yaml"), config)
    expect(config).toMatch(/^seed: 7$/m)
    // a copy that keeps name: contextual but changes the seed: another run, beside the first
    fs.writeFileSync(path.join(cwd, "copy.yaml"), config.replace(/^seed: 7$/m, "seed: 8"))
    runs.push(await cupid("sweep", "--config", "contextual.yaml"))
    runs.push(await cupid("sweep", "--config", "contextual.yaml", "--data", "synthetic:personas=4,seed=21"))
    runs.push(await cupid("sweep", "--config", "copy.yaml"))
    // a run whose dataset file and results carry markup
    const hostileDir = path.join(cwd, "hostile-runs", "hostile", "0123456789ab")
    writeHostileRun(hostileDir)
    // One cell's model calls on p1:consistent, with markup in the prompt, the answer and what was read.
    fs.writeFileSync(
      path.join(hostileDir, "calls.jsonl"),
      `${JSON.stringify({
        cell: "aaaa000000000001",
        instance: "p1:consistent",
        ranAt: "2026-01-01T00:00:00.000Z",
        calls: [
          {
            stage: "infer",
            provider: "openai",
            model: "m",
            kind: "complete",
            cached: false,
            requests: 3,
            failed: false,
            latencyMs: 412,
            promptTokens: 120,
            completionTokens: 14,
            request: {
              messages: [
                { role: "system", content: "sys prompt" },
                { role: "user", content: `log ${hostile.opening}` }
              ],
              temperature: 0,
              maxTokens: 64
            },
            // A capped answer: the transcript keeps its start, with the whole answer's length and SHA-256.
            answer: `answer ${hostile.inferred}`,
            answerChars: 70_000,
            answerSha256: "ab".repeat(32),
            answerCap: `answer ${hostile.inferred}`.length,
            finishReason: "stop",
            read: { ok: true, value: `pref ${hostile.preference}` }
          }
        ]
      })}\n`
    )
    const dataFile = path.join(cwd, "hostile.jsonl")
    fs.writeFileSync(
      dataFile,
      fixtureInstances
        .map(
          (inst) =>
            `${JSON.stringify({
              persona_id: inst.personaId,
              instance_type: inst.type,
              current_request: `${hostile.opening} request`,
              current_context_factor: "factor A",
              current_contextual_preference: hostile.preference,
              current_checklist: [hostile.preference],
              prior_interactions: Array.from({ length: 8 }, (_, k) => ({
                context_factor: k < 2 ? "factor A" : "factor Z",
                contextual_preference: k < 2 ? hostile.preference : "Other.",
                dialogue: [
                  { role: "user", content: k === 0 ? hostile.opening : `Session ${k + 1}` },
                  { role: "assistant", content: "Sure." }
                ]
              }))
            })}\n`
        )
        .join("")
    )
    const summaryFile = path.join(hostileDir, "summary.json")
    fs.writeFileSync(
      summaryFile,
      fs.readFileSync(summaryFile, "utf8").replace(`"source": "tiny"`, `"source": ${JSON.stringify(dataFile)}`)
    )

    const view = (root: string) =>
      new Promise<{ process: ChildProcess; url: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [cli, "view", "--root", root, "--port", "0"], {
          cwd,
          stdio: ["ignore", "pipe", "pipe"]
        })
        let out = ""
        child.stdout!.on("data", (chunk: Buffer) => {
          out += chunk.toString()
          const m = /viewer: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)
          if (m !== null) resolve({ process: child, url: m[1]! })
        })
        child.on("exit", (code) => reject(new Error(`view exited with ${code}: ${out}`)))
      })
    const main = await view("runs")
    server = main.process
    url = main.url
    const other = await view("hostile-runs")
    hostileServer = other.process
    hostileUrl = other.url
    browser = await chromium.launch({
      executablePath: executable,
      headless: true,
      args: [
        "--no-sandbox",
        "--disable-gpu",
        "--disable-quic",
        "--no-first-run",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync"
      ]
    })
  })

  afterAll(async () => {
    await browser?.close()
    server?.kill("SIGINT")
    hostileServer?.kill("SIGINT")
  })

  const open = async (hash: string, base = url): Promise<Page> => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 700 } })
    page.on("console", (m) => void (m.type() === "error" && problems.push(`console: ${m.text()}`)))
    page.on("pageerror", (e) => problems.push(`page: ${e.message}`))
    page.on("dialog", (d) => {
      problems.push(`dialog: ${d.message()}`)
      void d.dismiss()
    })
    page.on("request", (r) => void (!r.url().startsWith(base) && problems.push(`request: ${r.url()}`)))
    await page.goto(`${base}${hash}`)
    await ready(page, hash.replace(/^#\/?/, ""))
    return page
  }

  /** Waits until the page has rendered the route (the browser code sets body[data-ready] to it). */
  // A selector, not waitForFunction: the page's CSP forbids the eval that a predicate needs.
  const ready = (page: Page, route: string) =>
    page.waitForSelector(`body[data-ready=${JSON.stringify(route)}]`, { state: "attached", timeout: 600_000 })

  /** The page's content from the top (or from the element `from` selects), at most `most` px high. */
  const shot = async (page: Page, name: string, from?: string, most = 1000) => {
    if (shots === undefined) return
    fs.mkdirSync(shots, { recursive: true })
    const height = (await page.evaluate(`document.body.scrollHeight`)) as number
    const y =
      from === undefined
        ? 0
        : Math.max(
            0,
            ((await page.evaluate(
              `document.querySelector(${JSON.stringify(from)}).getBoundingClientRect().top + window.scrollY`
            )) as number) - 10
          )
    await page.screenshot({
      path: path.join(shots, name),
      fullPage: true,
      clip: { x: 0, y, width: 1400, height: Math.min(height - y + 10, most) }
    })
  }

  it("lists the three runs, filters to the instances where two context-factor cells disagree, and shows the sessions each selected next to the gold labels", async () => {
    const page = await open("#/")
    const listed = (await page.evaluate(
      `[...document.querySelectorAll("#runs tbody tr")].map((tr) => tr.dataset.run)`
    )) as Array<string>
    expect(new Set(runs).size).toBe(3)
    expect([...listed].sort()).toEqual([...runs].sort())
    await shot(page, "viewer-runs.png")

    // the sample run: its instances page, through the links a user follows
    const sample = runs[0]!
    await page.click(`#runs tr[data-run="${sample}"] a`)
    await ready(page, `run?run=${encodeURIComponent(sample)}`)
    // it opens with the verdict: the sentences the sweep printed, and the leaderboard
    await page.waitForSelector(`#verdict[data-ready="1"]`, { state: "attached", timeout: 600_000 })
    const sentences = (await page.evaluate(
      `[...document.querySelectorAll("#verdict ul.verdict li")].map((li) => li.textContent)`
    )) as Array<string>
    const printedSentences = printed
      .get(sample)!
      .split("\n")
      .filter((l) => /^ {2}(All|Consistent|Contrastive|Changing) instances: /.test(l))
      .map((l) => l.trim())
    expect(printedSentences.length).toBe(4)
    expect(sentences).toEqual(printedSentences)
    const board = (await page.evaluate(
      `[...document.querySelectorAll('#verdict section[data-table="leaderboard"] tbody tr')].map((tr) => tr.cells[1].textContent)`
    )) as Array<string>
    // the sweep's table lists the cells in the same order: rank, then name
    const consoleCells = printed
      .get(sample)!
      .split("\n")
      .filter((l) => /^\s*(\d+|ceiling)  \S/.test(l))
      .map((l) =>
        l
          .trim()
          .split(/\s{2,}/)[1]!
          .replace(" (gold)", "")
      )
    expect(board.map((c) => c.replace(/ \(baseline\)$/, "").replace(/ ‡$/, ""))).toEqual(consoleCells)
    // then the report's charts, each an image that the browser drew
    await page.waitForSelector(`#figures[data-ready="1"]`, { state: "attached", timeout: 600_000 })
    const figures = (await page.evaluate(
      `[...document.querySelectorAll("#figures figure img")].map((img) => img.complete && img.naturalWidth > 0)`
    )) as Array<boolean>
    expect(figures.length).toBeGreaterThanOrEqual(4)
    expect(figures.every((drawn) => drawn)).toBe(true)
    // Readable at 100% zoom: each chart is drawn at its own size (it scrolls when wider than the
    // page; it was scaled to fit a grid column, its 11 px axis labels drawn at 6-8 px), so its
    // smallest text, Vega's font-size times the image's scale on screen, is 11 px or more.
    const drawnText = (await page.evaluate(
      `[...document.querySelectorAll("#figures figure")].map((f) => {
        const img = f.querySelector("img")
        const svg = decodeURIComponent(img.src.slice(img.src.indexOf(",") + 1))
        const sizes = [...svg.matchAll(/font-size="([0-9.]+)px"/g)].map((m) => Number(m[1]))
        return { scale: img.getBoundingClientRect().width / img.naturalWidth, smallest: Math.min(...sizes), caption: f.querySelector("figcaption").textContent }
      })`
    )) as Array<{ scale: number; smallest: number; caption: string }>
    for (const f of drawnText) {
      expect(f.scale).toBeCloseTo(1, 3)
      expect(f.smallest * f.scale).toBeGreaterThanOrEqual(11)
      // an image has no tooltips: its caption promises none (report.html's do, where the chart is inline SVG)
      expect(f.caption).not.toMatch(/hover|tooltip/i)
    }
    expect(
      await page.evaluate(
        `document.querySelector("main").firstElementChild.nextElementSibling.nextElementSibling.nextElementSibling.id`
      )
    ).toBe("verdict")
    await shot(page, "viewer-run.png", undefined, 1500)
    // the reports' headline tables (best marked), then every cell against every other once the tests ran
    expect(
      (await page.evaluate(
        `[...document.querySelectorAll("main > section[data-table]")].map((s) => s.dataset.table)`
      )) as Array<string>
    ).toEqual(["headline-all", "headline-consistent", "headline-contrastive", "headline-changing"])
    expect((await page.evaluate(`document.querySelectorAll("td.best").length`)) as number).toBeGreaterThan(0)
    await page.waitForSelector(`#pairwise[data-ready="1"]`, { state: "attached", timeout: 600_000 })
    expect((await page.evaluate(`document.querySelectorAll("#pairwise table").length`)) as number).toBe(4)
    await shot(page, "viewer-tables.png", "#tables")
    await page.click("nav.tabs a:nth-child(2)")
    await ready(page, `instances?run=${encodeURIComponent(sample)}`)

    const lines = readLines(path.join(cwd, "runs", sample))
    const cellOf = (name: string) => lines.find((l) => l.cellName === name)!.cell
    const [a, b] = ["context-factor(policy=all-matching)", "context-factor(policy=most-recent)"]
    const expected = disagreeing(lines, a, b)
    expect(expected.length, "the two context-factor cells should disagree somewhere on the sample").toBeGreaterThan(0)
    await page.selectOption("#f-a", cellOf(a))
    await page.selectOption("#f-b", cellOf(b))
    await page.click("#apply")
    await ready(page, `instances?run=${encodeURIComponent(sample)}&a=${cellOf(a)}&b=${cellOf(b)}`)
    const shown = (await page.evaluate(
      `[...document.querySelectorAll("table.instances tbody tr")].map((tr) => tr.dataset.instance)`
    )) as Array<string>
    expect(shown).toEqual(expected)
    expect(await page.textContent("#matched")).toContain(
      `${expected.length} of 24 instances: cells ${a} and ${b} selected different sessions`
    )
    // the cell columns are headed by (abbreviated) names, the full name in the tooltip
    const heads = (await page.evaluate(
      `[...document.querySelectorAll("table.instances thead th.cell")].map((th) => [th.textContent, th.title])`
    )) as Array<[string, string]>
    expect(heads).toEqual([
      ["cf(all-matching)", a],
      ["cf(most-recent)", b]
    ])
    await shot(page, "viewer-disagreements.png")

    // the same filter named by the cells' names in the URL, as docs/viewer.md shows it: the choices show the cells
    const byName = await open(
      `#/instances?run=${encodeURIComponent(sample)}&a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`
    )
    expect(
      await byName.evaluate(
        `[document.querySelector("#f-a").value, document.querySelector("#f-b").value, document.querySelector("#f-cell").value]`
      )
    ).toEqual([cellOf(a), cellOf(b), ""])
    expect(
      await byName.evaluate(
        `[...document.querySelectorAll("table.instances tbody tr")].map((tr) => tr.dataset.instance)`
      )
    ).toEqual(expected)
    await byName.close()
    const byCell = await open(`#/instances?run=${encodeURIComponent(sample)}&cell=bm25`)
    expect(await byCell.evaluate(`document.querySelector("#f-cell").value`)).toBe(cellOf("bm25"))
    // only the chosen cell's column, headed by its name
    const allHeads = (await byCell.evaluate(
      `[...document.querySelectorAll("table.instances thead th.cell")].map((th) => th.title)`
    )) as Array<string>
    expect(allHeads).toEqual(["bm25"])
    await byCell.close()

    // the first of them: every session's gold label, and a mark where each cell selected it
    const target = expected[0]!
    await page.click(`table.instances tr[data-instance="${target}"] a`)
    await ready(page, `instance?run=${encodeURIComponent(sample)}&id=${encodeURIComponent(target)}`)
    const rows = (await page.evaluate(`[...document.querySelectorAll("table.sessions tbody tr")].map((tr) => ({
      id: tr.dataset.session,
      gold: tr.querySelector("td.gold").textContent,
      a: tr.querySelector('td.sel[data-cell="${cellOf(a)}"] .pick').textContent,
      b: tr.querySelector('td.sel[data-cell="${cellOf(b)}"] .pick').textContent
    }))`)) as Array<{ id: string; gold: string; a: string; b: string }>
    const la = lines.find((l) => l.instance === target && l.cellName === a)!
    const lb = lines.find((l) => l.instance === target && l.cellName === b)!
    expect(rows.length).toBe(la.meta.sessions)
    expect(rows).toEqual(
      rows.map((r) => ({
        id: r.id,
        gold: la.meta.relevant.includes(r.id) ? "relevant" : la.meta.stale.includes(r.id) ? "stale" : "other",
        a: (la.selected ?? []).includes(r.id) ? "●" : "",
        b: (lb.selected ?? []).includes(r.id) ? "●" : ""
      }))
    )
    // every cell's column is headed by its name (in the run's order), and shows each session's rank and score in its retriever's ranking
    const order = [...new Set(lines.map((l) => l.cellName))]
    expect(
      await page.evaluate(`[...document.querySelectorAll("table.sessions thead th.cell")].map((th) => th.title)`)
    ).toEqual(order.map((n) => (n === "oracle" ? "oracle ‡" : n)))
    expect(
      await page.evaluate(
        `[...document.querySelectorAll("table.sessions thead th")].filter((th) => /^@\\d/.test(th.textContent)).length`
      )
    ).toBe(0)
    const shownRanks = (await page.evaluate(
      `[...document.querySelectorAll("table.sessions tbody td.sel")].map((td) => [td.closest("tr").dataset.session, td.dataset.cell, td.dataset.rank ?? null, td.dataset.score ?? null])`
    )) as Array<[string, string, string | null, string | null]>
    const expectedRanks = rows.flatMap((r) =>
      order.map((name) => {
        const line = lines.find((l) => l.instance === target && l.cellName === name)!
        const k = (line.ranking ?? []).findIndex((x) => x.sessionId === r.id)
        const score = k === -1 ? null : line.ranking![k]!.score
        return [r.id, line.cell, k === -1 ? null : String(k + 1), k === -1 ? null : score === null ? "" : String(score)]
      })
    )
    expect(shownRanks).toEqual(expectedRanks)
    // bm25 ranks every session; the scores the page shows are the ranking's
    expect(shownRanks.filter(([, cell, rank]) => cell === cellOf("bm25") && rank !== null).length).toBe(
      la.meta.sessions
    )
    // each cell's headline metrics on one line, the rest folded
    const mainLine = (await page.textContent(`section.result[data-cell="${cellOf(a)}"] .line`)) ?? ""
    expect(mainLine).toContain(
      `retrieval.f1 ${(
        JSON.parse(
          fs
            .readFileSync(path.join(cwd, "runs", sample, "results.jsonl"), "utf8")
            .split("\n")
            .find((l) => l.includes(`"instance":${JSON.stringify(target)}`) && l.includes(`"cell":"${cellOf(a)}"`))!
        ) as { scores: Record<string, number> }
      ).scores["retrieval.f1"]!.toFixed(3)}`
    )
    expect(await page.locator(`section.result[data-cell="${cellOf(a)}"] details.all-scores:not([open])`).count()).toBe(
      1
    )
    // the request and the gold preference come from the dataset
    expect((await page.textContent("#request"))?.length).toBeGreaterThan(10)
    expect(await page.locator("#checklist li").count()).toBeGreaterThan(0)
    // each cell's checklist ratings (preference match): the gold items first, as the results hold them
    const ratingRows = (await page.evaluate(
      `[...document.querySelectorAll('section.result[data-cell="${cellOf(a)}"] table.ratings tbody tr')].map((tr) => [tr.dataset.side, tr.cells[0].textContent])`
    )) as Array<[string, string]>
    const withRatings = JSON.parse(
      fs
        .readFileSync(path.join(cwd, "runs", sample, "results.jsonl"), "utf8")
        .split("\n")
        .find((l) => l.includes(`"instance":${JSON.stringify(target)}`) && l.includes(`"cell":"${cellOf(a)}"`))!
    ) as { ratings: Array<{ side: string; item: string }> }
    expect(ratingRows).toEqual(withRatings.ratings.map((r) => [r.side, r.item]))
    expect(ratingRows.filter(([side]) => side === "gold").length).toBe(await page.locator("#checklist li").count())
    await shot(page, "viewer-instance.png")
    // the page reads in two screens or so: a line per cell, the details folded
    expect((await page.evaluate(`document.body.scrollHeight`)) as number).toBeLessThan(3000)
    await page.close()
    expect(problems).toEqual([])
  })

  it("opens the sample run's report.html with its verdict on the first screen", async () => {
    const sample = runs[0]!
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    page.on("request", (r) => void (!r.url().startsWith("file://") && problems.push(`request: ${r.url()}`)))
    await page.goto(`file://${path.join(cwd, "runs", sample, "report.html")}`)
    expect(await page.evaluate(`document.getElementById("verdict").getBoundingClientRect().top < 800`)).toBe(true)
    if (shots !== undefined) await page.screenshot({ path: path.join(shots, "report-first-screen.png") })
    await page.close()
    expect(problems).toEqual([])
  })

  it("compares two cells of the same run side by side", async () => {
    const sample = runs[0]!
    const lines0 = readLines(path.join(cwd, "runs", sample))
    const idOf = (name: string) => lines0.find((l) => l.cellName === name)!.cell
    // cells named in the URL: the choices show them
    const named = await open(
      `#/compare?a=${encodeURIComponent(sample)}&ca=bm25&b=${encodeURIComponent(sample)}&cb=recency`
    )
    expect(
      await named.evaluate(
        `[document.querySelector("select[name=ca]").value, document.querySelector("select[name=cb]").value]`
      )
    ).toEqual([idOf("bm25"), idOf("recency")])
    await named.close()
    const page = await open(`#/compare?a=${encodeURIComponent(sample)}&b=${encodeURIComponent(sample)}`)
    // by default A is the first cell and B the second: all and recency, counted here from results.jsonl
    const lines = readLines(path.join(cwd, "runs", sample))
    const expected = disagreeing(lines, "all", "recency")
    const text = (await page.textContent("main")) ?? ""
    expect(text).toContain(`24 instances in both; ${expected.length} where the selections differ or one failed`)
    expect(
      (await page.evaluate(
        `[...document.querySelectorAll("table.instances tbody tr")].map((tr) => tr.dataset.instance)`
      )) as Array<string>
    ).toEqual(expected)
    // The paired tables of compare --cell-a/--cell-b, one per tested metric: A → B: difference [CI] (checked in view.test.ts).
    const entries = (await page.evaluate(
      `[...document.querySelectorAll("div.compare table tbody tr td:nth-child(2)")].map((td) => td.textContent)`
    )) as Array<string>
    expect(entries.length).toBeGreaterThan(0)
    for (const e of entries) expect(e).toMatch(/^(–|-?\d+\.\d+ → -?\d+\.\d+: [+-]\d+\.\d+( \[.*\])?)/)
    await page.close()
    expect(problems).toEqual([])
  })

  it("keeps markup from the dataset, the results and the run inert", async () => {
    const page = await open(
      `#/instance?run=${encodeURIComponent("hostile/0123456789ab")}&id=${encodeURIComponent("p1:consistent")}`,
      hostileUrl
    )
    await page.evaluate(`document.querySelectorAll("details").forEach((d) => d.setAttribute("open", ""))`)
    const facts = (await page.evaluate(`({
      pwned: window.__pwned,
      scripts: document.querySelectorAll("script").length,
      images: document.querySelectorAll("img").length,
      svgs: document.querySelectorAll("main svg").length,
      text: document.querySelector("main").textContent
    })`)) as { pwned: unknown; scripts: number; images: number; svgs: number; text: string }
    expect(facts.pwned).toBeUndefined()
    expect([facts.scripts, facts.images, facts.svgs]).toEqual([1, 0, 0])
    // shown as text: the request, a session's dialogue, the inferred preference and the cell's name
    expect(facts.text).toContain(`${hostile.opening} request`)
    expect(facts.text).toContain(hostile.inferred)
    expect(facts.text).toContain(hostile.cellName)
    // the cell's model call: how it went, the messages sent, the raw answer and what was read from it
    expect(facts.text).toContain("Model calls: 1 (0 from the cache, 3 requests sent)")
    expect(facts.text).toContain(
      "1. infer · complete · openai/m · 3 requests (2 retries) · 412 ms · 120 + 14 tokens · finish: stop"
    )
    expect(facts.text).toContain(`log ${hostile.opening}`)
    expect(facts.text).toContain(`answer ${hostile.inferred}`)
    expect(facts.text).toContain(
      `first ${`answer ${hostile.inferred}`.length} of 70000 characters (sha256 ${"ab".repeat(32)})`
    )
    expect(facts.text).toContain(`pref ${hostile.preference}`)
    const list = await open(`#/instances?run=${encodeURIComponent("hostile/0123456789ab")}&failed=1`, hostileUrl)
    expect(((await list.textContent("main")) ?? "").includes("1 of 4 instances")).toBe(true)
    // the run page: the verdict and the leaderboard name the cell as text; the charts (Vega's SVG, the name inside) are images
    const run = await open(`#/run?run=${encodeURIComponent("hostile/0123456789ab")}`, hostileUrl)
    await run.waitForSelector(`#verdict[data-ready="1"]`, { state: "attached", timeout: 600_000 })
    await run.waitForSelector(`#figures[data-ready="1"]`, { state: "attached", timeout: 600_000 })
    const onRun = (await run.evaluate(`({
      pwned: window.__pwned,
      scripts: document.querySelectorAll("script").length,
      svgs: document.querySelectorAll("main svg").length,
      images: [...document.querySelectorAll("main img")].map((img) => [img.closest("#figures") !== null, img.src.startsWith("data:image/svg+xml"), img.complete && img.naturalWidth > 0]),
      leaderboard: document.querySelector('#verdict section[data-table="leaderboard"]').textContent,
      sentences: document.querySelector("#verdict ul.verdict").textContent
    })`)) as {
      pwned: unknown
      scripts: number
      svgs: number
      images: Array<[boolean, boolean, boolean]>
      leaderboard: string
      sentences: string
    }
    expect([onRun.pwned, onRun.scripts, onRun.svgs]).toEqual([undefined, 1, 0])
    expect(onRun.images.length).toBeGreaterThan(0)
    // every image is a chart, drawn from an SVG: the name's markup was escaped into it, not parsed as elements
    expect(onRun.images.every((x) => x.every((ok) => ok))).toBe(true)
    expect(onRun.leaderboard).toContain(hostile.cellName)
    expect(onRun.sentences).toMatch(/^All instances: /)
    await page.close()
    await list.close()
    await run.close()
    expect(problems).toEqual([])
  })
})
