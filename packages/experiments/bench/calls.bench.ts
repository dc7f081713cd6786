/**
 * calls.jsonl against the bytes actually sent: configs/paper-ablations.yaml (5 cells that share
 * many calls through the model cache) through the compiled CLI, its three models pointed at a
 * loopback OpenAI-compatible server in this process that answers every prompt as
 * test/fixtures/paperModel.ts does, on the first instances of the bundled sample. Prints the sum of
 * the request bodies the server received, the size of calls.jsonl as written (a call the cache
 * answered refers to the first record of the same call), and the size the same calls take with
 * every reference filled in (each call's request and answer stored again: the format before
 * references), each as a ratio to the bytes sent.
 *
 *   npm run bench -- calls            (BENCH_LIMIT=9 instances by default; needs the authors' checkout, as the e2e tests)
 *
 * Data: the bundled sample; answers: the deterministic fixture, not a model.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { Calls } from "@cupid-lab/results"
import { NodeFileSystem } from "@effect/platform-node"
import { spawn, spawnSync } from "node:child_process"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type ChatBody, paperModel } from "../test/fixtures/paperAnswers.js"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(root, "packages", "experiments", "dist", "cli.mjs")
const limit = Number(process.env["BENCH_LIMIT"] ?? 9)
const kb = (n: number) => `${(n / 1024).toFixed(1)} KB`

// The authors' checkout the fixture and the config's prompts read (the tests' ReferenceCheckout
// loads vitest, so a bench names it: CUPID_REFERENCE_DIR, else ../shared/reference/kixlab-CUPID).
const referenceDir =
  process.env["CUPID_REFERENCE_DIR"] ?? path.resolve(root, "..", "shared", "reference", "kixlab-CUPID")
if (!fs.existsSync(path.join(referenceDir, "prompts"))) {
  console.log(`skipped: no checkout of the CUPID authors' repository at ${referenceDir} (set CUPID_REFERENCE_DIR)`)
  process.exit(0)
}
const { answer } = paperModel(referenceDir)
spawnSync(process.execPath, [path.join(root, "tools", "build-cli.mjs"), "--quiet", "--if-stale"], { stdio: "inherit" })

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-calls-bench-"))
const config = path.join(dir, "paper-ablations.yaml")
fs.writeFileSync(
  config,
  `${fs.readFileSync(path.join(root, "configs", "paper-ablations.yaml"), "utf8")}\ncacheDir: ${JSON.stringify(path.join(dir, "cache"))}\n`
)
const out = path.join(dir, "run")

const env = (baseURL: string): Record<string, string> => {
  const clean = Object.fromEntries(
    Object.entries(process.env).filter(
      (e): e is [string, string] => e[1] !== undefined && !/^(OPENAI_|CUPID_|CO_API_KEY)/.test(e[0])
    )
  )
  return {
    ...clean,
    NO_COLOR: "1",
    OPENAI_API_KEY: "sk-bench",
    CUPID_MODEL: "test-subject",
    CUPID_BASE_URL: baseURL,
    CUPID_EVAL_MODEL: "test-evaluator",
    CUPID_EVAL_BASE_URL: baseURL,
    CUPID_MATCHER_MODEL: "test-matcher",
    CUPID_MATCHER_BASE_URL: baseURL,
    CUPID_REFERENCE_DIR: referenceDir
  }
}

/** The CLI in a child process (asynchronously: the server answers from this one). */
const sweep = (baseURL: string) =>
  Effect.async<void, Error>((resume) => {
    const child = spawn(process.execPath, [cli, "sweep", "--config", config, "--limit", String(limit), "--out", out], {
      cwd: root,
      env: env(baseURL),
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString("utf8")))
    child.on("exit", (code) =>
      resume(code === 0 ? Effect.void : Effect.fail(new Error(`sweep failed (${code}): ${stderr.slice(-2000)}`)))
    )
  })

const program = Effect.gen(function* () {
  const server = yield* OpenAiServer.make({ chat: (body) => answer(body as ChatBody).text })
  yield* sweep(server.baseURL)
  const sent = server.requests.reduce((n, r) => n + Buffer.byteLength(r.rawBody, "utf8"), 0)
  const file = path.join(out, Calls.fileName)
  const written = fs.statSync(file).size
  // Every reference filled in, each line encoded as before (no key, no reference).
  const instances = [
    ...new Set(
      fs
        .readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => (JSON.parse(l) as { instance: string }).instance)
    )
  ]
  let expanded = 0,
    calls = 0,
    references = 0
  for (const instance of instances) {
    const { byCell } = yield* Calls.ofInstance(file, instance)
    for (const { line } of byCell.values()) {
      calls += line.calls.length
      references += line.calls.filter((c) => c.sameAs !== undefined).length
      const old = { ...line, calls: line.calls.map(({ key: _k, sameAs: _s, ...rest }) => rest) }
      expanded += Buffer.byteLength(`${JSON.stringify(old)}\n`, "utf8")
    }
  }
  console.log(
    `paper-ablations.yaml, ${limit} sample instances x 5 cells: ${calls} calls, ${server.requests.length} HTTP requests, ${references} calls refer to an earlier record`
  )
  console.log(`bytes sent (request bodies the server received): ${kb(sent)}`)
  console.log(
    `calls.jsonl before (every call's request and answer stored): ${kb(expanded)}, ${(expanded / sent).toFixed(2)}x the bytes sent`
  )
  console.log(
    `calls.jsonl after (a repeated call refers to its first record): ${kb(written)}, ${(written / sent).toFixed(2)}x the bytes sent (target: at most 1.1x)`
  )
})

await Effect.runPromise(Effect.scoped(program).pipe(Effect.provide(NodeFileSystem.layer)))
fs.rmSync(dir, { recursive: true, force: true })
