/**
 * What the retrieval benches share: generated data, the retrieval grid they sweep (BM25 and
 * recency, four cuts and both representations, the full history, the oracle, TF-IDF + SVD and the
 * context-factor matcher: 22 cells) and a timer of whole processes (/usr/bin/time: wall and CPU,
 * user + system).
 *
 * Data: generated (`data generate`, seed 11), not CUPID.
 */
import { spawn, spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

export const root = fileURLToPath(new URL("../../../", import.meta.url))
export const cli = path.join(root, "packages", "experiments", "dist", "cli.mjs")

export interface Timed {
  readonly wall: number
  readonly cpu: number
}

const format = ["-f", "timed %e %U %S"]
const parse = (command: string, args: ReadonlyArray<string>, status: number | null, stderr: string): Timed => {
  if (status !== 0) throw new Error(`${command} ${args.join(" ")} failed: ${stderr.slice(-2000)}`)
  const m = /timed ([\d.]+) ([\d.]+) ([\d.]+)\s*$/.exec(stderr)
  if (m === null) throw new Error(`no figures from /usr/bin/time: ${stderr.slice(-500)}`)
  return { wall: Number(m[1]), cpu: Number(m[2]) + Number(m[3]) }
}

/** One whole process, waited for. */
export const time = (command: string, args: ReadonlyArray<string>): Timed => {
  const r = spawnSync("/usr/bin/time", [...format, command, ...args], { cwd: root, encoding: "utf8" })
  return parse(command, args, r.status, r.stderr)
}

/** One whole process, started now: its figures when it ends (for processes that run side by side). */
export const started = (command: string, args: ReadonlyArray<string>): Promise<Timed> =>
  new Promise((resolve, reject) => {
    const child = spawn("/usr/bin/time", [...format, command, ...args], {
      cwd: root,
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (d: Buffer) => (stderr += d.toString()))
    child.on("error", reject)
    child.on("close", (status) => {
      try {
        resolve(parse(command, args, status, stderr))
      } catch (e) {
        reject(e)
      }
    })
  })

export const median = (xs: ReadonlyArray<number>) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!

/** `personas` generated personas (three instances each) into `file`. */
export const generate = (file: string, personas: number) =>
  time(process.execPath, [cli, "data", "generate", "--out", file, "--personas", String(personas), "--seed", "11"])

/** The grid's config over `data`, with a model cache of its own (`cacheDir`: the TF-IDF + SVD fit is paid on first use). */
export const config = (file: string, data: string, cacheDir: string) =>
  fs.writeFileSync(
    file,
    `name: retrieval-grid
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
cacheDir: ${JSON.stringify(cacheDir)}
`
  )
