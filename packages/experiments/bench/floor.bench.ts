/**
 * What a retrieval-only sweep costs against the plain floor of reading its data: the 22-cell
 * retrieval grid (retrieval-grid.ts) over 1,200 generated instances, through the compiled CLI a
 * user runs (summary and every report included, the TF-IDF fit paid each round in a fresh model
 * cache), against ../shared/perf/floor.mjs (read, JSON.parse every row, regex-tokenize every
 * distinct text: no project code). Both are whole processes, alternated, CPU time (user + system)
 * from /usr/bin/time; prints the medians, each round's ratio and the median ratio, and the share of
 * the pair loop's time spent in the retrievers.
 *
 *   npm run bench -- floor            (BENCH_PERSONAS=400 gives 1,200 instances; BENCH_ROUNDS=5)
 *
 * Data: generated (`data generate`, seed 11), not CUPID.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { cli, config, generate, median, root, time } from "./retrieval-grid.js"

const personas = Number(process.env["BENCH_PERSONAS"] ?? 400)
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 5)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-floor-"))

const data = path.join(dir, "data.jsonl")
generate(data, personas)

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

const floors: Array<number> = [],
  sweeps: Array<number> = []
for (let r = 0; r < rounds; r++) {
  floors.push(time(process.execPath, [floor, data]).cpu)
  const out = path.join(dir, `run-${r}`)
  const file = path.join(dir, "grid.yaml")
  // A cache of its own each round: the TF-IDF + SVD fit is paid as on a first run.
  config(file, data, path.join(dir, `cache-${r}`))
  sweeps.push(time(process.execPath, [cli, "sweep", "--config", file, "--out", out]).cpu)
  if (r === 0) {
    const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8")) as {
      cells: Array<unknown>
      dataset: { instances: number }
    }
    const info = JSON.parse(fs.readFileSync(path.join(out, "run.json"), "utf8")) as {
      phasesMs: Record<string, number>
      stageTimeMs: Record<string, number>
    }
    console.log(
      `sweep: ${summary.cells.length} cells x ${summary.dataset.instances} instances (generated data, ${personas} personas, seed 11); phases (ms): ${JSON.stringify(info.phasesMs)}`
    )
    const retrieve = info.stageTimeMs["retrieve"] ?? 0
    console.log(
      `retrievers: ${(retrieve / 1000).toFixed(2)} s of the pair loop's ${((info.phasesMs["pairs"] ?? 0) / 1000).toFixed(2)} s (${((100 * retrieve) / (info.phasesMs["pairs"] ?? 1)).toFixed(0)}%; target: at least half)`
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
