/**
 * Opens the HTML reports in headless Chromium (Debian's /usr/bin/chromium, driven by
 * playwright-core) and checks that tables and charts render, that nothing runs and that the page
 * logs no error. Skipped, with a message, when Chromium is not installed (`apt-get install -y
 * chromium`; .ci/run installs it).
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { chromium, type BrowserContext } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Compare, Report } from "@cupid-lab/report"

import { cellA, cellB, hostileDataset, tempDir, writeHostileRun, writePaperRun, writeRun } from "./report-fixtures.js"
import { runPromise } from "./support.js"

const executable = "/usr/bin/chromium"
const available = fs.existsSync(executable)
if (!available)
  console.warn(`browser tests skipped: ${executable} not found (install it with: apt-get install -y chromium)`)

interface PageReport {
  readonly consoleErrors: ReadonlyArray<string>
  readonly dialogs: ReadonlyArray<string>
  readonly requests: ReadonlyArray<string>
  readonly facts: {
    readonly tables: number
    readonly charts: number
    readonly bars: number
    readonly visibleBars: number
    readonly points: number
    readonly visiblePoints: number
    readonly whiskers: number
    readonly lines: number
    readonly figures: ReadonlyArray<{ readonly kind: string | null; readonly width: number; readonly height: number }>
    readonly scripts: number
    readonly images: number
    readonly pwned: unknown
    readonly title: string
    /** The smallest chart text as drawn on the page (font size times the SVG's scale on screen), px. */
    readonly smallestChartText: number
    readonly captions: ReadonlyArray<string>
  }
}

describe.skipIf(!available)("reports in a real browser", () => {
  let context: BrowserContext
  let profile: string

  beforeAll(async () => {
    profile = tempDir("chromium-profile")
    context = await chromium.launchPersistentContext(profile, {
      executablePath: executable,
      headless: true,
      args: [
        "--headless",
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
    await context?.close()
    fs.rmSync(profile, { recursive: true, force: true })
  })

  const open = async (file: string): Promise<PageReport> => {
    const page = await context.newPage()
    const consoleErrors: Array<string> = []
    const dialogs: Array<string> = []
    const requests: Array<string> = []
    page.on("console", (m) => {
      if (m.type() === "error") consoleErrors.push(m.text())
    })
    page.on("pageerror", (e) => consoleErrors.push(e.message))
    page.on("dialog", (d) => {
      dialogs.push(d.message())
      void d.dismiss()
    })
    page.on("request", (r) => requests.push(r.url()))
    await page.goto(`file://${file}`)
    // Browser-side code is passed as text: this package compiles without the DOM library.
    await page.evaluate(`document.querySelectorAll("details").forEach((d) => d.setAttribute("open", ""))`)
    const facts = (await page.evaluate(`(() => {
      const sized = (sel) => [...document.querySelectorAll(sel)].filter((el) => {
        const r = el.getBoundingClientRect()
        return r.width > 0 && r.height > 0
      }).length
      return {
        tables: document.querySelectorAll("table").length,
        charts: document.querySelectorAll("svg.chart").length,
        bars: document.querySelectorAll("svg.chart g.bar_marks > path").length,
        visibleBars: sized("svg.chart g.bar_marks > path"),
        points: document.querySelectorAll("svg.chart g.point_marks > path").length,
        visiblePoints: sized("svg.chart g.point_marks > path"),
        whiskers: document.querySelectorAll("svg.chart g.whisker_marks > line").length,
        lines: document.querySelectorAll("svg.chart g.line_marks > path").length,
        figures: [...document.querySelectorAll("figure")].map((f) => {
          const svg = f.querySelector("svg.chart")
          const r = svg === null ? { width: 0, height: 0 } : svg.getBoundingClientRect()
          return { kind: svg?.getAttribute("class") ?? null, width: r.width, height: r.height }
        }),
        scripts: document.scripts.length,
        images: document.images.length,
        pwned: window.__pwned,
        title: document.title,
        smallestChartText: Math.min(...[...document.querySelectorAll("svg.chart text")].filter((t) => t.textContent.trim() !== "").map((t) => {
          const m = t.getScreenCTM()
          return parseFloat(getComputedStyle(t).fontSize) * (m === null ? 1 : Math.hypot(m.a, m.b))
        })),
        captions: [...document.querySelectorAll("figcaption")].map((c) => c.textContent)
      }
    })()`)) as PageReport["facts"]
    await page.close()
    return { consoleErrors, dialogs, requests, facts }
  }

  it("report.html renders its tables and charts, runs nothing and logs no error", async () => {
    const dir = tempDir("browser-report")
    writeHostileRun(dir)
    await runPromise(Report.write(dir, { openDataset: hostileDataset() }))
    const r = await open(path.join(dir, "report.html"))
    expect(r.consoleErrors).toEqual([])
    expect(r.dialogs).toEqual([])
    expect(r.requests.every((u) => u.startsWith("file://"))).toBe(true)
    expect(r.facts.scripts).toBe(0)
    expect(r.facts.images).toBe(0)
    expect(r.facts.pwned).toBeUndefined()
    expect(r.facts.title).toBe("tiny: sweep report")
    expect(r.facts.tables).toBeGreaterThan(10)
    // bars of the main metric (recall: the run's inference is heuristic), precision-recall scatter,
    // recency and history lines, cost frontier
    expect(r.facts.charts).toBe(5)
    // 2 cells x 4 slices, but the second cell's only contrastive instance failed: no bar there
    expect(r.facts.bars).toBe(7)
    // the second cell's changing instance has recall 0: its bar has no width
    expect(r.facts.visibleBars).toBe(r.facts.bars - 1)
    expect(r.facts.points).toBeGreaterThan(4)
    expect(r.facts.visiblePoints).toBe(r.facts.points)
    expect(r.facts.whiskers).toBeGreaterThan(0)
    // readable at 100% zoom: axis labels and titles of 11 px or more as drawn (the chart is never scaled down)
    expect(r.facts.smallestChartText).toBeGreaterThanOrEqual(11)
    // the marks have tooltips here (inline SVG), and the captions say how to read them
    expect(r.facts.captions.some((c) => c.includes("Hover a bar for its value, CI and N."))).toBe(true)
  })

  it("paper.html of a run with two models draws the paper's five figures, runs nothing and logs no error", async () => {
    const dir = tempDir("browser-paper")
    writePaperRun(dir, { matcherPair: true })
    await runPromise(Report.write(dir))
    const r = await open(path.join(dir, "paper.html"))
    expect(r.consoleErrors).toEqual([])
    expect(r.requests.every((u) => u.startsWith("file://"))).toBe(true)
    expect(r.facts.scripts).toBe(0)
    expect(r.facts.tables).toBeGreaterThan(0)
    // Fig. 3, 4, 5, 6, 9, each drawn with a size
    expect(r.facts.figures.map((f) => f.kind)).toEqual([
      "chart chart-lines",
      "chart chart-scatter",
      "chart chart-scatter",
      "chart chart-bars",
      "chart chart-lines"
    ])
    for (const f of r.facts.figures) expect(f.width * f.height).toBeGreaterThan(100 * 100)
    // points: Fig. 3 has 2 bins (mean + 2 models), Fig. 9 4 bins (mean + 2 models), Fig. 5 one per model,
    // Fig. 4 one per spot of the 4 instances both matchers scored (two share one)
    expect(r.facts.points).toBe(2 * 3 + 4 * 3 + 2 + 3)
    expect(r.facts.visiblePoints).toBe(r.facts.points)
    // Fig. 6: full history and summaries for each model, with its CI whisker; Fig. 5's x whiskers
    expect(r.facts.bars).toBe(4)
    expect(r.facts.visibleBars).toBe(4)
    expect(r.facts.whiskers).toBe(4 + 2)
    // Figs. 3 and 9: the mean's line in one panel, a line per model in the other
    expect(r.facts.lines).toBe(2 * 3)
  })

  it("compare.html renders with no error", async () => {
    const a = tempDir("browser-a"),
      b = tempDir("browser-b"),
      out = tempDir("browser-cmp")
    writeRun(a, { cells: [cellA, cellB] })
    writeRun(b, { cells: [cellA, { ...cellB, results: [...cellB.results].reverse() }] })
    await runPromise(Compare.write(a, b, out))
    const r = await open(path.join(out, "compare.html"))
    expect(r.consoleErrors).toEqual([])
    expect(r.facts.scripts).toBe(0)
    expect(r.facts.tables).toBe(2)
    expect(r.facts.charts).toBe(1)
    expect(r.facts.visibleBars).toBeGreaterThan(0)
  })
})
