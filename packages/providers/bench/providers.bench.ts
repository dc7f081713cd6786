// Figures for the providers package: what importing costs (CLI start-up), the per-call overhead of
// the openai provider over a loopback server (SDK + resilience guard + response checks), and the
// throughput of the transformers provider on a tiny ONNX model (tokenizer + runtime overhead; real
// weights add their own compute). Run: npm run bench -- providers
import { ConfigProvider, Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { performance } from "node:perf_hooks"

const ms = (t0: number) => (performance.now() - t0).toFixed(0)
const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1)

const timedImport = async (name: string, load: () => Promise<unknown>) => {
  const t0 = performance.now()
  await load()
  console.log(`import ${name.padEnd(28)} ${ms(t0).padStart(5)} ms`)
}

await timedImport("@cupid-lab/providers", () => import("@cupid-lab/providers"))
await timedImport("openai (at first build)", () => import("openai"))
await timedImport("cohere-ai (at first build)", () => import("cohere-ai"))
// An optional install (Transformers.installHint), so its types may be absent: imported by name.
const transformersRuntime: string = "@huggingface/transformers"
await timedImport(transformersRuntime, () => import(transformersRuntime))

const { Plugin } = await import("@cupid-lab/core")
const { OpenAi, Transformers } = await import("@cupid-lab/providers")
const { OpenAiServer, TinyBert } = await import("@cupid-lab/providers/testing")
const { writeTinyBert } = TinyBert

/** Wall time and CPU time (client and server share this process) per call; CPU is the steadier figure on a busy machine. */
const start = () => {
  const t0 = performance.now()
  const c0 = process.cpuUsage()
  return (calls: number) => {
    const wall = performance.now() - t0
    const cpu = process.cpuUsage(c0)
    return `${(wall / calls).toFixed(2)} ms/call wall, ${((cpu.user + cpu.system) / 1000 / calls).toFixed(2)} ms/call CPU`
  }
}

const roundTrips = (calls: number, concurrency: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make()
      const options = yield* Plugin.decodeOptions(OpenAi.plugin, { baseURL: server.baseURL, concurrency })
      const lm = (yield* OpenAi.make(options, "bench")).languageModel!
      const clock = start()
      yield* Effect.forEach(
        Array.from({ length: calls }, (_, i) => i),
        (i) => lm.complete({ messages: [{ role: "user", content: `request number ${i}` }] }),
        { concurrency: "unbounded", discard: true }
      )
      console.log(
        `openai provider via loopback:  ${calls} calls, concurrency ${String(concurrency).padStart(2)}: ${clock(calls)}`
      )
    })
  ).pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map())))

// Baseline: the bare SDK against the same server, so the provider's own share can be read off.
const sdkBaseline = (calls: number, concurrency: number) =>
  Effect.scoped(
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make()
      const { OpenAI } = yield* Effect.promise(() => import("openai"))
      const client = new OpenAI({ apiKey: "unused", baseURL: server.baseURL, maxRetries: 0 })
      const clock = start()
      yield* Effect.forEach(
        Array.from({ length: calls }, (_, i) => i),
        (i) =>
          Effect.promise(() =>
            client.chat.completions.create({
              model: "bench",
              messages: [{ role: "user", content: `request number ${i}` }]
            })
          ),
        { concurrency, discard: true }
      )
      console.log(
        `bare openai SDK via loopback: ${calls} calls, concurrency ${String(concurrency).padStart(2)}: ${clock(calls)}`
      )
    })
  )

await Effect.runPromise(sdkBaseline(200, 1))
await Effect.runPromise(roundTrips(200, 1))
await Effect.runPromise(sdkBaseline(400, 16))
await Effect.runPromise(roundTrips(400, 16))

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-bench-"))
try {
  const tiny = writeTinyBert(path.join(dir, "encoder"), { kind: "encoder", hidden: 64 })
  const texts = Array.from(
    { length: 512 },
    (_, i) => `the user prefers short answers with numbered steps for recipe ${i % 7} and travel plan`
  )
  await Effect.runPromise(
    Effect.scoped(
      Effect.gen(function* () {
        const options = yield* Plugin.decodeOptions(Transformers.plugin, { path: tiny.dir, batchSize: 32 })
        const embedder = (yield* Transformers.make(options, "tiny")).embeddingModel!
        let t0 = performance.now()
        yield* embedder.embed(texts.slice(0, 1))
        console.log(`transformers first call (loads runtime + model): ${ms(t0)} ms`)
        t0 = performance.now()
        const out = yield* embedder.embed(texts)
        const seconds = (performance.now() - t0) / 1000
        console.log(
          `transformers tiny encoder (hidden 64): ${texts.length} texts of ${out.promptTokens / texts.length} tokens, ` +
            `batch 32: ${(texts.length / seconds).toFixed(0)} texts/s`
        )
      })
    )
  )
} finally {
  fs.rmSync(dir, { recursive: true, force: true })
}
globalThis.gc?.()
console.log(`heap used ${mb(process.memoryUsage().heapUsed)} MB, rss ${mb(process.memoryUsage().rss)} MB`)
