/**
 * The model path against its SDK: what a sweep spends per model call beyond what the `openai`
 * client itself spends on the same request. A loopback OpenAI server in this process answers every
 * chat call at once (a reply the `llm` inferrer reads); then, at each concurrency (8 and 32):
 *
 * - the raw client: a plain node script, the `openai` package and nothing else, sends the N request
 *   bodies the sweep sends (recorded by the server on a first sweep), that many at a time; its CPU
 *   per call is (CPU of that script - CPU of the same script sending none) / N, its calls/s N over
 *   the wall time of its loop;
 * - the sweep: the compiled CLI on generated data (N instances), `retriever: all` and the `llm`
 *   inferrer (one call per instance) with a fresh model cache each run, so every call reaches the
 *   server, against the same config without the model-calling stage (`BENCH_OFFLINE=extractive`:
 *   with the extractive inferrer instead); CPU per call is (CPU of the model run - CPU of the
 *   offline run) / N, its calls/s N over the pair loop's time (run.json `phasesMs.pairs`). Both
 *   configs list the model, so both load the SDK, as both raw scripts do.
 *
 * Every run is a whole process; CPU (user + system) comes from /usr/bin/time. Each round runs the
 * four processes in turn (raw, raw sending none, sweep, offline sweep); the figures are medians
 * over the rounds, each ratio printed with its per-round values. Nothing is asserted.
 *
 *   npm run bench -- model-path       (BENCH_CALLS=240 calls a run, BENCH_ROUNDS=3, BENCH_CONCURRENCY=8,32)
 *
 * Data: generated (`synthetic:personas=N/3,seed=9`), not CUPID; answers: one fixed reply, not a model.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { spawn, spawnSync } from "node:child_process"
import { Effect } from "effect"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(root, "packages", "experiments", "dist", "cli.mjs")
const personas = Math.max(1, Math.round(Number(process.env["BENCH_CALLS"] ?? 240) / 3))
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 3)
const levels = (process.env["BENCH_CONCURRENCY"] ?? "8,32").split(",").map(Number)
const offlineStage = process.env["BENCH_OFFLINE"] === "extractive" ? "extractive" : "none"
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-model-path-"))
const sdk = createRequire(path.join(root, "package.json")).resolve("openai")

spawnSync(process.execPath, [path.join(root, "tools", "build-cli.mjs"), "--quiet", "--if-stale"], { stdio: "inherit" })

const reply =
  "### Analysis\n\nThe user asked twice for numbered steps.\n\n### Most Likely Preference\n\nInstructions should use short numbered steps."

// The raw client: the SDK as its README shows it (no retries, as the provider sends none of its
// own), `calls` of the recorded bodies, `concurrency` at a time; 0 calls loads the SDK and stops.
const rawScript = path.join(dir, "raw-client.mjs")
fs.writeFileSync(
  rawScript,
  `import * as fs from "node:fs"
const [sdkPath, bodiesFile, baseURL, callsArg, concurrencyArg] = process.argv.slice(2)
const bodies = JSON.parse(fs.readFileSync(bodiesFile, "utf8"))
const calls = Number(callsArg)
const sdk = await import(sdkPath)
const OpenAI = sdk.OpenAI ?? sdk.default.OpenAI ?? sdk.default
const client = new OpenAI({ apiKey: "sk-bench", baseURL, maxRetries: 0 })
let next = 0
let chars = 0
const started = performance.now()
const worker = async () => {
  while (next < calls) {
    const r = await client.chat.completions.create(bodies[next++ % bodies.length])
    chars += (r.choices[0].message.content ?? "").length
  }
}
await Promise.all(Array.from({ length: Number(concurrencyArg) }, worker))
process.stdout.write(JSON.stringify({ ms: performance.now() - started, chars }) + "\\n")
`
)

const config = (baseURL: string, concurrency: number, model: boolean, cacheDir: string) =>
  [
    `name: model-path-${model ? "model" : "offline"}`,
    `data: { source: "synthetic:personas=${personas},seed=9" }`,
    `cacheDir: ${JSON.stringify(cacheDir)}`,
    "models:",
    `  subject: { provider: openai, model: test-subject, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, temperature: 0, concurrency: ${concurrency} }`,
    "pipeline:",
    "  retriever: all",
    ...(model
      ? ["  inferrer: { use: llm, model: subject }"]
      : offlineStage === "extractive"
        ? ["  inferrer: { use: extractive }"]
        : []),
    "scorers: [{ use: retrieval, ks: [2] }]",
    `concurrency: ${concurrency}`
  ].join("\n") + "\n"

const env = (): Record<string, string> => ({
  ...Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] => e[1] !== undefined && !/^(OPENAI_|CUPID_|CO_API_KEY)/.test(e[0])
    )
  ),
  NO_COLOR: "1",
  CUPID_TEST_KEY: "sk-bench"
})

interface Finished {
  readonly cpu: number
  readonly stdout: string
}

let runs = 0
/** One whole process, asynchronously (the server answers from this one); its CPU from /usr/bin/time. */
const run = (args: ReadonlyArray<string>) =>
  Effect.async<Finished, Error>((resume) => {
    const timeFile = path.join(dir, `time-${++runs}.txt`)
    const child = spawn("/usr/bin/time", ["-f", "cpu %U %S", "-o", timeFile, process.execPath, ...args], {
      cwd: root,
      env: env(),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (d: Buffer) => (stdout += d.toString("utf8")))
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")))
    child.on("exit", (code) => {
      const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(fs.existsSync(timeFile) ? fs.readFileSync(timeFile, "utf8") : "")
      if (code !== 0 || m === null) {
        resume(Effect.fail(new Error(`${args.join(" ")} failed (${code}): ${stderr.slice(-2000)}`)))
      } else resume(Effect.succeed({ cpu: Number(m[1]) + Number(m[2]), stdout }))
    })
  })

let sweeps = 0
/** A sweep into a fresh directory with a fresh cache: its CPU, pair-loop milliseconds and calls sent. */
const sweep = (server: OpenAiServer.OpenAiServer, concurrency: number, model: boolean) =>
  Effect.gen(function* () {
    const n = ++sweeps
    const file = path.join(dir, `sweep-${n}.yaml`)
    fs.writeFileSync(file, config(server.baseURL, concurrency, model, path.join(dir, `cache-${n}`)))
    const out = path.join(dir, `run-${n}`)
    const before = server.requests.length
    const { cpu } = yield* run([cli, "sweep", "--config", file, "--out", out])
    const info = JSON.parse(fs.readFileSync(path.join(out, "run.json"), "utf8")) as { phasesMs: { pairs: number } }
    const sent = server.requests.slice(before)
    fs.rmSync(out, { recursive: true, force: true })
    fs.rmSync(path.join(dir, `cache-${n}`), { recursive: true, force: true })
    return { cpu, pairsMs: info.phasesMs.pairs, sent }
  })

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const list = (xs: ReadonlyArray<number>, digits: number) => xs.map((x) => x.toFixed(digits)).join(", ")

const program = Effect.gen(function* () {
  const server = yield* OpenAiServer.make({ chat: () => reply })
  // A first sweep records the bodies the raw client sends (and warms the disk cache of the CLI).
  const first = yield* sweep(server, levels[0] ?? 8, true)
  const bodies = first.sent.filter((r) => r.path.endsWith("/chat/completions")).map((r) => JSON.parse(r.rawBody))
  const calls = bodies.length
  const bodiesFile = path.join(dir, "bodies.json")
  fs.writeFileSync(bodiesFile, JSON.stringify(bodies))
  const bytes = first.sent.reduce((n, r) => n + r.rawBytes.length, 0)
  console.log(
    `${calls} calls a run (${personas} generated personas, one llm inference each, ${(bytes / calls / 1024).toFixed(1)} KB a request body), ${rounds} rounds; offline run: ${offlineStage === "none" ? "the same config without the inferrer" : "the extractive inferrer instead"}`
  )
  const raw = (n: number, concurrency: number) =>
    run([rawScript, sdk, bodiesFile, server.baseURL, String(n), String(concurrency)])
  for (const concurrency of levels) {
    const rawCpu: Array<number> = [],
      rawRate: Array<number> = [],
      cpu: Array<number> = [],
      rate: Array<number> = []
    for (let r = 0; r < rounds; r++) {
      const busy = yield* raw(calls, concurrency)
      const idle = yield* raw(0, concurrency)
      const withModel = yield* sweep(server, concurrency, true)
      const offline = yield* sweep(server, concurrency, false)
      if (withModel.sent.length !== calls || offline.sent.length !== 0)
        return yield* Effect.fail(
          new Error(`the sweeps sent ${withModel.sent.length} and ${offline.sent.length} requests, not ${calls} and 0`)
        )
      rawCpu.push(((busy.cpu - idle.cpu) * 1000) / calls)
      rawRate.push(calls / ((JSON.parse(busy.stdout) as { ms: number }).ms / 1000))
      cpu.push(((withModel.cpu - offline.cpu) * 1000) / calls)
      rate.push(calls / (withModel.pairsMs / 1000))
    }
    const cpuRatios = cpu.map((c, i) => c / rawCpu[i]!)
    const rateRatios = rate.map((c, i) => c / rawRate[i]!)
    console.log(`concurrency ${concurrency}:`)
    console.log(
      `  raw openai client: ${median(rawCpu).toFixed(2)} ms CPU a call [${list(rawCpu, 2)}], ${median(rawRate).toFixed(0)} calls/s [${list(rawRate, 0)}]`
    )
    console.log(
      `  sweep (compiled CLI): ${median(cpu).toFixed(2)} ms CPU a call [${list(cpu, 2)}], ${median(rate).toFixed(0)} calls/s in the pair loop [${list(rate, 0)}]`
    )
    console.log(
      `  CPU a call: ${median(cpuRatios).toFixed(2)}x the raw client's (per round ${list(cpuRatios, 2)}; target: at most 1.5x)`
    )
    console.log(
      `  calls/s: ${median(rateRatios).toFixed(2)}x the raw client's (per round ${list(rateRatios, 2)}; target: at least 0.8x)`
    )
  }
})

await Effect.runPromise(Effect.scoped(program))
fs.rmSync(dir, { recursive: true, force: true })
