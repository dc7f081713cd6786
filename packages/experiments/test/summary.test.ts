import { Scorer } from "@cupid-lab/core"
import { Summary, Columns, type ResultLine } from "@cupid-lab/results"
import { describe, expect, it } from "@effect/vitest"

import { summaryFold } from "./report-fixtures.js"

const metrics: ReadonlyArray<ResultLine.MetricDescription> = [
  Scorer.metric({ name: "retrieval.hit", description: "", family: "retrieval" }),
  Scorer.metric({
    name: "inference.p",
    description: "",
    family: "inference",
    heuristic: true,
    aggregate: Scorer.ratio
  }),
  Scorer.metric({
    name: "inference.r",
    description: "",
    family: "inference",
    heuristic: true,
    aggregate: Scorer.ratio
  }),
  Scorer.metric({
    name: "inference.f1",
    description: "",
    family: "inference",
    heuristic: true,
    aggregate: Scorer.f1Of("inference.p", "inference.r")
  })
]

/** A result line; only its cell, instance, type, status and scores matter to the summary. */
const row = (
  cell: string,
  instance: number,
  type: ResultLine.Row["type"],
  scores: Record<string, ResultLine.Score>,
  status: ResultLine.Row["status"] = "ok"
): ResultLine.Row => ({
  cell,
  cellName: cell.toUpperCase(),
  instance: `i${instance}`,
  personaId: `p${instance}`,
  type,
  status,
  params: {},
  meta: { sessions: 3, historyTokens: 10, relevantMeanPosition: null, relevant: [], stale: [] },
  selected: null,
  inference: null,
  generation: null,
  scores,
  usage: { calls: 0, promptTokens: 0, completionTokens: 0, byStage: {}, byModel: {} },
  error: status === "failed" ? { stage: "infer", plugin: "x", tag: "ModelError", message: "m" } : null
})

// Lines of cell "c", each on an instance of its own.
let next = 0
const line = (
  type: ResultLine.Row["type"],
  scores: Record<string, ResultLine.Score>,
  status: ResultLine.Row["status"] = "ok"
): ResultLine.Row => row("c", next++, type, scores, status)

const cellInfo = {
  id: "c",
  name: "cell",
  params: {},
  usesGold: false,
  oracleRetrieval: false,
  heuristicStages: [],
  plugins: []
}

describe("Summary", () => {
  const acc = summaryFold({ metrics, seed: 7, resamples: 200 })
  acc.add(
    line("consistent", { "retrieval.hit": 1, "inference.p": { num: 2, den: 2 }, "inference.r": { num: 2, den: 2 } })
  )
  acc.add(
    line("contrastive", { "retrieval.hit": 0.5, "inference.p": { num: 1, den: 2 }, "inference.r": { num: 1, den: 2 } })
  )
  acc.add(
    line("changing", { "retrieval.hit": null, "inference.p": { num: 0, den: 1 }, "inference.r": { num: 0, den: 2 } })
  )
  acc.add(line("changing", {}, "failed"))
  const [cell] = acc.cells([cellInfo])

  it("counts scored and failed instances per slice", () => {
    expect([cell!.slices.all.n, cell!.slices.all.failed]).toEqual([3, 1])
    expect([cell!.slices.changing.n, cell!.slices.changing.failed]).toEqual([1, 1])
    expect([cell!.slices.consistent.n, cell!.slices.consistent.failed]).toEqual([1, 0])
  })

  it("means leave out values that do not apply, and say so in n", () => {
    // (1 + 0.5) / 2; the changing instance has no relevant session (null)
    expect(cell!.slices.all.metrics["retrieval.hit"]!.n).toBe(2)
    expect(cell!.slices.all.metrics["retrieval.hit"]!.mean).toBe(0.75)
    expect(cell!.slices.changing.metrics["retrieval.hit"]).toEqual({ n: 0, mean: null, ci95: [null, null] })
    expect(cell!.slices.consistent.metrics["retrieval.hit"]).toEqual({ n: 1, mean: 1, ci95: [null, null] })
  })

  it("pooled metrics are ratios of sums and f1Of is the harmonic mean of two of them", () => {
    // p = (2 + 1 + 0) / (2 + 2 + 1) = 0.6, r = 3 / 6 = 0.5, F1 = 2 * 0.6 * 0.5 / 1.1
    expect(cell!.slices.all.metrics["inference.p"]!.mean).toBeCloseTo(0.6, 12)
    expect(cell!.slices.all.metrics["inference.r"]!.mean).toBeCloseTo(0.5, 12)
    expect(cell!.slices.all.metrics["inference.f1"]!.mean).toBeCloseTo(0.6 / 1.1, 12)
    expect(cell!.slices.all.metrics["inference.f1"]!.n).toBe(3)
    // contrastive: 1/2 and 1/2 -> F1 0.5; changing: 0/1 and 0/2 -> F1 0 (not NaN)
    expect(cell!.slices.contrastive.metrics["inference.f1"]!.mean).toBe(0.5)
    expect(cell!.slices.changing.metrics["inference.f1"]!.mean).toBe(0)
  })

  it("intervals surround the value and repeat exactly with the same seed", () => {
    for (const name of ["retrieval.hit", "inference.p", "inference.f1"]) {
      const e = cell!.slices.all.metrics[name]!
      expect(e.ci95[0]!).toBeLessThanOrEqual(e.mean!)
      expect(e.ci95[1]!).toBeGreaterThanOrEqual(e.mean!)
    }
    const again = summaryFold({ metrics, seed: 7, resamples: 200 })
    again.add(
      line("consistent", { "retrieval.hit": 1, "inference.p": { num: 2, den: 2 }, "inference.r": { num: 2, den: 2 } })
    )
    again.add(
      line("contrastive", {
        "retrieval.hit": 0.5,
        "inference.p": { num: 1, den: 2 },
        "inference.r": { num: 1, den: 2 }
      })
    )
    again.add(
      line("changing", { "retrieval.hit": null, "inference.p": { num: 0, den: 1 }, "inference.r": { num: 0, den: 2 } })
    )
    again.add(line("changing", {}, "failed"))
    expect(again.cells([cellInfo])).toEqual([cell])
  })

  it("identical instances give a zero-width interval", () => {
    const same = summaryFold({ metrics, seed: 3, resamples: 50 })
    for (let i = 0; i < 4; i++)
      same.add(
        line("consistent", {
          "retrieval.hit": 0.25,
          "inference.p": { num: 1, den: 4 },
          "inference.r": { num: 1, den: 2 }
        })
      )
    const s = same.cells([cellInfo])[0]!.slices.all.metrics
    expect(s["retrieval.hit"]).toEqual({ n: 4, mean: 0.25, ci95: [0.25, 0.25] })
    // F1 of 0.25 and 0.5 = 2 * 0.125 / 0.75 = 1/3
    expect(s["inference.f1"]!.mean).toBeCloseTo(1 / 3, 12)
    expect(s["inference.f1"]!.ci95[0]).toBeCloseTo(1 / 3, 12)
    expect(s["inference.f1"]!.ci95[1]).toBeCloseTo(1 / 3, 12)
  })

  it("lists score keys no scorer declared: numbers as means, counts as ratios", () => {
    const a = summaryFold({ metrics: metrics.slice(0, 1), seed: 1, resamples: 10 })
    a.add(line("consistent", { "retrieval.hit": 1, "extra.thing": 2, "inference.p": { num: 1, den: 1 } }))
    a.add(line("consistent", { "retrieval.hit": 0 }))
    expect(a.metrics().map((m) => [m.name, m.aggregate._tag])).toEqual([
      ["retrieval.hit", "Mean"],
      ["extra.thing", "Mean"],
      ["inference.p", "Ratio"]
    ])
    expect(a.cells([cellInfo])[0]!.slices.all.metrics["inference.p"]).toEqual({ n: 1, mean: 1, ci95: [null, null] })
    // a key missing on one line is "does not apply" there
    expect(a.cells([cellInfo])[0]!.slices.all.metrics["extra.thing"]).toEqual({ n: 1, mean: 2, ci95: [null, null] })
  })

  it("the summary of a run's columns (Summary.of, what a sweep writes): cells with interleaved lines, failures, undeclared keys", () => {
    // Two cells, lines interleaved as a sweep writes them; failures of both; a key one cell never
    // scores; an undeclared number and an undeclared count; a null and a key missing on a line.
    const rows: Array<ResultLine.Row> = [
      row("a", 1, "consistent", {
        "retrieval.hit": 1,
        "inference.p": { num: 2, den: 3 },
        "inference.r": { num: 1, den: 2 },
        "extra.n": 4
      }),
      row("b", 1, "consistent", {
        "retrieval.hit": 0,
        "inference.p": { num: 1, den: 3 },
        "inference.r": { num: 1, den: 4 }
      }),
      row("a", 2, "contrastive", {}, "failed"),
      row("b", 2, "contrastive", {
        "retrieval.hit": null,
        "inference.p": { num: 0, den: 1 },
        "inference.r": { num: 0, den: 2 },
        "extra.c": { num: 1, den: 2 }
      }),
      row("a", 3, "changing", { "retrieval.hit": 0.5, "extra.n": 1 }),
      row("b", 3, "changing", {}, "failed"),
      row("a", 4, "changing", {
        "retrieval.hit": 0.25,
        "inference.p": { num: 3, den: 3 },
        "inference.r": { num: 2, den: 2 }
      }),
      row("b", 4, "changing", {
        "retrieval.hit": 1,
        "inference.p": { num: 1, den: 1 },
        "inference.r": { num: 1, den: 1 }
      }),
      // Undeclared keys whose kind changes between lines: the first ok line decides (a number,
      // then counts: a mean; null, then counts: a mean of no value); a key only a failed line has
      // is no metric.
      row("a", 5, "consistent", { "mixed.first_number": 0.5, "mixed.first_null": null }),
      row("b", 5, "consistent", { "only.failed": 3 }, "failed"),
      row("a", 6, "consistent", { "mixed.first_number": { num: 1, den: 2 }, "mixed.first_null": { num: 1, den: 2 } })
    ]
    const cells = ["a", "b", "never"].map((id) => ({ ...cellInfo, id, name: id }))
    const summary = Summary.of(Columns.index(rows), { metrics, seed: 11, resamples: 100 }, cells)
    expect(summary.metrics.map((m) => `${m.name}:${m.aggregate._tag}`)).toEqual([
      "retrieval.hit:Mean",
      "inference.p:Ratio",
      "inference.r:Ratio",
      "inference.f1:F1",
      "extra.c:Ratio",
      "extra.n:Mean",
      "mixed.first_null:Mean",
      "mixed.first_number:Mean"
    ])
    // Hand-checked: a's changing slice has 2 scored lines and no failure, b's 1 and 1.
    const [a, b, never] = summary.cells
    expect([a!.slices.changing.n, a!.slices.changing.failed, b!.slices.changing.n, b!.slices.changing.failed]).toEqual([
      2, 0, 1, 1
    ])
    expect(a!.slices.all.metrics["retrieval.hit"]!.mean).toBeCloseTo((1 + 0.5 + 0.25) / 3, 12)
    expect(a!.slices.all.metrics["mixed.first_number"]).toEqual({ n: 1, mean: 0.5, ci95: [null, null] })
    expect(a!.slices.all.metrics["mixed.first_null"]).toEqual({ n: 0, mean: null, ci95: [null, null] })
    expect(b!.slices.consistent.failed).toBe(1)
    // b: p = (1 + 0 + 1) / (3 + 1 + 1) = 0.4 over its 3 scored lines
    expect(b!.slices.all.metrics["inference.p"]).toMatchObject({ n: 3, mean: 0.4 })
    expect(b!.slices.all.metrics["extra.c"]).toMatchObject({ n: 1, mean: 0.5 })
    expect([never!.slices.all.n, never!.slices.all.failed]).toEqual([0, 0])
  })
})

describe("Summary of another benchmark's instance types", () => {
  it("summarizes each type as a slice in `types`, failures counted per type; CUPID runs have no `types`", () => {
    const acc = summaryFold({ metrics, seed: 7, resamples: 200 })
    let k = 100
    const add = (type: string, hit: number | null, status: ResultLine.Row["status"] = "ok") =>
      acc.add(row("c", k++, type as ResultLine.Row["type"], status === "ok" ? { "retrieval.hit": hit } : {}, status))
    add("multi-session", 1)
    add("multi-session", 0.5)
    add("temporal-reasoning", 0)
    add("temporal-reasoning", null, "failed")
    const [cell] = acc.cells([cellInfo])
    expect(Object.keys(cell!.types!)).toEqual(["multi-session", "temporal-reasoning"])
    // (1 + 0.5) / 2 on the two multi-session questions; the temporal one scored 0, its other failed.
    expect(cell!.types!["multi-session"]).toMatchObject({ n: 2, failed: 0 })
    expect(cell!.types!["multi-session"]!.metrics["retrieval.hit"]!.mean).toBe(0.75)
    expect(cell!.types!["temporal-reasoning"]).toMatchObject({ n: 1, failed: 1 })
    expect(cell!.types!["temporal-reasoning"]!.metrics["retrieval.hit"]).toEqual({ n: 1, mean: 0, ci95: [null, null] })
    expect([cell!.slices.all.n, cell!.slices.all.failed, cell!.slices.consistent.n]).toEqual([3, 1, 0])
    expect(cell!.slices.all.metrics["retrieval.hit"]!.mean).toBe(0.5)
  })

  it("a CUPID run's cells have no types", () => {
    const acc = summaryFold({ metrics, seed: 7, resamples: 200 })
    acc.add(row("c", 1, "consistent", { "retrieval.hit": 1 }))
    expect(acc.cells([cellInfo])[0]!.types).toBeUndefined()
  })
})
