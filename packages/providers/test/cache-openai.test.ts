// The model cache in front of a real provider talking HTTP to a loopback OpenAI-compatible server:
// answers the server gave are never lost to a cache that cannot be written, unusable entries are
// asked for again, and refusals are never stored.
import { ModelCache, Models, type LanguageModel, Errors } from "@cupid-lab/core"

import { FileSystem } from "@effect/platform"
import { SystemError } from "@effect/platform/Error"
import { NodeContext, NodeFileSystem } from "@effect/platform-node"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as OpenAi from "../src/OpenAi.js"
import * as OpenAiServer from "../src/testing/OpenAiServer.js"
import { build, fast, user } from "./support.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cache-openai-"))
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const filesUnder = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.join(d.parentPath, d.name))

/** The local file system, except that every file write fails with ENOSPC (a full disk). */
const fullDisk: Layer.Layer<FileSystem.FileSystem> = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (real) =>
    FileSystem.make({
      ...real,
      writeFile: (file) =>
        Effect.fail(
          new SystemError({
            reason: "Unknown",
            module: "FileSystem",
            method: "writeFile",
            pathOrDescriptor: file,
            description: `ENOSPC: no space left on device, open '${file}'`,
            cause: Object.assign(new Error("ENOSPC: no space left on device"), { code: "ENOSPC" })
          })
        )
    })
  )
).pipe(Layer.provide(NodeFileSystem.layer))

const chatModel = (server: OpenAiServer.OpenAiServer, cache: ModelCache.Service) =>
  Effect.flatMap(build(OpenAi.plugin, { baseURL: server.baseURL, ...fast }), (bundle) =>
    Models.make({ gpt: bundle }, cache).languageModel("gpt")
  )

const judged = (content: string): LanguageModel.CompletionRequest => ({
  ...user(content),
  accept: (t) => t.startsWith("Score:")
})

describe("model cache over the openai provider on loopback", () => {
  it.scopedLive("a full disk: the 80 answers the server gave are all returned, with one warning", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const server = yield* OpenAiServer.make({ chat: (body) => `Score: ${body.messages[0]!.content.length}` })
      const warnings: Array<string> = []
      const cache = yield* Effect.provide(
        ModelCache.ModelCache,
        ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) }).pipe(Layer.provide(fullDisk))
      )
      const lm = yield* chatModel(server, cache)
      const prompts = Array.from({ length: 80 }, (_, i) => `q${"x".repeat(i)}`)
      const answers = yield* Effect.forEach(prompts, (p) => lm.complete(judged(p)), { concurrency: 8 })
      expect(answers.map((a) => a.text)).toEqual(prompts.map((p) => `Score: ${p.length}`))
      expect(server.requests).toHaveLength(80)
      expect(warnings).toEqual([
        `model cache: cannot write to ${dir} (ENOSPC); answers are still returned, but this run stores no more of them (the cache is read-only until it ends)`
      ])
      expect(yield* cache.stats).toEqual({ hits: 0, misses: 80, writes: 0, invalid: 0, rejected: 0, writeErrors: 80 })
      expect(filesUnder(dir)).toEqual([])
    })
  )

  it.scopedLive("an entry of the wrong shape is asked for again over HTTP and replaced", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const server = yield* OpenAiServer.make({ chat: () => "Score: 8" })
      const first = yield* chatModel(server, yield* Effect.provide(ModelCache.ModelCache, ModelCache.layerFile(dir)))
      yield* first.complete(judged("rate this"))
      const [file] = filesUnder(dir)
      const key = path.basename(file!, ".json")
      fs.writeFileSync(file!, JSON.stringify({ key, value: { text: ["Score: 8"], promptTokens: "2" } }))

      const warnings: Array<string> = []
      const rerun = yield* chatModel(
        server,
        yield* Effect.provide(
          ModelCache.ModelCache,
          ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) })
        )
      )
      expect((yield* rerun.complete(judged("rate this"))).text).toBe("Score: 8")
      expect(server.requests).toHaveLength(2)
      expect(warnings).toEqual([
        `model cache: ignoring ${file}: the stored value does not fit: text: Expected string, actual ["Score: 8"]; promptTokens: Expected number, actual "2"; completionTokens: is missing; the call is made again and the entry replaced`
      ])
      expect(JSON.parse(fs.readFileSync(file!, "utf8")).value).toEqual({
        text: "Score: 8",
        promptTokens: 2,
        completionTokens: 2
      })
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.scopedLive(
    "a refusal from the server fails the call, is not stored, and the next call asks the server again",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        let refuse = true
        const server = yield* OpenAiServer.make({
          chat: () => (refuse ? "I'm sorry, but I can't assist with that." : "Score: 3")
        })
        const lm = yield* chatModel(server, yield* Effect.provide(ModelCache.ModelCache, ModelCache.layerFile(dir)))
        const error = yield* Effect.flip(lm.complete(judged("rate this")))
        expect(error).toBeInstanceOf(Errors.ModelError)
        expect(error.message).toBe(
          `openai/test-model: the answer is a refusal, which counts as unparseable: "I'm sorry, but I can't assist with that." (refusals are never cached; a rerun asks again)`
        )
        expect(filesUnder(dir)).toEqual([])
        refuse = false
        expect((yield* lm.complete(judged("rate this"))).text).toBe("Score: 3")
        expect((yield* lm.complete(judged("rate this"))).text).toBe("Score: 3")
        expect(server.requests).toHaveLength(2)
        expect(filesUnder(dir)).toHaveLength(1)
      }).pipe(Effect.provide(NodeContext.layer))
  )
})
