// A cache entry that cannot be written never costs the answer: the call returns it, one warning
// names the directory and the error code, and the cache is read-only for the rest of the run.
import { FileSystem } from "@effect/platform"
import { SystemError } from "@effect/platform/Error"
import { NodeContext, NodeFileSystem } from "@effect/platform-node"
import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type * as LanguageModel from "../src/LanguageModel.js"
import * as ModelCache from "../src/ModelCache.js"
import * as Models from "../src/Models.js"
import * as Usage from "../src/Usage.js"

const made: Array<string> = []
const tempDir = () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cache-writes-"))
  made.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of made.splice(0)) {
    fs.chmodSync(dir, 0o755)
    fs.rmSync(dir, { recursive: true, force: true })
  }
})

/** Every file under `dir`, relative to it. */
const filesUnder = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => path.relative(dir, path.join(d.parentPath, d.name)))
    .sort()

const errno = (code: string, message: string, file: string) =>
  new SystemError({
    reason: "Unknown",
    module: "FileSystem",
    method: "writeFile",
    pathOrDescriptor: file,
    description: `${code}: ${message}, open '${file}'`,
    cause: Object.assign(new Error(`${code}: ${message}`), { code })
  })

/**
 * The local file system, except that writing a file puts its first `partial` bytes on disk and then
 * fails with ENOSPC, as a disk that fills up mid-write does.
 */
const fullDisk = (partial = 10): Layer.Layer<FileSystem.FileSystem> =>
  Layer.effect(
    FileSystem.FileSystem,
    Effect.map(FileSystem.FileSystem, (real) =>
      FileSystem.make({
        ...real,
        writeFile: (file, data) =>
          Effect.zipRight(
            Effect.sync(() => fs.writeFileSync(file, data.subarray(0, partial))),
            Effect.fail(errno("ENOSPC", "no space left on device", file))
          )
      })
    )
  ).pipe(Layer.provide(NodeFileSystem.layer))

/** The local file system whose renames fail (a temporary file is then written and must be removed). */
const failingRename: Layer.Layer<FileSystem.FileSystem> = Layer.effect(
  FileSystem.FileSystem,
  Effect.map(FileSystem.FileSystem, (real) =>
    FileSystem.make({ ...real, rename: (from) => Effect.fail(errno("EXDEV", "cross-device link not permitted", from)) })
  )
).pipe(Layer.provide(NodeFileSystem.layer))

const counting = () => {
  const prompts: Array<string> = []
  const service: LanguageModel.Service = {
    info: { provider: "scripted", model: "m", params: {} },
    complete: (request) =>
      Effect.sync(() => {
        const prompt = request.messages[0]!.content
        prompts.push(prompt)
        return { text: `answer to ${prompt}`, promptTokens: 4, completionTokens: 3 }
      })
  }
  return { service, prompts }
}

const ask = (content: string): LanguageModel.CompletionRequest => ({ messages: [{ role: "user", content }] })

describe("a cache that cannot be written", () => {
  it.effect(
    "on a full disk: all 80 answers are returned, one warning names the directory and ENOSPC, no temporary file is left",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const model = counting()
        const warnings: Array<string> = []
        const cacheLayer = ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) }).pipe(
          Layer.provide(fullDisk())
        )
        const cache = yield* Effect.provide(ModelCache.ModelCache, cacheLayer)
        const lm = yield* Models.make({ m: { languageModel: model.service } }, cache).languageModel("m")
        const prompts = Array.from({ length: 80 }, (_, i) => `question ${i}`)
        const [answers, usage] = yield* Usage.track(
          Effect.forEach(prompts, (p) => lm.complete(ask(p)), { concurrency: 8 })
        )

        expect(answers.map((a) => a.text)).toEqual(prompts.map((p) => `answer to ${p}`))
        expect(model.prompts).toHaveLength(80)
        expect(usage.filter((u) => u.cached)).toHaveLength(0)
        expect(warnings).toEqual([
          `model cache: cannot write to ${dir} (ENOSPC); answers are still returned, but this run stores no more of them (the cache is read-only until it ends)`
        ])
        // Partial temporary files were removed; only the (empty) shard directories remain.
        expect(filesUnder(dir)).toEqual([])
        // 80 misses, nothing written, every answer counted as not stored.
        expect(yield* cache.stats).toEqual({ hits: 0, misses: 80, writes: 0, invalid: 0, rejected: 0, writeErrors: 80 })

        // The answers are still shared within the run: asking again sends nothing.
        const again = yield* lm.complete(ask("question 7"))
        expect(again.text).toBe("answer to question 7")
        expect(model.prompts).toHaveLength(80)
        expect((yield* cache.stats).hits).toBe(1)
      })
  )

  it.effect("read-only after the first failure: entries already on disk still answer", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const model = counting()
      // A healthy run stores one answer.
      const healthy = yield* Effect.provide(ModelCache.ModelCache, ModelCache.layerFile(dir))
      yield* Effect.flatMap(Models.make({ m: { languageModel: model.service } }, healthy).languageModel("m"), (lm) =>
        lm.complete(ask("stored"))
      )
      expect(filesUnder(dir)).toHaveLength(1)

      const warnings: Array<string> = []
      const full = yield* Effect.provide(
        ModelCache.ModelCache,
        ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) }).pipe(Layer.provide(fullDisk()))
      )
      const lm = yield* Models.make({ m: { languageModel: model.service } }, full).languageModel("m")
      expect((yield* lm.complete(ask("new"))).text).toBe("answer to new")
      expect((yield* lm.complete(ask("stored"))).text).toBe("answer to stored")
      expect((yield* lm.complete(ask("newer"))).text).toBe("answer to newer")
      expect(model.prompts).toEqual(["stored", "new", "newer"])
      expect(warnings).toHaveLength(1)
      expect(yield* full.stats).toEqual({ hits: 1, misses: 2, writes: 0, invalid: 0, rejected: 0, writeErrors: 2 })
      expect(filesUnder(dir)).toHaveLength(1)
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.effect("a failed rename removes the temporary file and names its error code", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const warnings: Array<string> = []
      const cache = yield* Effect.provide(
        ModelCache.ModelCache,
        ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) }).pipe(Layer.provide(failingRename))
      )
      const { value, cached } = yield* cache.getOrCompute(ModelCache.key({ x: 1 }), Effect.succeed({ answer: 42 }))
      expect([value, cached]).toEqual([{ answer: 42 }, false])
      expect(warnings).toEqual([
        `model cache: cannot write to ${dir} (EXDEV); answers are still returned, but this run stores no more of them (the cache is read-only until it ends)`
      ])
      expect(filesUnder(dir)).toEqual([])
    })
  )

  it.effect("a healthy write leaves exactly the entry, no temporary file", () =>
    Effect.gen(function* () {
      const dir = tempDir()
      const cache = yield* Effect.provide(ModelCache.ModelCache, ModelCache.layerFile(dir))
      const k = ModelCache.key({ x: 2 })
      yield* cache.set(k, { answer: 1 })
      expect(filesUnder(dir)).toEqual([path.join(k.slice(0, 2), `${k}.json`)])
      expect(JSON.parse(fs.readFileSync(path.join(dir, k.slice(0, 2), `${k}.json`), "utf8"))).toEqual({
        key: k,
        value: { answer: 1 }
      })
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

/** Why a chmod 0555 directory cannot be tested here, or undefined when it can. */
const readOnlyDirectoryUnavailable = ((): string | undefined => {
  const probe = fs.mkdtempSync(path.join(os.tmpdir(), "cache-probe-"))
  try {
    fs.chmodSync(probe, 0o555)
    fs.writeFileSync(path.join(probe, "x"), "x")
    return `chmod 0555 does not stop writes for this user (uid ${process.getuid?.() ?? "?"}, e.g. root); the injected ENOSPC tests cover the same path`
  } catch {
    return undefined
  } finally {
    fs.chmodSync(probe, 0o755)
    fs.rmSync(probe, { recursive: true, force: true })
  }
})()

describe("a real read-only cache directory", () => {
  it.effect.skipIf(readOnlyDirectoryUnavailable !== undefined)(
    `chmod 0555: answers are returned and one warning names the directory and EACCES${
      readOnlyDirectoryUnavailable === undefined ? "" : ` [skipped: ${readOnlyDirectoryUnavailable}]`
    }`,
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        fs.chmodSync(dir, 0o555)
        const model = counting()
        const warnings: Array<string> = []
        const cache = yield* Effect.provide(
          ModelCache.ModelCache,
          ModelCache.layerFile(dir, { onWarning: (line) => warnings.push(line) })
        )
        const lm = yield* Models.make({ m: { languageModel: model.service } }, cache).languageModel("m")
        const answers = yield* Effect.forEach(["a", "b", "c"], (p) => lm.complete(ask(p)))
        expect(answers.map((a) => a.text)).toEqual(["answer to a", "answer to b", "answer to c"])
        expect(warnings).toEqual([
          `model cache: cannot write to ${dir} (EACCES); answers are still returned, but this run stores no more of them (the cache is read-only until it ends)`
        ])
        expect(yield* cache.stats).toMatchObject({ writes: 0, writeErrors: 3 })
        expect(filesUnder(dir)).toEqual([])
      }).pipe(Effect.provide(NodeContext.layer))
  )
})
