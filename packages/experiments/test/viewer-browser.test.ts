/**
 * The results viewer as a user meets it: the compiled CLI sweeps contextual.yaml on the sample,
 * then on synthetic data, then a copy of the config with another seed (three runs, never mixed),
 * `cupid-lab view --port 0` serves them, and headless Chromium (Debian's /usr/bin/chromium, driven
 * by playwright-core) opens the run list, filters to the instances where two context-factor cells
 * disagree, and opens one to see the sessions each selected next to the gold labels. Expected
 * values are computed here from results.jsonl, independently of the viewer. A run whose dataset
 * and results hold markup checks that nothing of it runs.
 *
 * UPDATE_SCREENSHOTS=1 writes the screenshots into docs/images/ (the README and docs/viewer.md show them).
 * Skipped, with a message, when Chromium is not installed (.ci/run installs it).
 */
import { type ChildProcess, spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hostile, instances as fixtureInstances, tempDir, writeHostileRun } from "./report-fixtures.js"

const executable = "/usr/bin/chromium"
const available = fs.existsSync(executable)
if (!available) console.warn(`viewer browser test skipped: ${executable} not found (install it with: apt-get install -y chromium)`)

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(repo, "packages", "experiments", "dist", "cli.mjs")
const shots = process.env["UPDATE_SCREENSHOTS"] === "1" ? path.join(repo, "docs", "images") : undefined

interface Line {
  readonly cell: string
  readonly cellName: string
  readonly instance: string
  readonly status: string
  readonly selected: ReadonlyArray<string> | null
  readonly meta: { readonly relevant: ReadonlyArray<string>; readonly stale: ReadonlyArray<string>; readonly sessions: number }
}

const readLines = (dir: string): Array<Line> =>
  fs.readFileSync(path.join(dir, "results.jsonl"), "utf8").split("\n").filter((l) => l !== "").map((l) => JSON.parse(l) as Line)

/** The disagreement rule, written again here: one failed and the other not, or different sets of sessions. */
const disagreeing = (lines: ReadonlyArray<Line>, a: string, b: string): Array<string> => {
  const of = (cell: string) => new Map(lines.filter((l) => l.cellName === cell).map((l) => [l.instance, l]))
  const la = of(a), lb = of(b)
  const order = [...new Set(lines.map((l) => l.instance))]
  return order.filter((i) => {
    const x = la.get(i), y = lb.get(i)
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
  const problems: Array<string> = []

  const cupid = (...args: Array<string>) => {
    const r = spawnSync(process.execPath, [cli, ...args], { cwd, encoding: "utf8", env: { ...process.env, FORCE_COLOR: "0", CUPID_CACHE_DIR: path.join(cwd, "cache") } })
    expect(r.status, r.stderr).toBe(0)
    const id = /run ([0-9a-f]{12}): runs\/contextual\/\1\n/.exec(r.stderr)?.[1]
    expect(id, r.stderr).toBeDefined()
    return `contextual/${id!}`
  }

  beforeAll(async () => {
    const built = spawnSync(process.execPath, [path.join(repo, "tools", "build-cli.mjs"), "--if-stale", "--quiet"], { encoding: "utf8" })
    expect(built.status, built.stderr).toBe(0)
    cwd = tempDir("viewer")
    const config = fs.readFileSync(path.join(repo, "configs", "contextual.yaml"), "utf8")
    fs.writeFileSync(path.join(cwd, "contextual.yaml"), config)
    expect(config).toMatch(/^seed: 7$/m)
    // a copy that keeps name: contextual but changes the seed: another run, beside the first
    fs.writeFileSync(path.join(cwd, "copy.yaml"), config.replace(/^seed: 7$/m, "seed: 8"))
    runs.push(cupid("sweep", "--config", "contextual.yaml"))
    runs.push(cupid("sweep", "--config", "contextual.yaml", "--data", "synthetic:personas=4,seed=21"))
    runs.push(cupid("sweep", "--config", "copy.yaml"))
    // a run whose dataset file and results carry markup
    const hostileDir = path.join(cwd, "hostile-runs", "hostile", "0123456789ab")
    writeHostileRun(hostileDir)
    // One cell's model calls on p1:consistent, with markup in the prompt, the answer and what was read.
    fs.writeFileSync(path.join(hostileDir, "calls.jsonl"), `${JSON.stringify({
      cell: "aaaa000000000001",
      instance: "p1:consistent",
      ranAt: "2026-01-01T00:00:00.000Z",
      calls: [{
        stage: "infer", provider: "openai", model: "m", kind: "complete", cached: false, requests: 3, failed: false, latencyMs: 412,
        promptTokens: 120, completionTokens: 14,
        request: { messages: [{ role: "system", content: "sys prompt" }, { role: "user", content: `log ${hostile.opening}` }], temperature: 0, maxTokens: 64 },
        answer: `answer ${hostile.inferred}`, finishReason: "stop", read: { ok: true, value: `pref ${hostile.preference}` }
      }]
    })}\n`)
    const dataFile = path.join(cwd, "hostile.jsonl")
    fs.writeFileSync(dataFile, fixtureInstances.map((inst) => `${JSON.stringify({
      persona_id: inst.personaId,
      instance_type: inst.type,
      current_request: `${hostile.opening} request`,
      current_context_factor: "factor A",
      current_contextual_preference: hostile.preference,
      current_checklist: [hostile.preference],
      prior_interactions: Array.from({ length: 8 }, (_, k) => ({
        context_factor: k < 2 ? "factor A" : "factor Z",
        contextual_preference: k < 2 ? hostile.preference : "Other.",
        dialogue: [{ role: "user", content: k === 0 ? hostile.opening : `Session ${k + 1}` }, { role: "assistant", content: "Sure." }]
      }))
    })}\n`).join(""))
    const summaryFile = path.join(hostileDir, "summary.json")
    fs.writeFileSync(summaryFile, fs.readFileSync(summaryFile, "utf8").replace(`"source": "tiny"`, `"source": ${JSON.stringify(dataFile)}`))

    const view = (root: string) =>
      new Promise<{ process: ChildProcess; url: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [cli, "view", "--root", root, "--port", "0"], { cwd, stdio: ["ignore", "pipe", "pipe"] })
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
      args: ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"]
    })
  }, 240_000)

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
  const ready = (page: Page, route: string) => page.waitForSelector(`body[data-ready=${JSON.stringify(route)}]`, { state: "attached", timeout: 30_000 })

  const shot = async (page: Page, name: string) => {
    if (shots === undefined) return
    fs.mkdirSync(shots, { recursive: true })
    // the page's content, at most 1000 px high
    const height = (await page.evaluate(`document.body.scrollHeight`)) as number
    await page.screenshot({ path: path.join(shots, name), fullPage: true, clip: { x: 0, y: 0, width: 1400, height: Math.min(height + 10, 1000) } })
  }

  it("lists the three runs, filters to the instances where two context-factor cells disagree, and shows the sessions each selected next to the gold labels", async () => {
    const page = await open("#/")
    const listed = (await page.evaluate(`[...document.querySelectorAll("#runs tbody tr")].map((tr) => tr.dataset.run)`)) as Array<string>
    expect(new Set(runs).size).toBe(3)
    expect([...listed].sort()).toEqual([...runs].sort())
    await shot(page, "viewer-runs.png")

    // the sample run: its instances page, through the links a user follows
    const sample = runs[0]!
    await page.click(`#runs tr[data-run="${sample}"] a`)
    await ready(page, `run?run=${encodeURIComponent(sample)}`)
    // the reports' headline tables (best marked), then every cell against every other once the tests ran
    expect((await page.evaluate(`[...document.querySelectorAll("section[data-table]")].map((s) => s.dataset.table)`)) as Array<string>).toEqual(
      ["headline-all", "headline-consistent", "headline-contrastive", "headline-changing"]
    )
    expect((await page.evaluate(`document.querySelectorAll("td.best").length`)) as number).toBeGreaterThan(0)
    await page.waitForSelector(`#pairwise[data-ready="1"]`, { state: "attached", timeout: 60_000 })
    expect((await page.evaluate(`document.querySelectorAll("#pairwise table").length`)) as number).toBe(4)
    await shot(page, "viewer-tables.png")
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
    const shown = (await page.evaluate(`[...document.querySelectorAll("table.instances tbody tr")].map((tr) => tr.dataset.instance)`)) as Array<string>
    expect(shown).toEqual(expected)
    expect(await page.textContent("#matched")).toContain(`${expected.length} of 24 instances`)
    await shot(page, "viewer-disagreements.png")

    // the first of them: every session's gold label, and a mark where each cell selected it
    const target = expected[0]!
    await page.click(`table.instances tr[data-instance="${target}"] a`)
    await ready(page, `instance?run=${encodeURIComponent(sample)}&id=${encodeURIComponent(target)}`)
    const rows = (await page.evaluate(`[...document.querySelectorAll("table.sessions tbody tr")].map((tr) => ({
      id: tr.dataset.session,
      gold: tr.querySelector("td.gold").textContent,
      a: tr.querySelector('td.sel[data-cell="${cellOf(a)}"]').textContent,
      b: tr.querySelector('td.sel[data-cell="${cellOf(b)}"]').textContent
    }))`)) as Array<{ id: string; gold: string; a: string; b: string }>
    const la = lines.find((l) => l.instance === target && l.cellName === a)!
    const lb = lines.find((l) => l.instance === target && l.cellName === b)!
    expect(rows.length).toBe(la.meta.sessions)
    expect(rows).toEqual(rows.map((r) => ({
      id: r.id,
      gold: la.meta.relevant.includes(r.id) ? "relevant" : la.meta.stale.includes(r.id) ? "stale" : "other",
      a: (la.selected ?? []).includes(r.id) ? "●" : "",
      b: (lb.selected ?? []).includes(r.id) ? "●" : ""
    })))
    // the request and the gold preference come from the dataset
    expect((await page.textContent("#request"))?.length).toBeGreaterThan(10)
    expect(await page.locator("#checklist li").count()).toBeGreaterThan(0)
    // each cell's checklist ratings (preference match): the gold items first, as the results hold them
    const ratingRows = (await page.evaluate(`[...document.querySelectorAll('section.result[data-cell="${cellOf(a)}"] table.ratings tbody tr')].map((tr) => [tr.dataset.side, tr.cells[0].textContent])`)) as Array<[string, string]>
    const withRatings = JSON.parse(fs.readFileSync(path.join(cwd, "runs", sample, "results.jsonl"), "utf8").split("\n").find((l) => l.includes(`"instance":${JSON.stringify(target)}`) && l.includes(`"cell":"${cellOf(a)}"`))!) as { ratings: Array<{ side: string; item: string }> }
    expect(ratingRows).toEqual(withRatings.ratings.map((r) => [r.side, r.item]))
    expect(ratingRows.filter(([side]) => side === "gold").length).toBe(await page.locator("#checklist li").count())
    await shot(page, "viewer-instance.png")
    await page.close()
    expect(problems).toEqual([])
  }, 120_000)

  it("compares two cells of the same run side by side", async () => {
    const sample = runs[0]!
    const page = await open(`#/compare?a=${encodeURIComponent(sample)}&b=${encodeURIComponent(sample)}`)
    // by default A is the first cell and B the second: all and recency, counted here from results.jsonl
    const lines = readLines(path.join(cwd, "runs", sample))
    const expected = disagreeing(lines, "all", "recency")
    const text = (await page.textContent("main")) ?? ""
    expect(text).toContain(`24 instances in both; ${expected.length} where the selections differ or one failed`)
    expect((await page.evaluate(`[...document.querySelectorAll("table.instances tbody tr")].map((tr) => tr.dataset.instance)`)) as Array<string>).toEqual(expected)
    // The paired tables of compare --cell-a/--cell-b, one per tested metric: A → B: difference [CI] (checked in view.test.ts).
    const entries = (await page.evaluate(`[...document.querySelectorAll("div.compare table tbody tr td:nth-child(2)")].map((td) => td.textContent)`)) as Array<string>
    expect(entries.length).toBeGreaterThan(0)
    for (const e of entries) expect(e).toMatch(/^(–|-?\d+\.\d+ → -?\d+\.\d+: [+-]\d+\.\d+( \[.*\])?)/)
    await page.close()
    expect(problems).toEqual([])
  }, 60_000)

  it("keeps markup from the dataset, the results and the run inert", async () => {
    const page = await open(`#/instance?run=${encodeURIComponent("hostile/0123456789ab")}&id=${encodeURIComponent("p1:consistent")}`, hostileUrl)
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
    expect(facts.text).toContain("1. infer · complete · openai/m · 3 requests (2 retries) · 412 ms · 120 + 14 tokens · finish: stop")
    expect(facts.text).toContain(`log ${hostile.opening}`)
    expect(facts.text).toContain(`answer ${hostile.inferred}`)
    expect(facts.text).toContain(`pref ${hostile.preference}`)
    const list = await open(`#/instances?run=${encodeURIComponent("hostile/0123456789ab")}&failed=1`, hostileUrl)
    expect(((await list.textContent("main")) ?? "").includes("1 of 4 instances")).toBe(true)
    await page.close()
    await list.close()
    expect(problems).toEqual([])
  }, 60_000)
})
