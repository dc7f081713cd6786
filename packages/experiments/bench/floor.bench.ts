/**
 * What a retrieval-only sweep costs against the floor of reading its data: a 20-cell sweep (BM25
 * and recency, four cuts and both representations, plus the full history and the oracle) over
 * 1,200 generated instances, through the compiled CLI a user runs (summary and every report
 * included), against a plain script that reads, parses and validates the same file with core's
 * reader and tokenizes every session as BM25 does. Both are whole processes, alternated, CPU time
 * (user + system) from /usr/bin/time; prints the medians and their ratio.
 *
 *   npm run bench -- floor            (BENCH_PERSONAS=400 gives 1,200 instances; BENCH_ROUNDS=5)
 *
 * Data: generated (`data generate`, seed 11), not CUPID.
 */
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(root, "packages", "experiments", "dist", "cli.mjs")
const personas = Number(process.env["BENCH_PERSONAS"] ?? 400)
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 5)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-floor-"))

const run = (command: string, args: ReadonlyArray<string>): number => {
  const r = spawnSync("/usr/bin/time", ["-f", "cpu %U %S", command, ...args], { cwd: root, encoding: "utf8" })
  if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${r.stderr.slice(-2000)}`)
  const m = /cpu ([\d.]+) ([\d.]+)\s*$/.exec(r.stderr)
  if (m === null) throw new Error(`no CPU figure from /usr/bin/time: ${r.stderr.slice(-500)}`)
  return Number(m[1]) + Number(m[2])
}
const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

// The data, once.
const data = path.join(dir, "data.jsonl")
run(process.execPath, [cli, "data", "generate", "--out", data, "--personas", String(personas), "--seed", "11"])

// The floor: core's reader and BM25's tokenizer, bundled into one plain script.
const floorSource = path.join(dir, "floor.ts")
fs.writeFileSync(
  floorSource,
  `
import { Dataset, Memo } from "@cupid-lab/core"
import * as Text from "@cupid-lab/retrievers/Text"
import { Effect, Stream } from "effect"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
let tokens = 0, instances = 0
// One analyzer for the whole file, as BM25 has one per sweep (stems and stopwords remembered).
const text = Text.analyzer(Memo.unsafeMake())
await Effect.runPromise(Effect.gen(function*() {
  const opened = yield* Dataset.open(process.argv[2], {})
  yield* Stream.runForEach(opened.instances, (i) => Effect.sync(() => {
    instances++
    for (const s of i.query.sessions) for (const m of s.dialogue) tokens += text.terms(m.content).length
  }))
}).pipe(Effect.provide(NodeFileSystem.layer)))
console.log(instances, tokens)
`
)
// (bundled inside the checkout, so that the packages left out of the bundle resolve from node_modules)
const floorDir = path.join(root, "node_modules", ".cache", "cupid-floor-bench")
fs.mkdirSync(floorDir, { recursive: true })
const floor = path.join(floorDir, "floor.mjs")
const esbuild = await import("esbuild")
await esbuild.build({
  entryPoints: [floorSource],
  outfile: floor,
  bundle: true,
  format: "esm",
  platform: "node",
  target: "node20",
  absWorkingDir: root,
  nodePaths: [path.join(root, "node_modules")],
  banner: { js: 'import { createRequire as __r } from "node:module"; const require = __r(import.meta.url);' },
  // The workspace packages are bundled from source; the libraries load from node_modules.
  external: Object.keys(
    (JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8")) as { dependencies: Record<string, string> })
      .dependencies
  ).flatMap((d) => [d, `${d}/*`]),
  logLevel: "error"
})

const config = path.join(dir, "floor.yaml")
fs.writeFileSync(
  config,
  `name: floor
data: { source: ${JSON.stringify(data)} }
pipeline:
  retriever: { use: bm25 }
scorers: [{ use: retrieval }]
sweep:
  retriever:
    - { use: bm25, representation: [dialogue, first-user-message] }
    - { use: recency }
  retriever.select:
    - { top: 1 }
    - { top: 2 }
    - { top: 3 }
    - { top: 4 }
cells:
  - { name: all, retriever: all }
  - { name: oracle, retriever: oracle }
  - { name: bm25 top 8, retriever: { use: bm25, select: { top: 8 } } }
  - { name: recency top 8, retriever: { use: recency, select: { top: 8 } } }
  - { name: bm25 first message top 8, retriever: { use: bm25, representation: first-user-message, select: { top: 8 } } }
  - { name: bm25 threshold, retriever: { use: bm25, select: { threshold: 0.6 } } }
  - { name: bm25 recent 2, retriever: { use: bm25, select: { recent: 2 } } }
  - { name: bm25 change, retriever: { use: bm25, select: { change: detect } } }
concurrency: 2
`
)

const floors: Array<number> = [],
  sweeps: Array<number> = []
for (let r = 0; r < rounds; r++) {
  floors.push(run(process.execPath, [floor, data]))
  const out = path.join(dir, `run-${r}`)
  sweeps.push(run(process.execPath, [cli, "sweep", "--config", config, "--out", out]))
  if (r === 0) {
    const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8")) as {
      cells: Array<unknown>
      dataset: { instances: number }
    }
    console.log(
      `sweep: ${summary.cells.length} cells x ${summary.dataset.instances} instances (generated data, ${personas} personas, seed 11)`
    )
  }
}
console.log(
  `floor (read, parse, validate, tokenize): median ${median(floors).toFixed(2)} s CPU  [${floors.map((x) => x.toFixed(2)).join(", ")}]`
)
console.log(
  `sweep (compiled CLI, reports included): median ${median(sweeps).toFixed(2)} s CPU  [${sweeps.map((x) => x.toFixed(2)).join(", ")}]`
)
console.log(`ratio: ${(median(sweeps) / median(floors)).toFixed(1)}x the floor's CPU (target: at most 8x)`)
fs.rmSync(dir, { recursive: true, force: true })
