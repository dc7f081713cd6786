import { afterEach, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Deferred, Effect, Fiber, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { ModelError } from "../src/Errors.js"
import type * as EmbeddingModel from "../src/EmbeddingModel.js"
import type * as LanguageModel from "../src/LanguageModel.js"
import * as ModelCache from "../src/ModelCache.js"
import * as Models from "../src/Models.js"
import type * as Reranker from "../src/Reranker.js"
import * as Usage from "../src/Usage.js"

/** A language model that answers from a script and records every request it receives. */
const scriptedModel = (
  info: LanguageModel.ModelInfo,
  answer: (
    request: LanguageModel.CompletionRequest,
    call: number
  ) => Effect.Effect<LanguageModel.Completion, ModelError>
) => {
  const received: Array<LanguageModel.CompletionRequest> = []
  const service: LanguageModel.Service = {
    info,
    complete: (request) =>
      Effect.suspend(() => {
        received.push(request)
        return answer(request, received.length)
      })
  }
  return { service, received }
}

const echo = (request: LanguageModel.CompletionRequest) =>
  Effect.succeed({ text: `echo ${request.messages.at(-1)?.content}`, promptTokens: 10, completionTokens: 3 })

const gpt: LanguageModel.ModelInfo = { provider: "openai", model: "gpt-4o", params: { temperature: 0 } }
const ask = (
  content: string,
  extra: Partial<LanguageModel.CompletionRequest> = {}
): LanguageModel.CompletionRequest => ({
  messages: [
    { role: "system", content: "Be brief." },
    { role: "user", content }
  ],
  ...extra
})

const languageModel = (name: string) => Effect.flatMap(Models.Models, (m) => m.languageModel(name))

describe("Models cache keying", () => {
  it.effect("an identical call is answered from the cache and recorded as cached", () =>
    Effect.gen(function* () {
      const model = scriptedModel(gpt, echo)
      const lm = yield* languageModel("m").pipe(Effect.provide(Models.layer({ m: { languageModel: model.service } })))
      const [first, entries] = yield* Usage.track(
        Usage.withStage("infer", Effect.zip(lm.complete(ask("hi")), lm.complete(ask("hi"))))
      )
      expect(first[0].text).toBe("echo hi")
      expect(first[1]).toEqual(first[0])
      expect(model.received).toHaveLength(1)
      expect(entries.map((e) => [e.stage, e.cached, e.promptTokens, e.completionTokens])).toEqual([
        ["infer", false, 10, 3],
        ["infer", true, 10, 3]
      ])
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )

  it.effect("changing the model, the provider, a configured parameter, temperature or a message misses", () =>
    Effect.gen(function* () {
      const cache = yield* ModelCache.ModelCache
      const calls: Array<string> = []
      const make = (info: LanguageModel.ModelInfo) =>
        Models.cachedLanguageModel(
          {
            info,
            complete: (r) =>
              Effect.sync(() => calls.push(`${info.provider}/${info.model}`)).pipe(Effect.zipRight(echo(r)))
          },
          cache
        )
      const base = make(gpt)
      yield* base.complete(ask("hi"))
      yield* base.complete(ask("hi")) // hit
      yield* make({ ...gpt, model: "gpt-4o-mini" }).complete(ask("hi"))
      yield* make({ ...gpt, provider: "compatible" }).complete(ask("hi"))
      yield* make({ ...gpt, params: { temperature: 0.7 } }).complete(ask("hi"))
      yield* base.complete(ask("hi", { temperature: 1 }))
      yield* base.complete(ask("hello"))
      yield* base.complete({
        messages: [
          { role: "system", content: "Be long." },
          { role: "user", content: "hi" }
        ]
      })
      yield* base.complete(ask("hi", { maxTokens: 5 }))
      // dryRunAnswer is not part of what is sent, so it does not change the key
      yield* base.complete(ask("hi", { dryRunAnswer: "an example" }))
      expect(calls).toEqual([
        "openai/gpt-4o",
        "openai/gpt-4o-mini",
        "compatible/gpt-4o",
        "openai/gpt-4o",
        "openai/gpt-4o",
        "openai/gpt-4o",
        "openai/gpt-4o",
        "openai/gpt-4o"
      ])
      expect(yield* cache.stats).toEqual({ hits: 2, misses: 8, writes: 8, invalid: 0, rejected: 0, writeErrors: 0 })
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )

  it.effect("the key does not depend on the order object keys were written in", () =>
    Effect.sync(() => {
      const a = Models.completionKey(
        { provider: "p", model: "m", params: { a: 1, b: 2 } },
        { messages: [], temperature: 0, maxTokens: 3 }
      )
      const b = Models.completionKey(
        { model: "m", params: { b: 2, a: 1 }, provider: "p" },
        { maxTokens: 3, temperature: 0, messages: [] }
      )
      expect(a).toBe(b)
      expect(a).toMatch(/^[0-9a-f]{64}$/)
    })
  )

  it.effect("a failure is not cached: the next identical call is sent again", () =>
    Effect.gen(function* () {
      const model = scriptedModel(gpt, (r, call) =>
        call === 1
          ? Effect.fail(
              new ModelError({
                provider: "openai",
                model: "gpt-4o",
                reason: "server error",
                status: 500,
                retryable: true
              })
            )
          : echo(r)
      )
      const lm = yield* languageModel("m").pipe(Effect.provide(Models.layer({ m: { languageModel: model.service } })))
      const first = yield* Effect.flip(lm.complete(ask("hi")))
      expect(first.message).toBe("openai/gpt-4o: server error (HTTP 500)")
      const second = yield* lm.complete(ask("hi"))
      expect(second.text).toBe("echo hi")
      const third = yield* lm.complete(ask("hi"))
      expect(third.text).toBe("echo hi")
      expect(model.received).toHaveLength(2)
      expect(yield* Effect.flatMap(ModelCache.ModelCache, (c) => c.stats)).toEqual({
        hits: 1,
        misses: 2,
        writes: 1,
        invalid: 0,
        rejected: 0,
        writeErrors: 0
      })
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )

  it.effect("concurrent identical calls make one request and share its answer", () =>
    Effect.gen(function* () {
      const gate = yield* Deferred.make<void>()
      const model = scriptedModel(gpt, (r) => Effect.zipRight(Deferred.await(gate), echo(r)))
      const lm = yield* languageModel("m").pipe(Effect.provide(Models.layer({ m: { languageModel: model.service } })))
      const fiber = yield* Effect.fork(
        Usage.track(
          Effect.all(
            Array.from({ length: 5 }, () => lm.complete(ask("same"))),
            { concurrency: "unbounded" }
          )
        )
      )
      yield* Effect.yieldNow()
      yield* Deferred.succeed(gate, undefined)
      const [answers, entries] = yield* Fiber.join(fiber)
      expect(model.received).toHaveLength(1)
      expect(answers.map((a) => a.text)).toEqual(Array(5).fill("echo same"))
      expect(entries.filter((e) => !e.cached)).toHaveLength(1)
      expect(entries.filter((e) => e.cached)).toHaveLength(4)
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )

  it.effect("when the fiber computing a value is interrupted, a waiting identical call computes it itself", () =>
    Effect.gen(function* () {
      const started = yield* Deferred.make<void>()
      const model = scriptedModel(gpt, (r, call) =>
        call === 1 ? Effect.zipRight(Deferred.succeed(started, undefined), Effect.never) : echo(r)
      )
      const lm = yield* languageModel("m").pipe(Effect.provide(Models.layer({ m: { languageModel: model.service } })))
      const first = yield* Effect.fork(lm.complete(ask("hi")))
      yield* Deferred.await(started)
      const waiter = yield* Effect.fork(lm.complete(ask("hi")))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(first)
      const answer = yield* Fiber.join(waiter)
      expect(answer.text).toBe("echo hi")
      expect(model.received).toHaveLength(2)
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )

  it.effect("embeddings are cached per text: a batch sends only the texts not seen before", () =>
    Effect.gen(function* () {
      const sent: Array<ReadonlyArray<string>> = []
      const embedder: EmbeddingModel.Service = {
        info: { provider: "local", model: "tiny", params: {} },
        embed: (texts) =>
          Effect.sync(() => {
            sent.push(texts)
            return { vectors: texts.map((t) => Float32Array.from([t.length, 1])), promptTokens: texts.length * 2 }
          })
      }
      const models = Models.make({ e: { embeddingModel: embedder } }, yield* ModelCache.ModelCache)
      const em = yield* models.embeddingModel("e")
      const [first, firstUsage] = yield* Usage.track(em.embed(["ab", "abc"]))
      const [second, secondUsage] = yield* Usage.track(em.embed(["abc", "abcd", "abcd"]))
      expect(sent).toEqual([["ab", "abc"], ["abcd"]])
      expect(first.vectors.map((v) => [...v])).toEqual([
        [2, 1],
        [3, 1]
      ])
      expect(second.vectors.map((v) => [...v])).toEqual([
        [3, 1],
        [4, 1],
        [4, 1]
      ])
      // 2 tokens per text whether it came from the cache or not
      expect(second.promptTokens).toBe(6)
      expect(firstUsage.map((u) => u.cached)).toEqual([false])
      expect(secondUsage.map((u) => [u.kind, u.cached, u.promptTokens])).toEqual([["embed", false, 6]])
      const [, thirdUsage] = yield* Usage.track(em.embed(["ab"]))
      expect(thirdUsage.map((u) => u.cached)).toEqual([true])
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )

  it.effect("reranking is keyed by the query and every document", () =>
    Effect.gen(function* () {
      let calls = 0
      const reranker: Reranker.Service = {
        info: { provider: "cohere", model: "rerank", params: {} },
        rerank: (_query, documents) =>
          Effect.sync(() => (calls++, { scores: documents.map((d) => d.length), promptTokens: 7 }))
      }
      const rr = yield* Models.make({ r: { reranker } }, yield* ModelCache.ModelCache).reranker("r")
      const a = yield* rr.rerank("q", ["x", "yy"])
      yield* rr.rerank("q", ["x", "yy"])
      yield* rr.rerank("q", ["x", "yyy"])
      yield* rr.rerank("q2", ["x", "yy"])
      expect(a.scores).toEqual([1, 2])
      expect(calls).toBe(3)
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )

  it.effect("asking for a model that is not configured names the configured ones", () =>
    Effect.gen(function* () {
      const model = scriptedModel(gpt, echo)
      const models = Models.make({ judge: { languageModel: model.service } }, yield* ModelCache.ModelCache)
      expect((yield* Effect.flip(models.languageModel("jduge"))).message).toBe(
        `model "jduge": no model of that name is configured (configured: judge)`
      )
      expect((yield* Effect.flip(models.embeddingModel("judge"))).message).toBe(
        `model "judge": its provider offers no embeddings`
      )
    }).pipe(Effect.provide(ModelCache.layerMemory))
  )
})

describe("file cache", () => {
  const made: Array<string> = []
  const tempDir = () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-cache-"))
    made.push(dir)
    return dir
  }
  afterEach(() => {
    for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
  })
  const files = (dir: string): Array<string> =>
    fs.existsSync(dir)
      ? fs
          .readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((d) => d.isFile())
          .map((d) => d.name)
      : []

  it.effect("entries written by one cache are read by a fresh one over the same directory", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const model = scriptedModel(gpt, echo)
      const call = languageModel("m").pipe(
        Effect.flatMap((lm) => Usage.track(lm.complete(ask("persist")))),
        Effect.provide(
          Models.layer({ m: { languageModel: model.service } }).pipe(Layer.provide(ModelCache.layerFile(dir)))
        )
      )
      const [a, ua] = yield* call
      const [b, ub] = yield* call
      expect(model.received).toHaveLength(1)
      expect(b).toEqual(a)
      expect([ua[0]?.cached, ub[0]?.cached]).toEqual([false, true])
      const stored = files(dir)
      expect(stored).toHaveLength(1)
      expect(stored[0]).toMatch(/^[0-9a-f]{64}\.json$/)
      expect(stored[0]!.slice(0, 2)).toBe(fs.readdirSync(dir)[0])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a corrupt entry is a miss and is replaced", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const model = scriptedModel(gpt, echo)
      const warnings: Array<string> = []
      const call = languageModel("m").pipe(
        Effect.flatMap((lm) => lm.complete(ask("persist"))),
        Effect.provide(
          Models.layer({ m: { languageModel: model.service } }).pipe(
            Layer.provide(ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) }))
          )
        )
      )
      yield* call
      const file = path.join(dir, fs.readdirSync(dir)[0]!, files(dir)[0]!)
      fs.writeFileSync(file, '{"key":')
      expect((yield* call).text).toBe("echo persist")
      expect(model.received).toHaveLength(2)
      expect(JSON.parse(fs.readFileSync(file, "utf8")).value.text).toBe("echo persist")
      expect(warnings).toEqual([
        `model cache: ignoring ${file}: not valid JSON (Unexpected end of JSON input; the file may be truncated); the call is made again and the entry replaced`
      ])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a dry run sends nothing and writes nothing, but answers from entries already cached", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const model = scriptedModel(gpt, echo)
      const bundles = { m: { languageModel: model.service } }
      yield* languageModel("m").pipe(
        Effect.flatMap((lm) => lm.complete(ask("seen"))),
        Effect.provide(Models.layer(bundles).pipe(Layer.provide(ModelCache.layerFile(dir))))
      )
      expect(files(dir)).toHaveLength(1)
      const [answers, usage] = yield* languageModel("m").pipe(
        Effect.flatMap((lm) =>
          Usage.track(
            Effect.all([lm.complete(ask("seen")), lm.complete(ask("new one", { dryRunAnswer: "Preference: terse." }))])
          )
        ),
        Effect.provide(Models.layer(bundles, { dryRun: true }).pipe(Layer.provide(ModelCache.layerFile(dir))))
      )
      expect(model.received).toHaveLength(1)
      expect(files(dir)).toHaveLength(1)
      expect(answers.map((a) => a.text)).toEqual(["echo seen", "Preference: terse."])
      // prompt: "Be brief." = 3 tokens + 4, "new one" = 2 + 4; answer: "Preference" (10 letters) = 2,
      // ":" "terse" "." = 3
      expect(usage.map((u) => [u.cached, u.promptTokens, u.completionTokens])).toEqual([
        [true, 10, 3],
        [false, 13, 5]
      ])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("in a dry run a repeated call counts as cached, as it would be in a real run", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const model = scriptedModel(gpt, echo)
      const [, usage] = yield* languageModel("m").pipe(
        Effect.flatMap((lm) =>
          Usage.track(Effect.all([lm.complete(ask("x")), lm.complete(ask("x")), lm.complete(ask("y"))]))
        ),
        Effect.provide(
          Models.layer({ m: { languageModel: model.service } }, { dryRun: true }).pipe(
            Layer.provide(ModelCache.layerFile(dir))
          )
        )
      )
      expect(usage.map((u) => u.cached)).toEqual([false, true, false])
      expect(model.received).toHaveLength(0)
      expect(files(dir)).toHaveLength(0)
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
