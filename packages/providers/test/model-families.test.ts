// The `models:` blocks docs/paper-ablations.md gives for the model families of the CUPID paper
// (Table 8), each sent to a loopback server that speaks the OpenAI chat API the way that family's
// endpoint does: what each block puts in the request body, what the server answers, and how the
// cache-backed model reads it (requests counted with their retries, a cut-off answer a failure).
import { ModelCache, Models, Usage } from "@cupid-lab/core"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as OpenAi from "../src/OpenAi.js"
import * as OpenAiServer from "../src/testing/OpenAiServer.js"
import { build, fast } from "./support.js"

type Body = Record<string, unknown> & {
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
}

const request = {
  messages: [
    { role: "system" as const, content: "You infer preferences." },
    { role: "user" as const, content: "Log and request." }
  ],
  temperature: 0,
  maxTokens: 8192
}

/** Build the block's model behind the cache and ask once; the server's recorded bodies come back with the answer. */
const ask = (server: { readonly baseURL: string }, block: Record<string, unknown>, model: string) =>
  Effect.gen(function* () {
    const bundle = yield* build(
      OpenAi.plugin,
      { ...fast, ...block, baseURL: server.baseURL, apiKeyEnv: "K" },
      { K: "sk-x" },
      model
    )
    const models = Models.make({ m: bundle }, yield* ModelCache.ModelCache)
    const lm = yield* models.languageModel("m")
    return yield* Usage.track(Effect.either(lm.complete(request)))
  }).pipe(Effect.provide(ModelCache.layerMemory))

describe("model families of the paper, as docs/paper-ablations.md configures them", () => {
  it.scoped("GPT-4o (evaluator): developer role, temperature 0, max_completion_tokens", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ chat: () => "### Evaluation Score\n\n8" })
      const [answer] = yield* ask(
        server,
        { temperature: 0, systemRole: "developer", maxTokensParam: "max_completion_tokens" },
        "gpt-4o-2024-11-20"
      )
      expect(answer._tag).toBe("Right")
      const body = server.requests[0]!.body as Body
      expect(body.messages.map((m) => m.role)).toEqual(["developer", "user"])
      expect([body.temperature, body.max_completion_tokens, body.max_tokens]).toEqual([0, 8192, undefined])
    })
  )

  it.scoped(
    "o3-mini: no temperature whatever a stage asks (the endpoint answers 400 to one), reasoning effort passed through",
    () =>
      Effect.gen(function* () {
        const server = yield* OpenAiServer.make({
          chat: (body) => {
            if ((body as Body).temperature !== undefined)
              throw new Error("temperature is not supported with this model")
            return "### Most Likely Preference\n\nShort numbered steps."
          }
        })
        const [answer] = yield* ask(
          server,
          {
            temperature: null,
            maxTokensParam: "max_completion_tokens",
            systemRole: "developer",
            extraBody: { reasoning_effort: "medium" }
          },
          "o3-mini"
        )
        expect(answer._tag).toBe("Right")
        const body = server.requests[0]!.body as Body
        expect("temperature" in body).toBe(false)
        expect(body.reasoning_effort).toBe("medium")
      })
  )

  it.scoped(
    "Claude 3.7 Sonnet with thinking (Anthropic's OpenAI-compatible endpoint): thinking passed through, temperature 1 whatever a stage asks",
    () =>
      Effect.gen(function* () {
        const server = yield* OpenAiServer.make({
          chat: (body) => {
            if ((body as Body).temperature !== 1) throw new Error("temperature must be 1 when thinking is enabled")
            return "### Most Likely Preference\n\nCite sources."
          }
        })
        const block = {
          temperature: null,
          extraBody: { temperature: 1, thinking: { type: "enabled", budget_tokens: 1024 } }
        }
        const [answer] = yield* ask(server, block, "claude-3-7-sonnet-20250219")
        expect(answer._tag).toBe("Right")
        const body = server.requests[0]!.body as Body
        // temperature: null keeps the stage's 0 out; extraBody supplies the 1 thinking requires.
        expect([body.temperature, body.thinking, body.max_tokens]).toEqual([
          1,
          { type: "enabled", budget_tokens: 1024 },
          8192
        ])
        expect(body.messages[0]!.role).toBe("system")
      })
  )

  it.scoped("Gemini (its OpenAI-compatible endpoint): system role, max_tokens", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ chat: () => "ok" })
      yield* ask(server, { temperature: 0 }, "gemini-2.0-pro-exp-02-05")
      const body = server.requests[0]!.body as Body
      expect([body.messages[0]!.role, body.temperature, body.max_tokens]).toEqual(["system", 0, 8192])
    })
  )

  it.scoped(
    "DeepSeek-R1 (Together) answers with its reasoning inline; a cut-off answer is a failure, never read or cached",
    () =>
      Effect.gen(function* () {
        let calls = 0
        const server = yield* OpenAiServer.make({
          chat: () =>
            ++calls === 1
              ? { content: "<think>Long reasoning that never ends", finishReason: "length" }
              : "<think>r</think>\n\n### Most Likely Preference\n\nX."
        })
        const [first, usage] = yield* ask(server, { temperature: 0 }, "deepseek-ai/DeepSeek-R1")
        expect(first._tag).toBe("Left")
        if (first._tag === "Left")
          expect(first.left.message).toMatch(/truncated: the answer stopped at the token limit \(8192 tokens\)/)
        expect(usage).toMatchObject([{ cached: false, requests: 1 }])
        // Not cached: the next ask reaches the server and reads the whole answer.
        const [second] = yield* ask(server, { temperature: 0 }, "deepseek-ai/DeepSeek-R1")
        expect(second._tag === "Right" && second.right.text.startsWith("<think>r</think>")).toBe(true)
        expect(server.requests).toHaveLength(2)
      })
  )

  it.scoped("Qwen, Llama and Mistral served by vLLM, and PrefMatcher-7B: system role, max_tokens, no key needed", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ chat: () => '[{"index": 1, "label": "Fully Covered"}]' })
      for (const model of ["Qwen/Qwen2.5-72B-Instruct", "kixlab/prefmatcher-7b"])
        yield* ask(server, { temperature: 0 }, model)
      for (const r of server.requests) {
        const body = r.body as Body
        expect([body.messages[0]!.role, body.max_tokens, body.temperature]).toEqual(["system", 8192, 0])
      }
    })
  )

  it.scopedLive("counts every HTTP request a call sent, retries included, also when it finally fails", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        chat: () => "fine",
        faults: [OpenAiServer.Faults.serverError(500), OpenAiServer.Faults.serverError(503)]
      })
      const [ok, usage] = yield* ask(server, { temperature: 0 }, "m")
      expect(ok._tag).toBe("Right")
      expect(usage).toMatchObject([{ cached: false, requests: 3 }])
      expect(Usage.totals(usage)).toMatchObject({ calls: 1, requests: 3, retries: 2, failedCalls: 0 })
      expect(server.requests).toHaveLength(3)

      const failing = yield* OpenAiServer.make({
        chat: () => "never",
        faults: [
          OpenAiServer.Faults.serverError(500),
          OpenAiServer.Faults.serverError(500),
          OpenAiServer.Faults.serverError(500)
        ]
      })
      const [lost, usage2] = yield* ask(failing, { temperature: 0, maxRetries: 2 }, "m")
      expect(lost._tag).toBe("Left")
      expect(Usage.totals(usage2)).toMatchObject({ calls: 1, requests: 3, retries: 2, failedCalls: 1 })
      expect(failing.requests).toHaveLength(3)
    })
  )
})
