/**
 * Whether shards pay off: the retrieval grid (retrieval-grid.ts) over 1,200 generated instances,
 * run as one process, against two shards run side by side (this machine's two cores standing in
 * for two machines; they share one fresh model cache, as shards on a shared disk do) and then
 * merged. Rounds alternate which goes first; each round starts from fresh caches. Prints the
 * medians of wall time: the one process, the slower shard, the merge, and the ratios
 * (shards + merge) / one process (target: at most 0.6) and merge / one process (target: at most
 * 0.1); and checks that the merged run's results, summary and reports are byte-identical to the
 * one process's.
 *
 *   npm run bench -- shards           (BENCH_PERSONAS=400 gives 1,200 instances; BENCH_ROUNDS=3)
 *
 * Data: generated (`data generate`, seed 11), not CUPID. Two shards on one 2-core machine contend
 * for memory and the collector's threads, which two machines would not.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { cli, config, generate, median, started, time, type Timed } from "./retrieval-grid.js"

const personas = Number(process.env["BENCH_PERSONAS"] ?? 400)
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 3)
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-shards-"))
const data = path.join(dir, "data.jsonl")
generate(data, personas)

const compared = ["results.jsonl", "summary.json", "report.md", "report.tex", "results.csv", "results.parquet"]
const one: Array<Timed> = [],
  shards: Array<Timed> = [],
  merges: Array<Timed> = []
for (let r = 0; r < rounds; r++) {
  const at = path.join(dir, `round-${r}`)
  const single = () => {
    const file = path.join(at, "one.yaml")
    config(file, data, path.join(at, "cache-one"))
    one.push(time(process.execPath, [cli, "sweep", "--config", file, "--out", path.join(at, "one")]))
  }
  const sharded = async () => {
    const file = path.join(at, "shards.yaml")
    config(file, data, path.join(at, "cache-shards"))
    const shard = (i: number) =>
      started(process.execPath, [
        cli,
        "sweep",
        "--config",
        file,
        "--shard",
        `${i}/2`,
        "--out",
        path.join(at, `shard-${i}`)
      ])
    const both = await Promise.all([shard(1), shard(2)])
    shards.push(both[0]!.wall >= both[1]!.wall ? both[0]! : both[1]!)
    merges.push(
      time(process.execPath, [
        cli,
        "merge",
        "--out",
        path.join(at, "merged"),
        path.join(at, "shard-1"),
        path.join(at, "shard-2")
      ])
    )
  }
  fs.mkdirSync(at, { recursive: true })
  if (r % 2 === 0) {
    single()
    await sharded()
  } else {
    await sharded()
    single()
  }
  const differ = compared.filter(
    (f) => !fs.readFileSync(path.join(at, "one", f)).equals(fs.readFileSync(path.join(at, "merged", f)))
  )
  if (differ.length > 0)
    throw new Error(`round ${r}: the merged run differs from the one process in ${differ.join(", ")}`)
  fs.rmSync(at, { recursive: true, force: true })
}
const wall = (xs: ReadonlyArray<Timed>) => median(xs.map((x) => x.wall))
const list = (xs: ReadonlyArray<Timed>) => xs.map((x) => x.wall.toFixed(2)).join(", ")
const total = one.map((o, i) => (shards[i]!.wall + merges[i]!.wall) / o.wall)
const merge = one.map((o, i) => merges[i]!.wall / o.wall)
console.log(
  `grid: 22 cells x ${personas * 3} instances (generated data, seed 11); outputs byte-identical: ${compared.join(", ")}`
)
console.log(`one process: median ${wall(one).toFixed(2)} s wall  [${list(one)}]`)
console.log(`slower of 2 shards side by side: median ${wall(shards).toFixed(2)} s wall  [${list(shards)}]`)
console.log(`merge: median ${wall(merges).toFixed(2)} s wall  [${list(merges)}]`)
console.log(
  `(shards + merge) / one process: ${median(total).toFixed(2)} (per round ${total.map((x) => x.toFixed(2)).join(", ")}; target: at most 0.6)`
)
console.log(
  `merge / one process: ${median(merge).toFixed(2)} (per round ${merge.map((x) => x.toFixed(2)).join(", ")}; target: at most 0.1)`
)
fs.rmSync(dir, { recursive: true, force: true })
