/**
 * The published values of LongMemEval and LoCoMo beside a run's (report.md's "Published values"):
 * hand-made summaries whose estimates are written out, so each measured value, difference and
 * setup note below is worked out by hand.
 */
import { Scorer } from "@cupid-lab/core"
import { Published, PublishedQa } from "@cupid-lab/report"
import type { ResultLine } from "@cupid-lab/results"
import { describe, expect, it } from "vitest"

const none: ResultLine.SliceSummary = { n: 0, failed: 0, metrics: {} }
const est = (mean: number, lo: number, hi: number, n: number): ResultLine.MetricEstimate => ({
  n,
  mean,
  ci95: [lo, hi]
})

const cell = (
  name: string,
  generator: Record<string, unknown>,
  model: string,
  judge: string,
  all: ResultLine.SliceSummary
): ResultLine.CellSummary => ({
  id: name,
  name,
  params: { generator },
  usesGold: false,
  oracleRetrieval: false,
  heuristicStages: [],
  plugins: [],
  models: { reader: { entry: "reader", provider: "openai", model } },
  scoring: { scorers: [], models: { judge: { entry: "judge", provider: "openai", model: judge } } },
  slices: { all, consistent: none, contrastive: none, changing: none }
})

const scored = [
  "generation.longmemeval_correct",
  "generation.locomo_f1",
  "generation.locomo_judge",
  "generation.prefeval_followed"
].map((name) => Scorer.metric({ name, description: "", family: "generation" }))

const summary = (
  source: string,
  instances: number,
  cells: ReadonlyArray<ResultLine.CellSummary>
): ResultLine.Summary => ({
  config: { name: "longmemeval-qa", hash: "0" },
  dataset: { source, hash: "0", instances, skipped: [] },
  seed: 7,
  resamples: 1000,
  baseline: cells[0]!.id,
  metrics: scored,
  cells
})

const correct = "generation.longmemeval_correct"
const authors = { use: "qa", model: "reader", prompt: "longmemeval", reading: "direct" }
// Chain-of-Note reading is the authors' reader's default: a cell that leaves it out reads that way.
const authorsCon = { use: "qa", model: "reader", prompt: "longmemeval" }

describe("Published values beside a run's", () => {
  it("puts each value the paper publishes for the run's data beside the cells that call its reader", () => {
    const s = summary("longmemeval:data/longmemeval_oracle.json", 500, [
      // 0.85 measured against the published 0.870: -2.0 points.
      cell("authors-direct", authors, "gpt-4o-2024-08-06", "gpt-4o-2024-08-06", {
        n: 500,
        failed: 0,
        metrics: { [correct]: est(0.85, 0.82, 0.88, 500) }
      }),
      // The project's prompt and another judge: both named as differences.
      cell("own-prompt", { use: "qa", model: "reader" }, "gpt-4o-2024-08-06", "gpt-4o-mini", {
        n: 500,
        failed: 0,
        metrics: { [correct]: est(0.9, 0.87, 0.93, 500) }
      }),
      // Another reader: beside no value.
      cell("mini", authors, "gpt-4o-mini-2024-07-18", "gpt-4o-2024-08-06", none)
    ])
    const t = PublishedQa.table(s)!
    // The oracle file's two values (direct, Chain-of-Note), each beside the two gpt-4o cells.
    expect(t.rows.map((r) => [r.cells[2]!.text, r.cells[3]!.text, r.cells[4]!.text, r.cells[5]!.text])).toEqual([
      ["87.0", "authors-direct", "85.0", "-2.0"],
      ["87.0", "own-prompt", "90.0", "+3.0"],
      ["92.4", "authors-direct", "85.0", "-7.4"],
      ["92.4", "own-prompt", "90.0", "-2.4"]
    ])
    expect(t.rows[0]!.cells[4]!.detail).toBe("[82.0, 88.0] n=500")
    expect(t.rows[0]!.cells[6]!.text).toBe("the paper's, as far as the run records it")
    expect(t.rows[1]!.cells[6]!.text).toBe(
      "generator prompt: not set, not longmemeval; generator reading: not set, not direct; judge: gpt-4o-mini, not gpt-4o-2024-08-06"
    )
    expect(t.rows[2]!.cells[6]!.text).toBe("generator reading: direct, not con")
    const con = PublishedQa.table(
      summary("longmemeval:data/longmemeval_oracle.json", 500, [
        cell("authors-con", authorsCon, "gpt-4o-2024-08-06", "gpt-4o-2024-08-06", {
          n: 500,
          failed: 0,
          metrics: { [correct]: est(0.9, 0.87, 0.93, 500) }
        })
      ])
    )!
    expect(con.rows.map((r) => r.cells[6]!.text)).toEqual([
      "generator reading: con, not direct",
      "the paper's, as far as the run records it"
    ])
  })

  it("names a later release of the published file as such", () => {
    const s = summary("longmemeval:/data/longmemeval_s_cleaned.json", 500, [
      cell("authors-direct", authors, "gpt-4o-2024-08-06", "gpt-4o-2024-08-06", {
        n: 500,
        failed: 0,
        metrics: { [correct]: est(0.58, 0.54, 0.62, 500) }
      })
    ])
    const t = PublishedQa.table(s)!
    expect(t.rows.map((r) => [r.cells[2]!.text, r.cells[5]!.text])).toEqual([
      ["60.6", "-2.6"],
      ["64.0", "-6.0"]
    ])
    expect(t.rows[0]!.cells[6]!.text).toBe(
      "data: longmemeval_s_cleaned.json, a later release (the paper read longmemeval_s.json)"
    )
  })

  it("shows no value for other data, and says which data the values are for", () => {
    // The file's name, but not the published number of questions (a fixture, a --limit run).
    const t = PublishedQa.table(
      summary("longmemeval:longmemeval_oracle.json", 4, [cell("a", authors, "gpt-4o-2024-08-06", "x", none)])
    )!
    expect(t.rows).toEqual([])
    expect(t.notes[0]).toContain("for longmemeval_oracle.json (500 questions) and longmemeval_s.json (500 questions)")
    expect(t.notes[0]).toContain("4 instances) is none of them")
  })

  it("holds nothing for CUPID runs and runs that score no published metric, and names a reader no cell calls", () => {
    expect(PublishedQa.table(summary("sample", 24, [cell("a", authors, "m", "j", none)]))).toBeUndefined()
    const retrievalOnly = summary("locomo:data/locomo10.json", 1986, [cell("a", {}, "m", "j", none)])
    expect(PublishedQa.table({ ...retrievalOnly, metrics: [] })).toBeUndefined()
    const locomo = PublishedQa.table(
      summary("locomo:data/locomo10.json", 1986, [cell("a", { use: "qa", model: "reader" }, "gpt-4o", "j", none)])
    )!
    // Table 2's gpt-4-turbo and gpt-3.5-turbo, Mem0's GPT-4o-mini: no cell calls any of them.
    expect(locomo.rows).toEqual([])
    expect(locomo.notes[0]).toBe(
      "Values are published for this run's data with the readers gpt-4-turbo, gpt-3.5-turbo and GPT-4o-mini; no cell's generator calls one of them, so none is shown."
    )
  })

  it("matches PrefEval's data by its source options, topics in any order, on the explicit slice", () => {
    const followed = "generation.prefeval_followed"
    const gpt = (source: string) =>
      summary(source, 168, [
        {
          ...cell(
            "zero-shot",
            { use: "llm", model: "reader", preference: "none" },
            "gpt-4o",
            "claude-3-sonnet-20240229",
            none
          ),
          // 3 of 56 explicit questions followed: 5.4%, against the README's 0.07 at "10 turns".
          types: { explicit: { n: 56, failed: 0, metrics: { [followed]: est(3 / 56, 0, 0.11, 56) } } }
        }
      ])
    const t = PublishedQa.table(gpt("prefeval:/d/PrefEval,topics=travel_restaurant,turns=8"))!
    expect(t.notes[0]).toContain(
      "Also published for this data, with readers no cell calls: o1-preview, Claude 3 Sonnet and Claude 3.5 Sonnet."
    )
    expect(
      t.rows.map((r) => [r.cells[0]!.text, r.cells[2]!.text, r.cells[4]!.text, r.cells[5]!.text, r.cells[6]!.text])
    ).toEqual([[`${followed}, explicit instances`, "7.0", "5.4", "-1.6", "the paper's, as far as the run records it"]])
    // 10 distractor pairs are not the README's "10 turns" (8 pairs), and every topic is not one topic.
    expect(PublishedQa.table(gpt("prefeval:/d/PrefEval,turns=10,topics=travel_restaurant"))!.rows).toEqual([])
    expect(PublishedQa.table(gpt("prefeval:/d/PrefEval,turns=8"))!.rows).toEqual([])
    expect(
      PublishedQa.table(gpt("prefeval:/d/PrefEval,turns=298,topics=travel_restaurant"))!.rows[0]!.cells[2]!.text
    ).toBe("5.0")
  })

  it("holds each value as a fraction of one, with where the paper prints it", () => {
    for (const v of Published.benchmarkValues) {
      expect(v.value).toBeGreaterThan(0)
      expect(v.value).toBeLessThan(1)
      expect(v.source).not.toBe("")
    }
  })
})
