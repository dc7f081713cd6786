// Cached answers go through their caller's acceptance check like fresh ones: an answer the stage
// cannot use, or a refusal, is asked for again and replaced; refusals are never stored.
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Exit, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type * as Domain from "../src/Domain.js"
import { ModelError, StageError } from "../src/Errors.js"
import * as LanguageModel from "../src/LanguageModel.js"
import * as ModelCache from "../src/ModelCache.js"
import * as Models from "../src/Models.js"
import * as LlmGenerator from "../src/LlmGenerator.js"
import * as LlmInferrer from "../src/LlmInferrer.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cache-accept-"))
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const entries = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name))

/** A model that gives the scripted answers in order (the last one from then on). */
const scripted = (answers: ReadonlyArray<string>) => {
  const requests: Array<LanguageModel.CompletionRequest> = []
  const service: LanguageModel.Service = {
    info: { provider: "scripted", model: "m1", params: {} },
    complete: (request) =>
      Effect.sync(() => {
        requests.push(request)
        return { text: answers[Math.min(requests.length, answers.length) - 1]!, promptTokens: 10, completionTokens: 5 }
      })
  }
  return { service, requests }
}

const session: Domain.SessionView = {
  id: "s1",
  index: 1,
  hash: "h1",
  dialogue: [
    { role: "user", content: "Give me the steps, numbered please." },
    { role: "assistant", content: "1. Open. 2. Save." }
  ]
}
const input = { request: "How do I export the report?", evidence: { sessions: [session] } }
const good = "Analysis: the user asked for steps twice.\nPreference: Use short numbered steps."
const refusal = "I'm sorry, I cannot help with that."

/** One run (a fresh cache over `dir`, as a rerun has) of an `llm` inferrer. */
const inferRun = (dir: string, lm: LanguageModel.Service) =>
  Effect.gen(function* () {
    const cache = yield* ModelCache.ModelCache
    const inferrer = yield* LlmInferrer.make({
      model: "m",
      maxTokens: 512,
      temperature: 0,
      prompts: "project",
      thinking: "strip"
    })
    const exit = yield* Effect.exit(inferrer.infer(input))
    return { exit, stats: yield* cache.stats }
  }).pipe(
    Effect.provide(Models.layer({ m: { languageModel: lm } }).pipe(Layer.provideMerge(ModelCache.layerFile(dir))))
  )

const failureMessage = <A>(exit: Exit.Exit<A, StageError>): string => {
  if (Exit.isSuccess(exit) || exit.cause._tag !== "Fail")
    throw new Error(`expected a stage failure, got ${String(exit)}`)
  expect(exit.cause.error).toBeInstanceOf(StageError)
  return exit.cause.error.message
}

describe("cached answers are checked like fresh ones", () => {
  for (const [name, cachedText] of [
    ["a cached refusal (stored before refusals were recognized)", refusal],
    ["a cached answer the stage cannot parse", "Thinking about it.\n\nThe sessions are unclear, more later."]
  ] as const) {
    it.effect(`${name} is asked for again and replaced`, () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const model = scripted([good])
        yield* inferRun(dir, model.service)
        const [file] = entries(dir)
        const stored = JSON.parse(fs.readFileSync(file!, "utf8")) as { key: string }
        // What an earlier version (or a laxer parser) left in the cache for this very call.
        fs.writeFileSync(
          file!,
          JSON.stringify({ key: stored.key, value: { text: cachedText, promptTokens: 10, completionTokens: 5 } })
        )

        const rerun = yield* inferRun(dir, model.service)
        expect(Exit.isSuccess(rerun.exit) && rerun.exit.value.preference).toBe("Use short numbered steps.")
        expect(model.requests).toHaveLength(2)
        expect(rerun.stats).toMatchObject({ hits: 0, misses: 1, writes: 1, rejected: 1, invalid: 0 })
        expect(JSON.parse(fs.readFileSync(file!, "utf8")).value.text).toBe(good)

        const third = yield* inferRun(dir, model.service)
        expect(third.stats).toMatchObject({ hits: 1, misses: 0, rejected: 0 })
        expect(model.requests).toHaveLength(2)
      }).pipe(Effect.provide(NodeContext.layer))
    )
  }
})

describe("refusals", () => {
  it.effect("fail the stage visibly, are never stored, and the rerun asks again", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const model = scripted([refusal, good])
      const first = yield* inferRun(dir, model.service)
      expect(failureMessage(first.exit)).toBe(
        `infer (llm): scripted/m1: the answer is a refusal, which counts as unparseable: "I'm sorry, I cannot help with that." (refusals are never cached; a rerun asks again)`
      )
      expect(entries(dir)).toEqual([])
      expect(first.stats).toMatchObject({ misses: 1, writes: 0 })

      const rerun = yield* inferRun(dir, model.service)
      expect(Exit.isSuccess(rerun.exit)).toBe(true)
      expect(model.requests).toHaveLength(2)
      expect(entries(dir)).toHaveLength(1)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("the generator, which takes any non-empty text, rejects a refusal too", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const model = scripted(["I can\u2019t assist with that request."])
      const exit = yield* Effect.gen(function* () {
        const generator = yield* LlmGenerator.make({
          model: "m",
          preference: "none",
          maxTokens: 100,
          temperature: 0,
          prompts: "project",
          thinking: "strip"
        })
        return yield* Effect.exit(generator.generate({ request: "Draft the update.", evidence: { sessions: [] } }))
      }).pipe(
        Effect.provide(
          Models.layer({ m: { languageModel: model.service } }).pipe(Layer.provide(ModelCache.layerFile(dir)))
        )
      )
      expect(failureMessage(exit)).toBe(
        `generate (llm): scripted/m1: the answer is a refusal, which counts as unparseable: "I can\u2019t assist with that request." (refusals are never cached; a rerun asks again)`
      )
      expect(entries(dir)).toEqual([])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a call without `accept` gets the refusal back, but it is not stored either", () => {
    const model = scripted([refusal, "Fine, here it is.", refusal])
    return Effect.gen(function* () {
      const lm = yield* Effect.flatMap(Models.Models, (m) => m.languageModel("m"))
      const request = { messages: [{ role: "user" as const, content: "x" }] }
      expect((yield* lm.complete(request)).text).toBe(refusal)
      expect((yield* lm.complete(request)).text).toBe("Fine, here it is.")
      expect((yield* lm.complete(request)).text).toBe("Fine, here it is.")
      expect(model.requests).toHaveLength(2)
      const error = yield* Effect.flip(lm.complete({ messages: [{ role: "user", content: "y" }], accept: () => true }))
      expect(error).toBeInstanceOf(ModelError)
      expect(error.retryable).toBe(false)
      expect(yield* Effect.flatMap(ModelCache.ModelCache, (c) => c.stats)).toMatchObject({
        hits: 1,
        misses: 3,
        writes: 1
      })
    }).pipe(
      Effect.provide(
        Models.layer({ m: { languageModel: model.service } }).pipe(Layer.provideMerge(ModelCache.layerMemory))
      )
    )
  })
})

describe("LanguageModel.isRefusal", () => {
  const refusals = [
    "I'm sorry, I cannot help with that.",
    "I'm sorry, but I can't assist with that request.",
    "I\u2019m sorry, but I can\u2019t help with that. If you have other questions, feel free to ask!",
    "I can't assist with that.",
    "I cannot comply with this request.",
    "I am unable to provide that information.",
    "I'm not able to help with this.",
    "Sorry, but I won't be able to help with that.",
    "Sorry! I can't help with that.",
    "Sorry, that's not something I can help with.",
    "Unfortunately, I cannot fulfill this request.",
    "As an AI language model, I cannot provide that.",
    "**I'm sorry, but I can't help with that.**",
    "<think>The user wants...</think>\nI'm sorry, I can't help with that.",
    '"I must decline this request."'
  ]
  const answers = [
    "",
    "Preference: Use short numbered steps.",
    "I'm sorry to hear the migration slipped. Here is a short update for Dana: status first, then risks.",
    "I can't make the Friday sync, but here is the status: migration 70% done.",
    "I cannot provide the numbers until Monday; the export is still running.",
    "I can't help but notice the sessions all ask for numbered steps.",
    `I'm sorry, I cannot help with that right away. ${"Here is a detailed plan with every step spelled out. ".repeat(5)}`,
    "Context:\n- Weekly update for Dana.\nPreferences:\n- One-line status first.",
    "Score: 7"
  ]
  it("recognizes short refusals", () => {
    expect(refusals.filter((t) => !LanguageModel.isRefusal(t))).toEqual([])
  })
  it("leaves answers, drafts in the user's voice and long replies alone", () => {
    expect(answers.filter((t) => LanguageModel.isRefusal(t))).toEqual([])
  })
})
