import { describe, expect } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import * as Builtins from "../src/Builtins.js"
import * as Domain from "../src/Domain.js"
import type * as LanguageModel from "../src/LanguageModel.js"
import * as ModelCache from "../src/ModelCache.js"
import * as Models from "../src/Models.js"
import * as Plugin from "../src/Plugin.js"
import * as QaGenerator from "../src/QaGenerator.js"
import { it } from "../src/testing/NodeTest.js"

const scripted = (answer: string) => {
  const requests: Array<LanguageModel.CompletionRequest> = []
  const service: LanguageModel.Service = {
    info: { provider: "scripted", model: "m1", params: {} },
    complete: (request) =>
      Effect.sync(() => {
        requests.push(request)
        return { text: answer, promptTokens: 10, completionTokens: 5 }
      })
  }
  return { service, requests }
}

const modelsWith = (lm: LanguageModel.Service) =>
  Models.layer({ reader: { languageModel: lm } }).pipe(Layer.provideMerge(ModelCache.layerMemory))

const session = (
  index: number,
  date: string | undefined,
  turns: ReadonlyArray<[string, string]>
): Domain.SessionView => ({
  id: Domain.sessionId(index),
  index,
  hash: `h${index}`,
  dialogue: turns.map(([speaker, content], i) => ({ role: i % 2 === 0 ? "user" : "assistant", content, speaker })),
  ...(date === undefined ? {} : { date })
})

const later = session(2, "2023-06-02T10:15", [["Mira", "We moved to Porto last week!"]])
const earlier = session(0, "2023-05-08T13:56", [
  ["Mira", "I started pottery classes."],
  ["Jon", "Nice, which studio?"]
])
const options = { model: "reader", maxTokens: 200, temperature: 0, thinking: "strip" } as const

describe("qa generator", () => {
  it.effect("asks the question over the selected sessions, oldest first with their dates and speakers", () =>
    Effect.gen(function* () {
      const lm = scripted("<think>Porto is in the second session.</think> Porto ")
      const generator = yield* Effect.provide(QaGenerator.make(options), modelsWith(lm.service))
      const out = yield* generator.generate({
        request: "Where did Mira move?",
        evidence: { sessions: [later, earlier] }
      })
      expect(out).toEqual({ text: "Porto" })
      expect(generator.usesGoldPreference).toBe(false)
      const [system, user] = lm.requests[0]!.messages
      expect(system!.role).toBe("system")
      expect(user!.content).toContain(
        "### Session 1 (2023-05-08 13:56)\nMira: I started pottery classes.\nJon: Nice, which studio?\n\n### Session 2 (2023-06-02 10:15)\nMira: We moved to Porto last week!"
      )
      expect(user!.content).toContain("Question: Where did Mira move?")
      expect(user!.content).toContain('"No information available"')
      expect(lm.requests[0]!.maxTokens).toBe(200)
    })
  )

  it.effect("fails the stage on an empty answer, and says when nothing was selected", () =>
    Effect.gen(function* () {
      const lm = scripted("  <think>hmm</think>  ")
      const generator = yield* Effect.provide(QaGenerator.make(options), modelsWith(lm.service))
      const exit = yield* Effect.exit(generator.generate({ request: "Where?", evidence: { sessions: [] } }))
      expect(Exit.isFailure(exit) && String(exit.cause)).toContain("the model returned an empty answer")
      expect(lm.requests[0]!.messages.at(-1)!.content).toContain("(No earlier sessions were selected")
    })
  )

  it("is a built-in generator", () => {
    expect(Plugin.makeRegistry(Builtins.plugins).names("generator")).toContain("qa")
  })
})
