// The stages' prompt packs and the paper's answer formats, with a scripted model: what is sent
// (system and user messages, temperature, token limit) and how answers in the authors' formats,
// log summaries and cut-off answers are read.
import { describe, expect } from "@effect/vitest"
import { it } from "../src/testing/NodeTest.js"
import { Effect, Layer } from "effect"
import type { SessionView } from "../src/Domain.js"
import type * as LanguageModel from "../src/LanguageModel.js"
import * as ModelCache from "../src/ModelCache.js"
import * as Models from "../src/Models.js"
import * as ReferencePrompts from "../src/ReferencePrompts.js"
import * as ReferenceCheckout from "../src/testing/ReferenceCheckout.js"
import * as LlmGenerator from "../src/LlmGenerator.js"
import * as LlmInferrer from "../src/LlmInferrer.js"
import * as LlmSummarizer from "../src/LlmSummarizer.js"

const checkout = ReferenceCheckout.dir

const session = (i: number, text: string): SessionView => ({
  id: `s${i}`,
  index: i - 1,
  hash: `h${i}`,
  dialogue: [
    { role: "user", content: text },
    { role: "assistant", content: `Answer ${i}.` }
  ]
})

/** A model answering from `reply`, recording what it was asked. */
const scripted = (reply: (r: LanguageModel.CompletionRequest) => string | LanguageModel.Completion) => {
  const seen: Array<LanguageModel.CompletionRequest> = []
  const lm: LanguageModel.Service = {
    info: { provider: "test", model: "m", params: {} },
    complete: (r) =>
      Effect.sync(() => {
        seen.push(r)
        const out = reply(r)
        return typeof out === "string" ? { text: out, promptTokens: 1, completionTokens: 1 } : out
      })
  }
  const env = Layer.mergeAll(
    Models.layer({ m: { languageModel: lm } }).pipe(Layer.provide(ModelCache.layerMemory)),
    Layer.succeed(ReferencePrompts.ReferencePrompts, ReferencePrompts.make({ dir: checkout, cacheDir: "/nonexistent" }))
  )
  return { seen, env }
}

const evidence = { sessions: [session(3, "Plan the retreat."), session(1, "Draft the memo.")] }

/** The LLM inferrer with the authors' prompts, on the scripted model "m". */
const referenceInferrer = (thinking: "strip" | "keep") =>
  LlmInferrer.make({ model: "m", prompts: "reference", maxTokens: 100, temperature: 0, thinking })

describe("inferrer llm, prompts: reference", () => {
  it.effect(
    "sends the authors' system prompt and the history as their interaction log, and reads their heading",
    () => {
      ReferenceCheckout.need()
      const { seen, env } = scripted(
        () =>
          "### Analysis\n\nSessions 1 and 2.\n\n### Most Likely Preference\n\n  Memos should open with the decision.  \nMore text."
      )
      return Effect.gen(function* () {
        const inferrer = yield* LlmInferrer.make({
          model: "m",
          prompts: "reference",
          maxTokens: 8192,
          temperature: 0,
          thinking: "strip"
        })
        const out = yield* inferrer.infer({ request: "Write the Q3 memo.", evidence })
        expect(out).toEqual({ preference: "Memos should open with the decision.", analysis: "Sessions 1 and 2." })
        const [r] = seen
        expect(r!.messages.map((m) => m.role)).toEqual(["system", "user"])
        expect([r!.temperature, r!.maxTokens]).toEqual([0, 8192])
        const user = r!.messages[1]!.content
        // Oldest first, numbered from 1, whatever order the evidence came in.
        expect(user.indexOf("### Session 1\n\n#### User\n\nDraft the memo.")).toBeGreaterThan(-1)
        expect(
          user.indexOf("### Session 2\n\n#### User\n\nPlan the retreat.\n\n#### AI Assistant\n\nAnswer 3.\n\n---")
        ).toBeGreaterThan(user.indexOf("### Session 1"))
        expect(user).toContain("Write the Q3 memo.")
      }).pipe(Effect.provide(env))
    }
  )

  it.effect(
    "temperature: null sends none; thinking: keep reads the heading even inside reasoning, as the authors' code does",
    () => {
      ReferenceCheckout.need()
      const answer =
        "<think>Maybe ### Most Likely Preference\n\nA guess.</think>\n### Most Likely Preference\n\nThe real one."
      const { seen, env } = scripted(() => answer)
      return Effect.gen(function* () {
        const keep = yield* LlmInferrer.make({
          model: "m",
          prompts: "reference",
          maxTokens: 100,
          temperature: null,
          thinking: "keep"
        })
        expect((yield* keep.infer({ request: "r", evidence })).preference).toBe("A guess.</think>")
        expect("temperature" in seen[0]!).toBe(false)
        const strip = yield* LlmInferrer.make({
          model: "m",
          prompts: "reference",
          maxTokens: 100,
          temperature: null,
          thinking: "strip"
        })
        expect((yield* strip.infer({ request: "r2", evidence })).preference).toBe("The real one.")
      }).pipe(Effect.provide(env))
    }
  )

  it.effect(
    "reading: reference reads only as the authors' code: no heading fails, an empty line is an empty preference",
    () => {
      ReferenceCheckout.need()
      const answers: Record<string, string> = {
        none: "### Analysis\n\nA.\n\n### Preference\n\nDate every note.",
        empty: "### Analysis\n\nNothing applies.\n\n### Most Likely Preference\n\n"
      }
      const { env } = scripted((r) => answers[r.messages[1]!.content.includes("none") ? "none" : "empty"]!)
      return Effect.gen(function* () {
        const inferrer = yield* referenceInferrer("strip")
        const none = { request: "none", evidence }
        const empty = { request: "empty", evidence }
        const dropped = yield* Effect.flip(inferrer.infer({ ...none, reading: "reference" }))
        expect(dropped.message).toBe(
          'infer (llm): no "### Most Likely Preference" heading: the authors\' code cannot read this answer and drops the instance (it is not scored, and no response is generated or judged)'
        )
        expect(yield* inferrer.infer({ ...empty, reading: "reference" })).toEqual({
          preference: "",
          analysis: "Nothing applies."
        })
        // The inferrer's own reading: the labelled sentence, and no empty preference.
        expect((yield* inferrer.infer(none)).preference).toBe("Date every note.")
        expect((yield* Effect.flip(inferrer.infer(empty))).message).toMatch(
          /the line after "### Most Likely Preference" is empty/
        )
      }).pipe(Effect.provide(env))
    }
  )

  it.effect("a cut-off answer is a failure, truncated, and not read", () => {
    ReferenceCheckout.need()
    const { env } = scripted(() => ({
      text: "### Most Likely Preference\n\nHalf a sen",
      promptTokens: 1,
      completionTokens: 100,
      finishReason: "length"
    }))
    return Effect.gen(function* () {
      const inferrer = yield* referenceInferrer("strip")
      const e = yield* Effect.flip(inferrer.infer({ request: "r", evidence }))
      expect(e.message).toMatch(
        /^infer \(llm\): test\/m: truncated: the answer stopped at the token limit \(100 tokens\)/
      )
    }).pipe(Effect.provide(env))
  })

  it.effect("the hinted variant is its own prompt, and the default prompt carries no hint", () => {
    const { seen, env } = scripted(() => "Preference: Be brief.")
    return Effect.gen(function* () {
      for (const prompts of ["project", "hinted"] as const) {
        const inferrer = yield* LlmInferrer.make({
          model: "m",
          prompts,
          maxTokens: 100,
          temperature: 0,
          thinking: "strip"
        })
        yield* inferrer.infer({ request: `r-${prompts}`, evidence })
      }
      const [project, hinted] = seen.map((r) => r.messages[0]!.content)
      expect(project).not.toMatch(/most recent|however similar/)
      expect(hinted).toMatch(/the most recent ones hold/)
    }).pipe(Effect.provide(env))
  })
})

describe("generator llm, prompts: reference", () => {
  it.effect("answers from the authors' generation prompt; refuses a preference it has no prompt for", () => {
    ReferenceCheckout.need()
    const { seen, env } = scripted(() => "<think>plan</think>Here is the memo.")
    return Effect.gen(function* () {
      const gen = yield* LlmGenerator.make({
        model: "m",
        preference: "none",
        prompts: "reference",
        maxTokens: 8192,
        temperature: 0,
        thinking: "keep"
      })
      expect((yield* gen.generate({ request: "Write it.", evidence })).text).toBe(
        "<think>plan</think>Here is the memo."
      )
      expect(seen[0]!.messages.map((m) => m.role)).toEqual(["system", "user"])
      const e = yield* Effect.flip(
        LlmGenerator.make({
          model: "m",
          preference: "gold",
          prompts: "reference",
          maxTokens: 10,
          temperature: 0,
          thinking: "strip"
        })
      )
      expect(e.message).toMatch(/prompts: reference has no prompt for preference: gold/)
    }).pipe(Effect.provide(env))
  })
})

describe("summarizer llm, scope: log", () => {
  it.effect("summarizes the whole log in one call and gives each session its entry", () => {
    const { seen, env } = scripted(
      () =>
        "```json\n" +
        JSON.stringify({
          sessions: [
            { session: 2, analysis: "b", context: ["retreat"], preferences: ["outdoor"] },
            { session: 1, analysis: "a", context: ["memo"], preferences: ["decision first", " "] }
          ]
        }) +
        "\n```"
    )
    return Effect.gen(function* () {
      const s = yield* LlmSummarizer.make({
        model: "m",
        scope: "log",
        maxTokens: 4096,
        temperature: 0,
        thinking: "strip"
      })
      const out = yield* s.summarize(evidence.sessions)
      expect(out).toEqual([
        { sessionId: "s3", context: ["retreat"], preferences: ["outdoor"] },
        { sessionId: "s1", context: ["memo"], preferences: ["decision first"] }
      ])
      expect(seen).toHaveLength(1)
      expect(seen[0]!.messages[0]!.content).toMatch(
        /### Session 1\nUser: Draft the memo\.[\s\S]*### Session 2\nUser: Plan the retreat\./
      )
    }).pipe(Effect.provide(env))
  })

  it.effect("asks for the paper's Fig. 23 shape and reads it, session ids as numbers or text", () => {
    const { seen, env } = scripted(() =>
      JSON.stringify({
        summaries: [
          { session_id: "Session 2", analysis: "b", context: ["retreat"], preferences: ["outdoor"] },
          { session_id: 1, analysis: "a", context: ["memo"], preferences: ["decision first"] }
        ]
      })
    )
    return Effect.gen(function* () {
      const s = yield* LlmSummarizer.make({
        model: "m",
        scope: "log",
        maxTokens: 4096,
        temperature: 0,
        thinking: "strip"
      })
      expect(yield* s.summarize(evidence.sessions)).toEqual([
        { sessionId: "s3", context: ["retreat"], preferences: ["outdoor"] },
        { sessionId: "s1", context: ["memo"], preferences: ["decision first"] }
      ])
      expect(seen[0]!.messages.map((m) => m.content).join("\n")).toContain(
        '{"summaries": [{"session_id": 1, "analysis"'
      )
    }).pipe(Effect.provide(env))
  })

  it("refuses a log summary that misses or repeats a session", () => {
    expect(
      LlmSummarizer.parseLog(JSON.stringify({ sessions: [{ session: 1, context: [], preferences: [] }] }), 2)
    ).toEqual({
      ok: false,
      reason: "expected 2 session summaries, got 1"
    })
    expect(
      LlmSummarizer.parseLog(
        JSON.stringify([
          { session: 1, context: [], preferences: [] },
          { session: 1, context: [], preferences: [] }
        ]),
        2
      ).ok
    ).toBe(false)
    expect(LlmSummarizer.parseLog(JSON.stringify([{ session: 1, context: "x", preferences: [] }]), 1)).toEqual({
      ok: false,
      reason: 'session entry 1: expected "context" and "preferences" lists of strings'
    })
  })
})
