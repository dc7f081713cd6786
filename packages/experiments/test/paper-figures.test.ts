/**
 * The paper's figures in paper.html (PaperFigures): the values each figure plots, hand-computed on
 * a made-up run of two models under two settings (report-fixtures.ts, writePaperRun), the matcher
 * pair of Fig. 4 in both ways a run can record it, the sentence for each figure a run cannot draw,
 * and paper.md / paper.html as Report.write leaves them (the same bytes twice).
 */
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import { Charts, PaperFigures, Report } from "@cupid-lab/report"
import { RunDir } from "@cupid-lab/results"
import * as fs from "node:fs"
import * as path from "node:path"

import { cellA, cellB, tempDir, writePaperRun, writeRun } from "./report-fixtures.js"

const paperRun = (matcherPair: boolean) =>
  Effect.gen(function* () {
    const dir = tempDir("paper-figures")
    writePaperRun(dir, { matcherPair })
    return yield* RunDir.read(dir)
  })

/** Micro F1 from pooled counts: P = pn / pd, R = rn / rd. */
const f1 = (pn: number, pd: number, rn: number, rd: number) => {
  const p = pn / pd,
    r = rn / rd
  return p + r === 0 ? 0 : (2 * p * r) / (p + r)
}

const rows = (chart: Charts.Chart): Array<Record<string, unknown>> => {
  const data = chart.spec.data
  return data !== undefined && data !== null && "values" in data && Array.isArray(data.values)
    ? data.values.filter((v): v is Record<string, unknown> => typeof v === "object" && v !== null)
    : []
}

const close = (actual: ReadonlyArray<number>, expected: ReadonlyArray<number>) => {
  expect(actual).toHaveLength(expected.length)
  actual.forEach((a, i) => expect(a).toBeCloseTo(expected[i]!, 12))
}

describe("the paper's figures: values", () => {
  it.effect("one full-history cell per model, in grid order, labelled as the paper names the model", () =>
    Effect.gen(function* () {
      const run = yield* paperRun(true)
      expect(PaperFigures.fullHistory(run.summary).map((m) => [m.entry, m.label, m.cell.name])).toEqual([
        ["gpt-4o", "GPT-4o", "full-history [gpt-4o]"],
        ["mistral-7b", "Mistral 7B", "full-history [mistral-7b]"]
      ])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "Fig. 3: pooled F1 per position bin, per model and as their mean; an instance without relevant sessions is left out",
    () =>
      Effect.gen(function* () {
        const fig = PaperFigures.byPosition(yield* paperRun(false))!
        // positions 1.5 and 2 fall in 1–<3, 7.5 and 7 in 7–8; q2:changing has none; 3–<5 and 5–<7 are empty
        expect(fig.binned.bins.map((b) => [b.label, b.instances])).toEqual([
          ["1–<3", 2],
          ["7–8", 2]
        ])
        const of = (id: string) => fig.binned.bins.map((b) => b.values.get(id)!.value)
        // GPT-4o: [1,2,1,2] + [2,2,1,2] -> P 3/4, R 2/4; [0,2,0,3] + [1,1,2,2] -> P 1/3, R 2/5
        close(of("f000000000000001"), [f1(3, 4, 2, 4), f1(1, 3, 2, 5)])
        close(of("f000000000000001"), [0.6, 4 / 11])
        // Mistral 7B: [0,2,0,2] + [1,2,1,2] -> P 1/4, R 1/4; [1,1,1,3] + [0,1,1,2] -> P 1/2, R 2/5
        close(of("f000000000000002"), [0.25, 4 / 9])
        close(
          fig.mean.map((m) => m!.value),
          [(0.6 + 0.25) / 2, (4 / 11 + 4 / 9) / 2]
        )
        expect(fig.mean.map((m) => [m!.models, m!.n])).toEqual([
          [2, 4],
          [2, 4]
        ])
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("Fig. 9: pooled F1 in equal-size bins of history tokens, per model and as their mean", () =>
    Effect.gen(function* () {
      const fig = PaperFigures.byLength(yield* paperRun(false))!
      // five instances in four bins by rank: 100 | 200 | 300 | 400, 500
      expect(fig.binned.bins.map((b) => [b.label, b.instances])).toEqual([
        ["100–100", 1],
        ["200–200", 1],
        ["300–300", 1],
        ["400–500", 2]
      ])
      const of = (id: string) => fig.binned.bins.map((b) => b.values.get(id)!.value)
      // GPT-4o: [1,2,1,2]; [1,1,2,2]; [0,2,0,3]; [2,2,1,2] + [1,2,2,4] -> P 3/4, R 3/6
      close(of("f000000000000001"), [0.5, 1, 0, f1(3, 4, 3, 6)])
      // Mistral 7B: [0,2,0,2]; [0,1,1,2]; [1,1,1,3]; [1,2,1,2] + [1,2,1,4] -> P 2/4, R 2/6
      close(of("f000000000000002"), [0, 0, 0.5, f1(2, 4, 2, 6)])
      close(
        fig.mean.map((m) => m!.value),
        [0.25, 0.5, 0.25, (0.6 + 0.4) / 2]
      )
      expect(fig.mean.map((m) => m!.n)).toEqual([2, 2, 2, 4])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "Fig. 5: per model, pooled F1 and the mean judge score of its full-history cell, with the summary's CIs",
    () =>
      Effect.gen(function* () {
        const run = yield* paperRun(false)
        const points = PaperFigures.generationPoints(run.summary)
        expect(points.map((p) => p.model.entry)).toEqual(["gpt-4o", "mistral-7b"])
        // GPT-4o pools P 5/9, R 6/13 and scores 6, 8, 4, 10, 7; Mistral 7B P 3/8, R 4/13 and 3, 5, 4, 6, 2
        close(
          points.map((p) => p.f1.mean!),
          [60 / 119, 24 / 71]
        )
        close(
          points.map((p) => p.generation.mean!),
          [7, 4]
        )
        expect(points.map((p) => [p.f1.n, p.generation.n])).toEqual([
          [5, 5],
          [5, 5]
        ])
        const chart = PaperFigures.plan(run).figures.find((f) => f.figure === "Fig. 5")!.chart
        const cell = run.summary.cells[0]!.slices.all.metrics
        expect(rows(chart)[0]).toMatchObject({
          series: "GPT-4o",
          x: 7,
          xlo: cell["generation.score"]!.ci95[0],
          xhi: cell["generation.score"]!.ci95[1],
          ylo: cell["inference.f1_micro"]!.ci95[0],
          yhi: cell["inference.f1_micro"]!.ci95[1]
        })
        expect(chart.spec.title).toBe(
          "Fig. 5: inference F1 (micro: pooled counts) against the generation score, per model (N = 5 instances per model)"
        )
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("Fig. 6: per model, pooled F1 from the full history and from the cell that only adds a summarizer", () =>
    Effect.gen(function* () {
      const run = yield* paperRun(false)
      const pairs = PaperFigures.summaryPairs(run.summary)
      expect(pairs.map((p) => [p.model.entry, p.setting])).toEqual([
        ["gpt-4o", "summaries"],
        ["mistral-7b", "summaries"]
      ])
      // GPT-4o with summaries pools P 5/9, R 8/14; Mistral 7B's summaries score [1,2,1,2] on every instance
      close(
        pairs.flatMap((p) => [p.full.mean!, p.summaries.mean!]),
        [60 / 119, 40 / 71, 24 / 71, 0.5]
      )
      const chart = PaperFigures.plan(run).figures.find((f) => f.figure === "Fig. 6")!.chart
      expect(rows(chart).map((r) => [r["row"], r["setting"], r["n"]])).toEqual([
        ["GPT-4o", "full-history", 5],
        ["GPT-4o", "summaries", 5],
        ["Mistral 7B", "full-history", 5],
        ["Mistral 7B", "summaries", 5]
      ])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "Fig. 4: per-instance F1 under each matcher on the instances both scored, Pearson's r and N in the title",
    () =>
      Effect.gen(function* () {
        const run = yield* paperRun(true)
        const m = PaperFigures.matcherAgreement(run)!
        expect(m.matchers).toEqual(["gpt-4o-matcher", "prefmatcher"])
        expect(m.cells).toBe(1)
        // per-instance F1 under gpt-4o-matcher: 1/2, 2/3, 0, 1, 1/2; under prefmatcher: 1/2, 1, (failed), 1, 1/2
        close(
          m.points.map((p) => p.x),
          [0.5, 2 / 3, 1, 0.5]
        )
        close(
          m.points.map((p) => p.y),
          [0.5, 1, 1, 0.5]
        )
        // x*6 = 3, 4, 6, 3 (mean 4), y*2 = 1, 2, 2, 1 (mean 1.5): sxy 2, sxx 6, syy 1
        expect(m.r).toBeCloseTo(2 / Math.sqrt(6), 12)
        const fig = PaperFigures.plan(run).figures.find((f) => f.figure === "Fig. 4")!
        expect(fig.chart.spec.title).toBe(
          "Fig. 4: per-instance inference F1, matcher gpt-4o-matcher against prefmatcher (Pearson's r = 0.816, N = 4)"
        )
        // instances on one spot share a point: (0.5, 0.5) twice
        expect(rows(fig.chart).map((r) => [r["x"], r["y"], r["count"]])).toEqual([
          [0.5, 0.5, 2],
          [2 / 3, 1, 1],
          [1, 1, 1]
        ])
        expect(rows(fig.chart)[0]!["tip"]).toBe("gpt-4o-matcher 0.500, prefmatcher 0.500: 2 instances")
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect(
    "Fig. 4's pair is found whether the cells' models record the matcher or only their parameters bind it",
    () =>
      Effect.gen(function* () {
        const { summary } = yield* paperRun(true)
        const pair = (s: typeof summary) => PaperFigures.matcherCells(s)?.pairs.map(([a, b]) => [a.name, b.name])
        expect(pair(summary)).toEqual([["full-history [gpt-4o]", "full-history [gpt-4o, prefmatcher]"]])
        const recorded = {
          ...summary,
          cells: summary.cells.map((c) => {
            const { matcher, ...bound } = c.params["models"] as Record<string, string>
            return {
              ...c,
              params: { ...c.params, models: bound },
              models: { ...c.models, matcher: { entry: matcher!, provider: "openai", model: `${matcher}-id` } }
            }
          })
        }
        expect(pair(recorded)).toEqual(pair(summary))
        // a cell that differs in anything else besides the matcher is no pair
        const other = {
          ...summary,
          cells: summary.cells.map((c) =>
            c.id === "f000000000000003" ? { ...c, params: { ...c.params, retriever: { use: "bm25" } } } : c
          )
        }
        expect(PaperFigures.matcherCells(other)).toBeUndefined()
        // cells that change only the generator share their inference: its pair is counted once
        const generated = {
          ...summary,
          cells: [
            ...summary.cells,
            ...summary.cells
              .filter((c) => c.name.startsWith("full-history [gpt-4o"))
              .map((c) => ({
                ...c,
                id: `${c.id}-g`,
                name: c.name.replace("full-history", "inferred-preference"),
                params: { ...c.params, generator: { use: "llm", model: "subject", preference: "inferred" } }
              }))
          ]
        }
        expect(pair(generated)).toEqual(pair(summary))
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("every chart compiles without a warning and states its N in its title", () =>
    Effect.gen(function* () {
      const p = PaperFigures.plan(yield* paperRun(true))
      expect(p.figures.map((f) => f.figure)).toEqual(["Fig. 3", "Fig. 4", "Fig. 5", "Fig. 6", "Fig. 9"])
      expect(p.missing).toEqual([])
      for (const f of p.figures) {
        expect(Charts.compile(f.chart).warnings).toEqual([])
        expect(String(f.chart.spec.title)).toMatch(/N = \d/)
      }
      expect(p.figures[0]!.chart.spec.title).toBe(
        "Fig. 3: inference F1 (micro: pooled counts) by relevant sessions' mean position (1 = oldest) (N = 4 instances, 2 models)"
      )
      expect(p.figures[4]!.chart.spec.title).toBe(
        "Fig. 9: inference F1 (micro: pooled counts) by history length, approximate tokens (N = 5 instances, 2 models)"
      )
      // Fig. 3's mean panel and per-model panel
      expect(rows(p.figures[0]!.chart).map((r) => [r["panel"], r["series"], r["category"], r["n"]])).toEqual([
        ["mean over models", "mean of 2 models", "1–<3 (2)", 4],
        ["mean over models", "mean of 2 models", "7–8 (2)", 4],
        ["per model", "GPT-4o", "1–<3 (2)", 2],
        ["per model", "GPT-4o", "7–8 (2)", 2],
        ["per model", "Mistral 7B", "1–<3 (2)", 2],
        ["per model", "Mistral 7B", "7–8 (2)", 2]
      ])
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("the paper's figures: what a run cannot draw", () => {
  it.effect("without a matcher pair, Fig. 4 is left out with a sentence; the other four are drawn", () =>
    Effect.gen(function* () {
      const p = PaperFigures.plan(yield* paperRun(false))
      expect(p.figures.map((f) => f.figure)).toEqual(["Fig. 3", "Fig. 5", "Fig. 6", "Fig. 9"])
      expect(p.missing).toEqual([
        "Fig. 4 is left out: the run has no two cells that differ only in the matcher model binding (models.matcher) and both score inference.f1, so there is no pair of matchers to compare."
      ])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a run whose cells bind no model draws none, and says why for each", () =>
    Effect.gen(function* () {
      const dir = tempDir("paper-figures-none")
      writeRun(dir, { cells: [cellA, cellB] })
      const p = PaperFigures.plan(yield* RunDir.read(dir))
      expect(p.figures).toEqual([])
      expect(p.missing.map((s) => s.slice(0, s.indexOf(" is left out")))).toEqual([
        "Fig. 3",
        "Fig. 4",
        "Fig. 5",
        "Fig. 6",
        "Fig. 9"
      ])
      expect(p.missing[0]).toBe("Fig. 3 is left out: no cell of the baseline's setting binds a model.")
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("paper.md and paper.html", () => {
  it.effect(
    "paper.html is paper.md's document with the figures; paper.md points at them; both are the same bytes twice",
    () =>
      Effect.gen(function* () {
        const dir = tempDir("paper-files")
        writePaperRun(dir, { matcherPair: true })
        const written = yield* Report.write(dir)
        expect(written.paperHtml).toBe(path.join(dir, "paper.html"))
        const read = () => ["paper.md", "paper.html"].map((f) => fs.readFileSync(path.join(dir, f), "utf8"))
        const [md = "", html = ""] = read()
        expect(md).toContain("## Figures")
        expect(md).toContain("The figures (Fig. 3, Fig. 4, Fig. 5, Fig. 6, Fig. 9) are in paper.html:")
        expect(md).toContain("| GPT-4o ")
        // The second matcher's cell has no place in the tables (one per model and setting): named, not dropped.
        expect(md).toContain(
          "Not in these tables (no model, or a second cell of the same model and setting, e.g. under another judge; report.md has them): full-history \\[gpt-4o, prefmatcher\\]."
        )
        expect(md).not.toContain("<svg")
        expect(html).toContain("<h2>Figures</h2>")
        expect(html.match(/<svg [^>]*class="chart chart-/g)).toHaveLength(5)
        expect(html).not.toContain("are in paper.html")
        expect(html).not.toMatch(/<script|\sid="|NaN/)
        // the tables of paper.md are in paper.html too
        expect(html).toContain("Preference inference, all instances")
        yield* Report.write(dir)
        expect(read()).toEqual([md, html])
      }).pipe(Effect.provide(NodeContext.layer))
  )
})
