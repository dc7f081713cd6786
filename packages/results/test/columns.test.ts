/**
 * The reports' index (results/Columns.ts) against the lines it is built from: the CSV writes the
 * lines as they are; metric columns, slices, usage totals, model use, failures and the example
 * lines are the lines' own values, computed by hand; keys that only some lines score stay absent
 * on the others.
 */
import { describe, expect, it } from "vitest"
import type { Row } from "../src/ResultLine.js"
import * as Columns from "../src/Columns.js"
import * as Exports from "../src/Exports.js"

const usage = (calls: number, score = 0) => ({
  calls,
  promptTokens: 10 * calls,
  completionTokens: calls,
  byStage:
    score > 0
      ? {
          infer: { calls: calls - score, promptTokens: 10 * (calls - score), completionTokens: calls - score },
          score: { calls: score, promptTokens: 10 * score, completionTokens: score }
        }
      : {},
  byModel: calls > 0 ? { "openai/m": { calls, promptTokens: 10 * calls, completionTokens: calls } } : {}
})

const row = (
  cell: string,
  instance: string,
  type: Row["type"],
  scores: Row["scores"],
  extra: Partial<Row> = {}
): Row => ({
  cell,
  cellName: `name of ${cell}`,
  instance,
  personaId: instance.split(":")[0]!,
  type,
  status: "ok",
  params: { retriever: { use: cell } },
  meta: { sessions: 4, historyTokens: 100, relevantMeanPosition: 2, relevant: ["s2"], stale: [] },
  selected: ["s1", "s2"],
  inference: { preference: `inferred by ${cell}` },
  generation: null,
  scores,
  usage: usage(0),
  error: null,
  ...extra
})

const lines: ReadonlyArray<Row> = [
  row("a", "p1:consistent", "consistent", { "r.recall": 1, "i.p": { num: 1, den: 2 } }, { usage: usage(3, 1) }),
  row("b", "p1:consistent", "consistent", { "r.recall": 0.5, "i.p": { num: 0, den: 1 } }, { selected: [] }),
  row("a", "p2:consistent", "consistent", { "r.recall": null, "i.p": { num: 2, den: 2 }, late: 7 }),
  row(
    "b",
    "p2:consistent",
    "consistent",
    {},
    {
      status: "failed",
      selected: null,
      inference: null,
      error: { stage: "retrieve", plugin: "b", tag: "StageError", message: '=HYPERLINK("x")' }
    }
  ),
  row("a", "p1:changing", "changing", { "r.recall": 0, "i.p": { num: 0, den: 3 } }, { usage: usage(2) }),
  row("b", "p1:changing", "changing", { "r.recall": 1, "i.p": { num: 3, den: 3 } })
]

describe("Columns.index", () => {
  const idx = Columns.index(lines)

  it("hold every line in file order, which results.csv writes as the lines hold them", () => {
    expect(idx.table).toEqual(lines)
    // by hand: counts as two columns, a null score and an unscored key as empty fields, the error's
    // formula guarded and quoted
    expect(Exports.csv(idx.table)).toBe(
      [
        "cell,cell_name,instance,persona_id,type,status,selected,i.p.num,i.p.den,late,r.recall,calls,prompt_tokens,completion_tokens,error_stage,error_plugin,error_message",
        "a,name of a,p1:consistent,p1,consistent,ok,s1 s2,1,2,,1,3,30,3,,,",
        "b,name of b,p1:consistent,p1,consistent,ok,,0,1,,0.5,0,0,0,,,",
        "a,name of a,p2:consistent,p2,consistent,ok,s1 s2,2,2,7,,0,0,0,,,",
        `b,name of b,p2:consistent,p2,consistent,failed,,,,,,0,0,0,retrieve,b,"'=HYPERLINK(""x"")"`,
        "a,name of a,p1:changing,p1,changing,ok,s1 s2,0,3,,0,2,20,2,,,",
        "b,name of b,p1:changing,p1,changing,ok,s1 s2,3,3,,1,0,0,0,,,",
        ""
      ].join("\r\n")
    )
  })

  it("hold each cell's ok lines by instance, and metric columns by instance number", () => {
    expect(idx.instances.map((i) => [i.instance, i.type])).toEqual([
      ["p1:consistent", "consistent"],
      ["p2:consistent", "consistent"],
      ["p1:changing", "changing"]
    ])
    expect([idx.table.length, idx.failures.length]).toEqual([6, 1])
    const b = idx.columns("b")!
    // b failed on p2:consistent: no slot there
    expect([...b.slot]).toEqual([0, -1, 1])
    // by instance number: NaN where the cell has no ok line
    expect([...b.metric("r.recall").values]).toEqual([0.5, NaN, 1])
    expect([...b.metric("i.p").num, ...b.metric("i.p").den]).toEqual([0, NaN, 3, 1, NaN, 3])
    const a = idx.columns("a")!
    expect([...a.metric("r.recall").values]).toEqual([1, NaN, 0])
    expect([...a.metric("late").values]).toEqual([NaN, 7, NaN])
    // over a slice's instances, the same rows for every cell
    expect([...Columns.sliceNumbers(idx, "changing")]).toEqual([2])
    expect(Columns.sliceOf(idx, "b", "consistent")({ name: "r.recall", aggregate: { _tag: "Mean" } })).toEqual({
      _tag: "Mean",
      values: Float64Array.from([0.5, NaN])
    })
    expect(Columns.sliceOf(idx, "a", "all")({ name: "i.p", aggregate: { _tag: "Ratio" } })).toEqual({
      _tag: "Ratio",
      num: Float64Array.from([1, 2, 0]),
      den: Float64Array.from([2, 2, 3])
    })
    expect(Columns.sharedIds(idx, "a", Columns.index(lines.slice(0, 2)), "b", "all")).toEqual(["p1:consistent"])
  })

  it("number instances in first-seen order, and give a metric over any list of instances", () => {
    expect([...idx.number]).toEqual([
      ["p1:consistent", 0],
      ["p2:consistent", 1],
      ["p1:changing", 2]
    ])
    expect(idx.instances[1]).toEqual({
      instance: "p2:consistent",
      personaId: "p2",
      type: "consistent",
      meta: lines[2]!.meta
    })
    const at = Columns.numbers(idx, ["p1:changing", "p9:changing", "p1:consistent"])
    expect([...at]).toEqual([2, -1, 0])
    expect(Columns.columnsOf(idx, "a", at)({ name: "r.recall", aggregate: { _tag: "Mean" } })).toEqual({
      _tag: "Mean",
      values: Float64Array.from([0, NaN, 1])
    })
    expect(Columns.columnsOf(idx, "b", at)({ name: "i.p", aggregate: { _tag: "Ratio" } })).toEqual({
      _tag: "Ratio",
      num: Float64Array.from([3, NaN, 0]),
      den: Float64Array.from([3, NaN, 1])
    })
    // a cell the index does not hold: every value missing
    expect(Columns.columnsOf(idx, "z", at)({ name: "r.recall", aggregate: { _tag: "Mean" } })).toEqual({
      _tag: "Mean",
      values: Float64Array.from([NaN, NaN, NaN])
    })
    expect(idx.columns("z")).toBeUndefined()
    // the instances both cells scored ok, per slice: b failed on p2:consistent
    expect(Columns.sharedIds(idx, "a", idx, "b", "consistent")).toEqual(["p1:consistent"])
    expect(Columns.sharedIds(idx, "a", idx, "b", "changing")).toEqual(["p1:changing"])
    expect(Columns.sharedIds(idx, "a", idx, "b", "contrastive")).toEqual([])
    expect(Columns.sharedIds(idx, "a", idx, "a", "all")).toEqual(["p1:consistent", "p2:consistent", "p1:changing"])
    // a slice of the same cell twice is the same copy (kept with the cell's columns)
    const once = Columns.sliceOf(idx, "a", "consistent")({ name: "r.recall", aggregate: { _tag: "Mean" } })
    expect(once).toEqual({ _tag: "Mean", values: Float64Array.from([1, NaN]) })
    const again = Columns.sliceOf(idx, "a", "consistent")({ name: "r.recall", aggregate: { _tag: "Mean" } })
    expect(again._tag === "Mean" && once._tag === "Mean" && again.values === once.values).toBe(true)
  })

  it("say how the summary aggregates each score key: with counts or not, from its first ok line", () => {
    expect([...idx.okScoreKinds]).toEqual([
      ["r.recall", false],
      ["i.p", true],
      ["late", false]
    ])
  })

  it("hold nothing for no lines", () => {
    const none = Columns.index([])
    expect([none.table, none.instances, none.failures]).toEqual([[], [], []])
    expect(Exports.csv(none.table)).toBe(
      "cell,cell_name,instance,persona_id,type,status,selected,calls,prompt_tokens,completion_tokens,error_stage,error_plugin,error_message\r\n"
    )
  })

  it("fold usage per cell (scoring apart), per model, and the failures", () => {
    expect(idx.usage.get("a")).toEqual({
      pairs: 3,
      calls: 4,
      promptTokens: 40,
      completionTokens: 4,
      scoringCalls: 1,
      scoringTokens: 11
    })
    expect(idx.usage.get("b")).toEqual({
      pairs: 3,
      calls: 0,
      promptTokens: 0,
      completionTokens: 0,
      scoringCalls: 0,
      scoringTokens: 0
    })
    expect([...idx.models]).toEqual([["openai/m", { calls: 5, promptTokens: 50, completionTokens: 5 }]])
    expect(idx.failures).toEqual([
      { line: 3, cell: "b", cellName: "name of b", instance: "p2:consistent", error: lines[3]!.error }
    ])
  })

  it("keep whole lines only for the first instance of each type", () => {
    expect([...idx.exampleRows.keys()]).toEqual(["p1:consistent", "p1:changing"])
    expect(idx.exampleRows.get("p1:changing")!.get("a")).toBe(lines[4])
    expect(idx.exampleRows.get("p1:consistent")!.get("b")!.inference).toEqual({ preference: "inferred by b" })
  })
})

describe("Columns.problem", () => {
  it("names a second line of a cell for one instance", () => {
    const twice = [
      row("a", "p1:consistent", "consistent", { x: 0 }),
      row("b", "p1:consistent", "consistent", { x: 0 }),
      row("a", "p1:consistent", "consistent", { x: 1 })
    ]
    expect(Columns.problem(twice)).toBe(
      `line 3 is a second line of cell "name of a" for instance "p1:consistent"; a run has one line per cell and instance`
    )
  })

  it("finds none in one run's lines", () => {
    expect(Columns.problem(lines)).toBeUndefined()
    expect(Columns.problem([])).toBeUndefined()
  })
})
