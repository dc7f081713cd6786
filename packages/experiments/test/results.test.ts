import type { Trace } from "@cupid-lab/core"
import { ResultLine, Results } from "@cupid-lab/results"
import { describe, expect, it } from "@effect/vitest"
import { Schema } from "effect"

import { instance } from "./support.js"

const cell = {
  id: "0123456789abcdef",
  name: 'latest(k=2) + "q"',
  params: { retriever: { use: "latest", k: 2 }, summarizer: null }
}
const inst = instance("p9", "changing", [2, 3])

const traces: Array<Trace.Trace> = [
  { instanceId: inst.id, instanceType: inst.type, scores: {}, usage: [], timings: {} },
  {
    instanceId: inst.id,
    instanceType: inst.type,
    retrieval: {
      ranking: [
        { sessionId: "s4", score: 0.5 },
        { sessionId: "s3", score: NaN }
      ],
      selected: ["s3", "s4"]
    },
    summaries: [{ sessionId: "s3", context: ['a "quoted" line\n'], preferences: ["é ✓"] }],
    inference: { preference: "short", analysis: "because" },
    generation: { text: "answer" },
    scores: { "retrieval.recall": 1, "inference.p": { num: 2, den: 3 }, "inference.f1": NaN, "x.inf": Infinity },
    repeats: { "generation.score": [6, 7.5, NaN] },
    usage: [
      {
        stage: "infer",
        provider: "openai",
        model: "gpt",
        kind: "complete",
        promptTokens: 10,
        completionTokens: 2,
        cached: false
      },
      {
        stage: "summarize",
        provider: "openai",
        model: "gpt",
        kind: "complete",
        promptTokens: 5,
        completionTokens: 1,
        cached: true
      },
      {
        stage: "infer",
        provider: "local",
        model: "e5",
        kind: "embed",
        promptTokens: 3,
        completionTokens: 0,
        cached: true
      }
    ],
    timings: { retrieve: 3 }
  },
  {
    instanceId: inst.id,
    instanceType: inst.type,
    scores: {},
    usage: [],
    timings: {},
    error: { stage: "infer", plugin: "llm", tag: "StageError", message: 'infer (llm): bad "json"' }
  }
]

describe("result lines", () => {
  it("a line is the JSON of its value, one line, and decodes with the ResultLine Schema to the same value", () => {
    const meta = Results.instanceMeta(inst)
    for (const trace of traces) {
      const value = Results.fromTrace(cell, inst, meta, trace)
      const text = Results.encodeLine(value)
      expect(text.endsWith("}\n")).toBe(true)
      expect(text.slice(0, -1)).not.toContain("\n")
      expect(Schema.decodeUnknownSync(ResultLine.ResultLine, { onExcessProperty: "error" })(JSON.parse(text))).toEqual(
        value
      )
    }
  })

  it("toRow keeps what decoding a written line with the Row Schema keeps", () => {
    const meta = Results.instanceMeta(inst)
    for (const trace of traces) {
      const line = Results.fromTrace(cell, inst, meta, trace)
      const decoded = Schema.decodeUnknownSync(ResultLine.Row, { onExcessProperty: "ignore" })(
        JSON.parse(Results.encodeLine(line))
      )
      expect(Results.toRow(line)).toEqual(decoded)
    }
  })

  it("keeps each repeat of a repeated judgment, a non-finite one as null; a line without repeats has no such field", () => {
    const meta = Results.instanceMeta(inst)
    expect(Results.fromTrace(cell, inst, meta, traces[1]!).repeats).toEqual({ "generation.score": [6, 7.5, null] })
    expect("repeats" in Results.fromTrace(cell, inst, meta, traces[0]!)).toBe(false)
  })

  it("non-finite scores are null, counts stay counts", () => {
    const meta = Results.instanceMeta(inst)
    const trace = {
      ...traces[0]!,
      scores: { "retrieval.precision": NaN, "retrieval.mrr": Infinity, "inference.p": { num: 1, den: 2 } }
    }
    const line = Results.fromTrace(cell, inst, meta, trace)
    expect(line.scores).toEqual({
      "retrieval.precision": null,
      "retrieval.mrr": null,
      "inference.p": { num: 1, den: 2 }
    })
    expect(JSON.parse(Results.encodeLine(line)).scores).toEqual(line.scores)
  })

  it("usage has no cache flags and sums per stage and per model, in sorted order", () => {
    const line = Results.fromTrace(cell, inst, Results.instanceMeta(inst), traces[1]!)
    expect(JSON.stringify(line.usage)).toBe(
      JSON.stringify({
        calls: 3,
        promptTokens: 18,
        completionTokens: 3,
        byStage: {
          infer: { calls: 2, promptTokens: 13, completionTokens: 2 },
          summarize: { calls: 1, promptTokens: 5, completionTokens: 1 }
        },
        byModel: {
          "local/e5": { calls: 1, promptTokens: 3, completionTokens: 0 },
          "openai/gpt": { calls: 2, promptTokens: 15, completionTokens: 3 }
        }
      })
    )
    expect(line.scores).toEqual({
      "retrieval.recall": 1,
      "inference.p": { num: 2, den: 3 },
      "inference.f1": null,
      "x.inf": null
    })
    expect(line.status).toBe("ok")
    expect(Results.fromTrace(cell, inst, Results.instanceMeta(inst), traces[2]!).status).toBe("failed")
  })

  it("meta: history tokens over all messages, positions of the relevant sessions", () => {
    // "p9 other 0 words here" = 6 tokens, "p9 a2 text" = 5, "ok" = 1 after each
    expect(Results.instanceMeta(inst)).toEqual({
      sessions: 4,
      historyTokens: 7 + 7 + 6 + 6,
      relevantMeanPosition: 3.5,
      relevant: ["s3", "s4"],
      stale: []
    })
    // with the token counts of a sweep's earlier instances
    const tokens = new Map<string, number>()
    expect(Results.instanceMeta(inst, tokens)).toEqual(Results.instanceMeta(inst))
    expect(Results.instanceMeta(inst, tokens)).toEqual(Results.instanceMeta(inst))
    expect(tokens.size).toBe(4)
  })
})
