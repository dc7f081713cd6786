/**
 * What a retrieval-only sweep costs against the plain floor of reading its data: a 24-cell sweep
 * (BM25 and recency, four cuts and both representations, the full history, the oracle, TF-IDF +
 * SVD and the context-factor matcher) over 1,200 generated instances, through the compiled CLI a
 * user runs (summary and every report included, the TF-IDF fit paid each round in a fresh model
 * cache), against ../shared/perf/floor.mjs (read, JSON.parse every row, regex-tokenize every
 * distinct text: no project code). Both are whole processes, alternated, CPU time (user + system)
 * from /usr/bin/time; prints the medians, each round's ratio and the median ratio.
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

// The floor: ../shared/perf/floor.mjs, a plain script (read, JSON.parse every row, regex-tokenize
// every distinct text once; no project code, no Effect, no validation). Its README says what it does.
const floor = [
  path.join(root, "..", "shared", "perf", "floor.mjs"),
  path.join(process.env["CUPID_SHARED_DIR"] ?? "", "perf", "floor.mjs")
].find((f) => fs.existsSync(f))
if (floor === undefined) {
  console.log(
    "skipped: the plain floor (../shared/perf/floor.mjs beside the checkout, or $CUPID_SHARED_DIR/perf/floor.mjs) is not here"
  )
  process.exit(0)
}

const config = path.join(dir, "floor.yaml")
const configText = `name: floor
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
  - { name: tfidf top 2, retriever: { use: embedding, select: { top: 2 } } }
  - { name: context-factor offline, retriever: { use: context-factor, strategy: offline } }
concurrency: 2
`

const floors: Array<number> = [],
  sweeps: Array<number> = []
for (let r = 0; r < rounds; r++) {
  floors.push(run(process.execPath, [floor, data]))
  const out = path.join(dir, `run-${r}`)
  // A cache of its own each round: the TF-IDF + SVD fit is paid as on a first run.
  fs.writeFileSync(config, `${configText}cacheDir: ${JSON.stringify(path.join(dir, `cache-${r}`))}\n`)
  sweeps.push(run(process.execPath, [cli, "sweep", "--config", config, "--out", out]))
  if (r === 0) {
    const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8")) as {
      cells: Array<unknown>
      dataset: { instances: number }
    }
    const info = JSON.parse(fs.readFileSync(path.join(out, "run.json"), "utf8")) as { phasesMs: Record<string, number> }
    console.log(
      `sweep: ${summary.cells.length} cells x ${summary.dataset.instances} instances (generated data, ${personas} personas, seed 11); phases (ms): ${JSON.stringify(info.phasesMs)}`
    )
  }
}
const ratios = sweeps.map((x, i) => x / floors[i]!)
console.log(
  `floor (../shared/perf/floor.mjs: read, parse, tokenize): median ${median(floors).toFixed(2)} s CPU  [${floors.map((x) => x.toFixed(2)).join(", ")}]`
)
console.log(
  `sweep (compiled CLI, reports included): median ${median(sweeps).toFixed(2)} s CPU  [${sweeps.map((x) => x.toFixed(2)).join(", ")}]`
)
console.log(
  `ratio: ${(median(sweeps) / median(floors)).toFixed(1)}x the floor's CPU (pairwise ${ratios.map((x) => x.toFixed(1)).join(", ")}; target: at most 8x)`
)
fs.rmSync(dir, { recursive: true, force: true })
