/**
 * What opening a run in the viewer costs against a plain parse of its results.jsonl: the first
 * `GET /api/run` of a freshly started `cupid-lab view` (the compiled CLI; it reads summary.json and
 * every result line, decoded, into the tables, filters and instance pages), against a plain Node
 * script that reads the file and `JSON.parse`s every line, keeping the rows. Side by side,
 * alternating, BENCH_ROUNDS pairs (default 3); prints the medians of wall time and CPU (the
 * viewer's: its process's CPU during the request, /proc; the script's: the whole process, from
 * /usr/bin/time) and of peak RSS (the viewer's process at its highest, VmHWM), and the medians of
 * the pairs' ratios.
 *
 *   npm run bench -- open             (a 20-cell retrieval sweep over BENCH_PERSONAS=400, 1,200 generated instances)
 *   BENCH_RUN=runs/x/3f2a... npm run bench -- open     (an existing run directory instead)
 *   BENCH_CLI=/elsewhere/packages/experiments/dist/cli.mjs npm run bench -- open   (another build, e.g. an earlier commit's)
 *
 * Data: generated (`data generate`, seed 11), not CUPID.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("../../../", import.meta.url))
// BENCH_CLI: another build of the CLI to measure (e.g. an earlier commit's, built with tools/build-cli.mjs).
const cli = path.resolve(process.env["BENCH_CLI"] ?? path.join(root, "packages", "experiments", "dist", "cli.mjs"))
const personas = Number(process.env["BENCH_PERSONAS"] ?? 400)
const rounds = Number(process.env["BENCH_ROUNDS"] ?? 3)
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-view-bench-"))

const run = (args: ReadonlyArray<string>) => {
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8" })
  if (r.status !== 0) throw new Error(`node ${args.join(" ")} failed: ${r.stderr.slice(-2000)}`)
}
spawnSync(process.execPath, [path.join(root, "tools", "build-cli.mjs"), "--quiet", "--if-stale"], { stdio: "inherit" })

/** The run directory: BENCH_RUN, or a retrieval sweep over generated data made once. */
const runDir = (() => {
  const given = process.env["BENCH_RUN"]
  if (given !== undefined) return path.resolve(given)
  const data = path.join(tmp, "data.jsonl")
  run([cli, "data", "generate", "--out", data, "--personas", String(personas), "--seed", "11"])
  const config = path.join(tmp, "open.yaml")
  fs.writeFileSync(
    config,
    `name: open
data: { source: ${JSON.stringify(data)} }
pipeline:
  retriever: { use: bm25 }
scorers: [{ use: retrieval, ks: [2, 4] }]
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
  const out = path.join(tmp, "runs", "open")
  run([cli, "sweep", "--config", config, "--out", out])
  return out
})()
const results = path.join(runDir, "results.jsonl")

const plainScript = path.join(tmp, "plain.mjs")
fs.writeFileSync(
  plainScript,
  `import { readFileSync } from "node:fs"
const rows = readFileSync(process.argv[2], "utf8").split("\\n").filter((l) => l.length > 0).map((l) => JSON.parse(l))
console.log(rows.length)
`
)

interface Figures {
  readonly wall: number
  readonly cpu: number
  readonly rssMb: number
}

const plain = (): Figures => {
  const r = spawnSync("/usr/bin/time", ["-f", "bench %e %U %S %M", process.execPath, plainScript, results], {
    encoding: "utf8"
  })
  const m = /bench ([\d.]+) ([\d.]+) ([\d.]+) (\d+)\s*$/.exec(r.stderr)
  if (r.status !== 0 || m === null) throw new Error(`the plain parse failed: ${r.stderr.slice(-500)}`)
  return { wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]), rssMb: Number(m[4]) / 1024 }
}

/** CPU seconds (user + system) of a process so far. */
const ticks = (pid: number) => {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.split(" ")
  return (Number(fields[11]) + Number(fields[12])) / 100
}
const peakMb = (pid: number) => Number(/VmHWM:\s+(\d+)/.exec(fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024

/** A fresh viewer over the run's parent directory, and its first /api/run. */
const viewer = async (): Promise<Figures> => {
  const child = spawn(process.execPath, [cli, "view", "--root", path.dirname(runDir), "--port", "0"], {
    cwd: root,
    stdio: ["ignore", "pipe", "ignore"]
  })
  try {
    const url = await new Promise<string>((resolve, reject) => {
      let out = ""
      child.stdout.on("data", (d: Buffer) => {
        out += d.toString("utf8")
        const m = /viewer: (http\S+)/.exec(out)
        if (m !== null) resolve(m[1]!)
      })
      child.on("exit", (code) => reject(new Error(`the viewer exited (${code}) before serving`)))
    })
    const cpu0 = ticks(child.pid!)
    const t0 = performance.now()
    const response = await fetch(`${url}api/run?run=${encodeURIComponent(path.basename(runDir))}`)
    await response.text()
    const wall = (performance.now() - t0) / 1000
    if (response.status !== 200) throw new Error(`/api/run answered ${response.status}`)
    return { wall, cpu: ticks(child.pid!) - cpu0, rssMb: peakMb(child.pid!) }
  } finally {
    child.kill("SIGKILL")
  }
}

const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!
const plains: Array<Figures> = [],
  viewers: Array<Figures> = []
for (let r = 0; r < rounds; r++) {
  plains.push(plain())
  viewers.push(await viewer())
}
const lines = fs.readFileSync(results, "utf8").split("\n").length - 1
console.log(`run: ${lines} result lines, ${(fs.statSync(results).size / 2 ** 20).toFixed(1)} MB (${runDir})`)
const show = (label: string, xs: ReadonlyArray<Figures>) =>
  console.log(
    `${label.padEnd(44)} wall ${median(xs.map((x) => x.wall)).toFixed(2)} s, CPU ${median(xs.map((x) => x.cpu)).toFixed(2)} s, peak RSS ${median(xs.map((x) => x.rssMb)).toFixed(0)} MB  [CPU ${xs.map((x) => x.cpu.toFixed(2)).join(", ")}]`
  )
show("plain parse (read + JSON.parse every line):", plains)
show("viewer, first /api/run:", viewers)
// The median of the pairs' ratios: each pair ran side by side, under the same load.
const ratio = (f: (x: Figures) => number) => median(viewers.map((v, i) => f(v) / f(plains[i]!))).toFixed(2)
console.log(
  `ratio: wall ${ratio((x) => x.wall)}x, CPU ${ratio((x) => x.cpu)}x the plain parse (target: at most 2x); peak memory ${ratio((x) => x.rssMb)}x (target: at most 1.5x)`
)
fs.rmSync(tmp, { recursive: true, force: true })
