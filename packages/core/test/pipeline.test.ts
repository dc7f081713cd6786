import { describe, expect, it } from "@effect/vitest"
import { Effect, TestClock, Tracer } from "effect"
import * as Domain from "../src/Domain.js"
import { StageError } from "../src/Errors.js"
import type * as Generator from "../src/Generator.js"
import type * as Inferrer from "../src/Inferrer.js"
import type * as LanguageModel from "../src/LanguageModel.js"
import * as ModelCache from "../src/ModelCache.js"
import * as Models from "../src/Models.js"
import * as Pipeline from "../src/Pipeline.js"
import * as Retriever from "../src/Retriever.js"
import * as Scorer from "../src/Scorer.js"
import type * as Summarizer from "../src/Summarizer.js"

const session = (factor: string, preference: string, text: string): Domain.WirePriorInteraction => ({
  context_factor: factor,
  contextual_preference: preference,
  dialogue: [
    { role: "user", content: `About ${factor}: ${text}` },
    { role: "assistant", content: "Sure." }
  ]
})

const row: Domain.CupidRow = {
  persona_id: "p1",
  instance_type: "changing",
  current_request: "Plan the review with Dana.",
  current_context_factor: "Dana",
  current_contextual_preference: "numbered steps",
  current_checklist: ["numbered"],
  prior_interactions: [
    session("Dana", "bullets", "first"),
    session("Sam", "tables", "second"),
    session("Dana", "numbered steps", "third"),
    session("Dana", "numbered steps", "fourth")
  ]
}
const instance = Domain.fromRow(row)

const recent = (k: number): Retriever.Service => ({
  needsSummaries: false,
  retrieve: ({ query }) =>
    Effect.succeed(
      Retriever.fromScores(
        query.sessions.map((s) => [s.id, s.index]),
        k
      )
    )
})

/** A model whose answers name the request they got, so tests can see what each stage was given. */
const lm: LanguageModel.Service = {
  info: { provider: "test", model: "echo", params: {} },
  complete: (r) =>
    Effect.succeed({ text: r.messages.map((m) => m.content).join(" | "), promptTokens: 5, completionTokens: 2 })
}
const models = Models.layer({ m: { languageModel: lm } })

const summarizer: Summarizer.Service = {
  summarize: (sessions) =>
    Effect.forEach(sessions, (s) =>
      Effect.flatMap(Models.Models, (ms) => ms.languageModel("m")).pipe(
        Effect.flatMap((m) => m.complete({ messages: [{ role: "user", content: s.dialogue[0]!.content }] })),
        Effect.map((c) => ({ sessionId: s.id, context: [c.text], preferences: [] })),
        Effect.mapError((e) => new StageError({ stage: "summarize", plugin: "sum", reason: e.message })),
        Effect.provide(models),
        Effect.provide(ModelCache.layerMemory)
      )
    )
}

const inferrer: Inferrer.Service = {
  infer: ({ evidence }) =>
    Effect.succeed({
      preference: evidence.summaries
        ? evidence.summaries.map((s) => s.context.join(",")).join(";")
        : evidence.sessions.map((s) => s.id).join(","),
      analysis: ""
    })
}

const generator = (usesGoldPreference: boolean): Generator.Service => ({
  usesGoldPreference,
  generate: ({ preference, evidence }) =>
    Effect.succeed({ text: `${preference ?? "none"} from ${evidence.sessions.length}` })
})

const selectedCount: Scorer.Service = {
  metrics: [Scorer.metric({ name: "retrieval.count", description: "", family: "retrieval" })],
  score: ({ trace, instance }) =>
    Effect.succeed({
      "retrieval.count": trace.retrieval?.selected.length ?? NaN,
      "retrieval.relevant": (trace.retrieval?.selected ?? []).filter(
        (id) => instance.gold.sessions.find((g) => g.id === id)?.label === "relevant"
      ).length,
      "cost.calls": trace.usage.length
    })
}

describe("Pipeline.run", () => {
  it.effect("passes the selected sessions, in chronological order, through every stage", () =>
    Effect.gen(function* () {
      const shuffled: Retriever.Service = {
        needsSummaries: false,
        retrieve: () =>
          Effect.succeed({
            ranking: [
              { sessionId: "s4", score: 2 },
              { sessionId: "s2", score: 1 }
            ],
            selected: ["s4", "s2", "s4"]
          })
      }
      const trace = yield* Pipeline.run(
        {
          retriever: { plugin: "shuffled", needsGold: false, service: shuffled },
          inferrer: { plugin: "ids", service: inferrer },
          generator: { plugin: "g", service: generator(false) },
          scorers: [{ plugin: "count", service: selectedCount }]
        },
        instance
      )
      expect(trace.error).toBeUndefined()
      expect(trace.instanceId).toBe("p1:changing")
      expect(trace.inference?.preference).toBe("s2,s4")
      expect(trace.generation?.text).toBe("s2,s4 from 2")
      expect(trace.retrieval?.selected).toEqual(["s2", "s4"])
      expect(trace.scores).toEqual({ "retrieval.count": 2, "retrieval.relevant": 1, "cost.calls": 0 })
      expect(Object.keys(trace.timings).sort()).toEqual(["generate", "infer", "retrieve", "score"])
    })
  )

  it.effect("without a retriever every session is evidence", () =>
    Effect.gen(function* () {
      const trace = yield* Pipeline.run({ inferrer: { plugin: "ids", service: inferrer }, scorers: [] }, instance)
      expect(trace.inference?.preference).toBe("s1,s2,s3,s4")
      expect(trace.retrieval).toBeUndefined()
    })
  )

  it.effect("only a gold retriever receives the labels", () =>
    Effect.gen(function* () {
      const oracle: Retriever.GoldService = {
        needsSummaries: false,
        retrieve: (_input, gold) =>
          Effect.succeed(
            Retriever.fromScores(
              gold.sessions.map((s) => [s.id, s.label === "relevant" ? 1 : 0]),
              2
            )
          )
      }
      const trace = yield* Pipeline.run(
        {
          retriever: { plugin: "oracle", needsGold: true, service: oracle },
          inferrer: { plugin: "ids", service: inferrer },
          scorers: []
        },
        instance
      )
      expect(trace.retrieval?.selected).toEqual(["s3", "s4"])
    })
  )

  it.effect("summaries replace the sessions as evidence, and model calls are attributed to their stage", () =>
    Effect.gen(function* () {
      const trace = yield* Pipeline.run(
        {
          retriever: { plugin: "recent", needsGold: false, service: recent(2) },
          summarizer: { plugin: "sum", service: summarizer },
          inferrer: { plugin: "ids", service: inferrer },
          scorers: [{ plugin: "count", service: selectedCount }]
        },
        instance
      )
      expect(trace.summaries?.map((s) => s.sessionId)).toEqual(["s3", "s4"])
      expect(trace.inference?.preference).toBe("About Dana: third;About Dana: fourth")
      expect(trace.usage.map((u) => [u.stage, u.kind, u.cached])).toEqual([
        ["summarize", "complete", false],
        ["summarize", "complete", false]
      ])
      // the scorer sees the calls made before scoring
      expect(trace.scores["cost.calls"]).toBe(2)
    })
  )

  it.effect("a retriever that ranks summaries gets every session summarized first", () =>
    Effect.gen(function* () {
      const seen: Array<number> = []
      const bySummary: Retriever.Service = {
        needsSummaries: true,
        retrieve: ({ query, summaries }) =>
          Effect.sync(() => {
            seen.push(summaries?.size ?? -1)
            return Retriever.fromScores(
              query.sessions.map((s) => [s.id, s.index]),
              1
            )
          })
      }
      const trace = yield* Pipeline.run(
        {
          retriever: { plugin: "by-summary", needsGold: false, service: bySummary },
          summarizer: { plugin: "sum", service: summarizer },
          scorers: []
        },
        instance
      )
      expect(seen).toEqual([4])
      // the selected session was summarized once, not twice
      expect(trace.usage).toHaveLength(4)
      expect(trace.summaries?.map((s) => s.sessionId)).toEqual(["s4"])
    })
  )

  it.effect("a retriever that ranks summaries without a summarizer is a stage error", () =>
    Effect.gen(function* () {
      const trace = yield* Pipeline.run(
        {
          retriever: { plugin: "by-summary", needsGold: false, service: { ...recent(1), needsSummaries: true } },
          scorers: []
        },
        instance
      )
      expect(trace.error).toEqual({
        stage: "retrieve",
        plugin: "by-summary",
        tag: "StageError",
        message: "retrieve (by-summary): ranks session summaries but no summarizer is configured"
      })
    })
  )

  it.effect("the oracle-preference generator gets the gold preference, others the inferred one", () =>
    Effect.gen(function* () {
      const run = (gold: boolean) =>
        Pipeline.run(
          {
            retriever: { plugin: "recent", needsGold: false, service: recent(1) },
            inferrer: { plugin: "ids", service: inferrer },
            generator: { plugin: "g", service: generator(gold) },
            scorers: []
          },
          instance
        )
      expect((yield* run(true)).generation?.text).toBe("numbered steps from 1")
      expect((yield* run(false)).generation?.text).toBe("s4 from 1")
      const noInferrer = yield* Pipeline.run(
        { generator: { plugin: "g", service: generator(false) }, scorers: [] },
        instance
      )
      expect(noInferrer.generation?.text).toBe("none from 4")
    })
  )

  it.effect("a stage failure stops the run and keeps the outputs and calls made before it", () =>
    Effect.gen(function* () {
      const failing: Inferrer.Service = {
        infer: () => Effect.fail(new StageError({ stage: "infer", plugin: "broken", reason: "unparseable answer" }))
      }
      const trace = yield* Pipeline.run(
        {
          retriever: { plugin: "recent", needsGold: false, service: recent(2) },
          summarizer: { plugin: "sum", service: summarizer },
          inferrer: { plugin: "broken", service: failing },
          scorers: [{ plugin: "count", service: selectedCount }]
        },
        instance
      )
      expect(trace.error).toEqual({
        stage: "infer",
        plugin: "broken",
        tag: "StageError",
        message: "infer (broken): unparseable answer"
      })
      expect(trace.retrieval?.selected).toEqual(["s3", "s4"])
      expect(trace.usage).toHaveLength(2)
      expect(trace.scores).toEqual({})
    })
  )

  it.effect("a defect in a plugin is recorded, not thrown", () =>
    Effect.gen(function* () {
      const buggy: Retriever.Service = {
        needsSummaries: false,
        retrieve: () => Effect.die(new Error("index out of range"))
      }
      const trace = yield* Pipeline.run(
        { retriever: { plugin: "buggy", needsGold: false, service: buggy }, scorers: [] },
        instance
      )
      expect(trace.error).toEqual({ stage: "pipeline", plugin: "", tag: "Defect", message: "index out of range" })
    })
  )

  it.effect("session ids that are not in the history are rejected", () =>
    Effect.gen(function* () {
      const wrong: Retriever.Service = {
        needsSummaries: false,
        retrieve: () => Effect.succeed({ ranking: [{ sessionId: "s9", score: 1 }], selected: ["s1", "s12"] })
      }
      const trace = yield* Pipeline.run(
        { retriever: { plugin: "wrong", needsGold: false, service: wrong }, scorers: [] },
        instance
      )
      expect(trace.error?.message).toBe("retrieve (wrong): returned session ids that are not in the history: s12, s9")
    })
  )

  it.effect("usage ledgers of instances running concurrently stay separate", () =>
    Effect.gen(function* () {
      const other = Domain.fromRow({ ...row, persona_id: "p2", prior_interactions: row.prior_interactions.slice(0, 1) })
      const pipeline: Pipeline.CellPipeline = {
        summarizer: { plugin: "sum", service: summarizer },
        inferrer: { plugin: "ids", service: inferrer },
        scorers: []
      }
      const traces = yield* Effect.all([Pipeline.run(pipeline, instance), Pipeline.run(pipeline, other)], {
        concurrency: 2
      })
      expect(traces.map((t) => t.usage.length)).toEqual([4, 1])
    })
  )
})

/** Runs an effect with a tracer that keeps every span it makes (the default tracer underneath). */
const recordingSpans = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.gen(function* () {
    const inner = yield* Effect.tracer
    const spans: Array<Tracer.Span> = []
    const tracer = Tracer.make({
      span: (...args) => {
        const span = inner.span(...args)
        spans.push(span)
        return span
      },
      context: inner.context
    })
    const value = yield* Effect.withTracer(effect, tracer)
    return { value, spans }
  })

describe("Pipeline.run: spans and timings", () => {
  // A stage that takes `ms` of the (test) clock's time.
  const taking = <A>(ms: number, value: A) => Effect.as(TestClock.adjust(`${ms} millis`), value)

  it.effect("each stage call runs in a span named after its step, with its plugin, inside the pair's span", () =>
    Effect.gen(function* () {
      const { spans, value: trace } = yield* recordingSpans(
        Pipeline.run(
          {
            retriever: { plugin: "recent", needsGold: false, service: recent(2) },
            inferrer: { plugin: "ids", service: inferrer },
            scorers: [
              { plugin: "count", service: selectedCount },
              { plugin: "again", service: selectedCount }
            ]
          },
          instance
        )
      )
      expect(trace.error).toBeUndefined()
      const root = spans.find((s) => s.name === "pipeline.run")!
      expect(root.attributes.get("instance")).toBe("p1:changing")
      const stages = spans.filter((s) => s.name.startsWith("stage."))
      expect(stages.map((s) => [s.name, s.attributes.get("plugin")])).toEqual([
        ["stage.retrieve", "recent"],
        ["stage.infer", "ids"],
        ["stage.score", "count"],
        ["stage.score", "again"]
      ])
      for (const s of stages) expect(s.parent._tag === "Some" && s.parent.value.spanId).toBe(root.spanId)
    })
  )

  it.effect("a stage's timing is the duration of its spans, summed over its calls, also when it fails", () =>
    Effect.gen(function* () {
      const slowScorer: Scorer.Service = {
        ...selectedCount,
        score: (input) => Effect.zipRight(TestClock.adjust("5 millis"), selectedCount.score(input))
      }
      const ok = yield* Pipeline.run(
        {
          retriever: {
            plugin: "slow",
            needsGold: false,
            service: {
              needsSummaries: false,
              retrieve: (i) => Effect.flatMap(taking(25, 0), () => recent(2).retrieve(i))
            }
          },
          inferrer: { plugin: "slow", service: { infer: () => taking(40, { preference: "p", analysis: "" }) } },
          scorers: [
            { plugin: "a", service: slowScorer },
            { plugin: "b", service: slowScorer }
          ]
        },
        instance
      )
      expect(ok.timings).toEqual({ retrieve: 25, infer: 40, score: 10 })
      const failed = yield* Pipeline.run(
        {
          retriever: {
            plugin: "slow",
            needsGold: false,
            service: {
              needsSummaries: false,
              retrieve: (i) => Effect.flatMap(taking(3, 0), () => recent(2).retrieve(i))
            }
          },
          inferrer: {
            plugin: "broken",
            service: {
              infer: () =>
                Effect.zipRight(
                  TestClock.adjust("7 millis"),
                  Effect.fail(new StageError({ stage: "infer", plugin: "broken", reason: "no" }))
                )
            }
          },
          scorers: [{ plugin: "a", service: slowScorer }]
        },
        instance
      )
      expect(failed.error?.stage).toBe("infer")
      expect(failed.timings).toEqual({ retrieve: 3, infer: 7 })
    })
  )
})

describe("Pipeline.run, a scorer of the inference with the authors' accounting", () => {
  /** An inferrer that records how it was asked to read, a generator and scorers that record when they ran. */
  const recording = (failEarly: boolean) => {
    const log: Array<string> = []
    const reading: Inferrer.Service = {
      infer: ({ reading }) =>
        Effect.sync(() => (log.push(`infer ${reading ?? "own"}`), { preference: "p", analysis: "" }))
    }
    const replying: Generator.Service = {
      usesGoldPreference: false,
      generate: () => Effect.sync(() => (log.push("generate"), { text: "r" }))
    }
    const scorer = (name: string, reference: boolean): Scorer.Service => ({
      metrics: [Scorer.metric({ name, description: "", family: "x" })],
      ...(reference ? { reference: "inference" as const } : {}),
      score: ({ trace }) =>
        Effect.suspend(() => {
          log.push(`${name} (response: ${trace.generation !== undefined})`)
          return reference && failEarly
            ? Effect.fail(new StageError({ stage: "score", plugin: name, reason: "unreadable decomposition" }))
            : Effect.succeed({ [name]: 1 })
        })
    })
    const pipeline = (referenceScorer: boolean): Pipeline.CellPipeline => ({
      inferrer: { plugin: "reading", service: reading },
      generator: { plugin: "replying", service: replying },
      scorers: [
        { plugin: "retrieval", service: scorer("retrieval.x", false) },
        { plugin: "match", service: scorer("inference.x", referenceScorer) },
        { plugin: "judge", service: scorer("generation.x", false) }
      ]
    })
    return { log, pipeline }
  }

  it.effect("runs right after the inferrer, which reads as the authors' code does; scores keep the listed order", () =>
    Effect.gen(function* () {
      const { log, pipeline } = recording(false)
      const trace = yield* Pipeline.run(pipeline(true), instance)
      expect(log).toEqual([
        "infer reference",
        "inference.x (response: false)",
        "generate",
        "retrieval.x (response: true)",
        "generation.x (response: true)"
      ])
      expect(Object.keys(trace.scores)).toEqual(["retrieval.x", "inference.x", "generation.x"])
      // Without such a scorer: every scorer after the generator, the inferrer reading its own way.
      log.length = 0
      yield* Pipeline.run(pipeline(false), instance)
      expect(log).toEqual([
        "infer own",
        "generate",
        "retrieval.x (response: true)",
        "inference.x (response: true)",
        "generation.x (response: true)"
      ])
    })
  )

  it.effect("its failure ends the pair before generation, and the error says so", () =>
    Effect.gen(function* () {
      const { log, pipeline } = recording(true)
      const trace = yield* Pipeline.run(pipeline(true), instance)
      expect(log).toEqual(["infer reference", "inference.x (response: false)"])
      expect(trace.error?.stage).toBe("score")
      expect(trace.error?.message).toMatch(
        /^score \(inference\.x\): unreadable decomposition \(scored before generation, .*no response is generated or judged\)$/
      )
      expect(trace.generation).toBeUndefined()
    })
  )
})

describe("Pipeline.runNow", () => {
  // Plain stages: a ranking that repeats and disorders its selection, or fails, or throws a bug.
  const plainRetriever = (now: (input: Retriever.RetrievalInput) => Retriever.Retrieval) =>
    Retriever.plain({ needsSummaries: false }, now)
  const shuffled = plainRetriever(() => ({
    ranking: [
      { sessionId: "s4", score: 2 },
      { sessionId: "s2", score: 1 }
    ],
    selected: ["s4", "s2", "s4"]
  }))
  const plainCount = Scorer.plain({ metrics: selectedCount.metrics }, ({ trace, instance }) => ({
    "retrieval.count": trace.retrieval?.selected.length ?? NaN,
    "retrieval.relevant": (trace.retrieval?.selected ?? []).filter(
      (id) => instance.gold.sessions.find((g) => g.id === id)?.label === "relevant"
    ).length
  }))
  const cases: ReadonlyArray<readonly [string, Retriever.Service]> = [
    ["a selection with repeats", shuffled],
    [
      "a session id not in the history",
      plainRetriever(() => ({ ranking: [{ sessionId: "s9", score: 1 }], selected: [] }))
    ],
    [
      "a StageError thrown",
      plainRetriever(() => {
        throw new StageError({ stage: "retrieve", plugin: "plain", reason: "no index" })
      })
    ],
    [
      "a bug",
      plainRetriever(() => {
        throw new TypeError("x is undefined")
      })
    ]
  ]
  for (const [name, service] of cases) {
    it.effect(`gives the trace Pipeline.run gives, timings aside: ${name}`, () =>
      Effect.gen(function* () {
        const pipeline: Pipeline.CellPipeline = {
          retriever: { plugin: "plain", needsGold: false, service },
          scorers: [{ plugin: "count", service: plainCount }]
        }
        expect(Pipeline.isPlain(pipeline)).toBe(true)
        const viaEffect = yield* Pipeline.run(pipeline, instance)
        const now = Pipeline.runNow(pipeline, instance)!
        expect({ ...now, timings: {} }).toEqual({ ...viaEffect, timings: {} })
        expect(JSON.stringify({ ...now, timings: {} })).toBe(JSON.stringify({ ...viaEffect, timings: {} }))
        expect(Object.keys(now.timings)).toEqual(Object.keys(viaEffect.timings))
      })
    )
  }

  it("is for plain pipelines only: a stage without `now`, a model stage or a retriever of summaries", () => {
    const plain = { plugin: "plain", needsGold: false as const, service: shuffled }
    expect(Pipeline.isPlain({ retriever: plain, scorers: [{ plugin: "count", service: selectedCount }] })).toBe(false)
    expect(Pipeline.isPlain({ retriever: plain, inferrer: { plugin: "ids", service: inferrer }, scorers: [] })).toBe(
      false
    )
    const ofSummaries = Retriever.plain({ needsSummaries: true }, () => ({ ranking: [], selected: [] }))
    expect(Pipeline.isPlain({ retriever: { ...plain, service: ofSummaries }, scorers: [] })).toBe(false)
    expect(Pipeline.runNow({ retriever: { ...plain, service: ofSummaries }, scorers: [] }, instance)).toBeUndefined()
    expect(Pipeline.isPlain({ scorers: [{ plugin: "count", service: plainCount }] })).toBe(true)
  })
})

describe("Domain", () => {
  it("labels sessions against the current factor and preference", () => {
    expect(instance.gold.sessions.map((s) => s.label)).toEqual(["stale", "other", "relevant", "relevant"])
    expect(instance.query.sessions.map((s) => s.id)).toEqual(["s1", "s2", "s3", "s4"])
    expect(Domain.toRow(instance)).toEqual(row)
  })
})
