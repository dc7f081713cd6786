/**
 * The benchmark sources `longmemeval:<file>`, `locomo:<file>` and `prefeval:<dir>[,turns=<n>][,topics=<a>+<b>]`:
 * which files they read, their fingerprint, and their rows decoded into instances (decoded.ts's
 * policy then applies). `<file>` is a path or an `hf:<owner>/<name>/<path>` file, fetched through
 * the Hugging Face cache like any `hf:` source.
 *
 * @example
 * planBenchmark("locomo:data/locomo10.json", hfFile) // Effect of a plan, or undefined for other sources
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import type { FileSystem } from "@effect/platform"
import { Effect, Either, Stream } from "effect"
import { Errors } from "@cupid-lab/core"
import { directoryEntries, fileSha256, jsonArrayRows, type RawRow } from "../readers.js"
import type { DecodedRow, Problem } from "../rowDecoder.js"
import * as LongMemEval from "./longMemEval.js"
import * as Locomo from "./locomo.js"
import * as PrefEval from "./prefEval.js"

export const benchmarks = ["longmemeval", "locomo", "prefeval"] as const
export type Benchmark = (typeof benchmarks)[number]

export const benchmarkTypes: Readonly<Record<Benchmark, ReadonlyArray<string>>> = {
  longmemeval: LongMemEval.types,
  locomo: Locomo.types,
  prefeval: PrefEval.types
}

export interface Plan {
  readonly benchmark: Benchmark
  /** The file or directory read. */
  readonly resolved: string
  readonly fingerprint: string
  readonly rows: () => Stream.Stream<DecodedRow, Errors.DatasetError>
}

/** A cached `hf:` file: its local path and SHA-256. */
export type HfFile = (
  source: string
) => Effect.Effect<{ readonly path: string; readonly sha256: string }, Errors.DatasetError, FileSystem.FileSystem>

const usage: Readonly<Record<Benchmark, string>> = {
  longmemeval:
    "longmemeval:<file> (longmemeval_s.json, longmemeval_m.json, longmemeval_oracle.json or their _cleaned versions, or hf:<owner>/<name>/<file>)",
  locomo: "locomo:<file> (locomo10.json, or hf:<owner>/<name>/<file>)",
  prefeval:
    "prefeval:<dir>[,turns=<n>][,topics=<topic>[+<topic>...]] (PrefEval's benchmark_dataset folder, or the repository holding it; topics by file name, e.g. travel_restaurant)"
}

const asError =
  (source: string) =>
  (e: unknown): Errors.DatasetError =>
    e instanceof Errors.DatasetError
      ? e
      : new Errors.DatasetError({ source, reason: `cannot read (${e instanceof Error ? e.message : String(e)})` })

const attempt = <A>(source: string, f: () => Promise<A>) => Effect.tryPromise({ try: f, catch: asError(source) })

const isKind = (kind: "file" | "directory", target: string) =>
  fs.stat(target).then(
    (s) => (kind === "file" ? s.isFile() : s.isDirectory()),
    (e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? false : Promise.reject(e))
  )

const elements = (file: string): Stream.Stream<RawRow, Errors.DatasetError> =>
  Stream.fromAsyncIterable(jsonArrayRows(file), asError(file)).pipe(Stream.flattenIterables)

const decoded = (
  r: RawRow,
  key: (value: unknown) => string | undefined,
  decode: (value: unknown) => DecodedRow["result"]
): DecodedRow => {
  if ("malformed" in r) return { row: r.row, result: Either.left({ reason: r.malformed }) }
  const k = key(r.value)
  return { row: r.row, ...(k === undefined ? {} : { key: k }), result: decode(r.value) }
}

const oneInstance = (value: unknown): DecodedRow["result"] =>
  Either.mapBoth(LongMemEval.questionInstance(value), { onLeft: (p: Problem) => p, onRight: (i) => [Either.right(i)] })

/** A `longmemeval:` or `locomo:` file, local or on the hub. */
const filePlan = Effect.fn("Dataset.benchmarkFile")(function* (
  benchmark: "longmemeval" | "locomo",
  source: string,
  rest: string,
  hfFile: HfFile
) {
  let file: string
  let fingerprint: string | undefined
  if (rest.startsWith("hf:")) {
    if (rest.split("/").length < 3) {
      return yield* new Errors.DatasetError({
        source,
        reason: `name the file in the repository: expected ${usage[benchmark]}`
      })
    }
    const cached = yield* hfFile(rest)
    file = cached.path
    fingerprint = cached.sha256
  } else {
    file = path.resolve(rest)
    if (!(yield* attempt(file, () => isKind("file", file)))) {
      return yield* new Errors.DatasetError({ source: file, reason: `no such file (expected ${usage[benchmark]})` })
    }
  }
  const [key, decode] =
    benchmark === "longmemeval"
      ? ([LongMemEval.keyOf, oneInstance] as const)
      : ([Locomo.keyOf, Locomo.conversationInstances] as const)
  const plan: Plan = {
    benchmark,
    resolved: file,
    fingerprint: fingerprint ?? (yield* attempt(file, () => fileSha256(file))),
    rows: () => Stream.map(elements(file), (r) => decoded(r, key, decode))
  }
  return plan
})

/** PrefEval's data folder: `dir` itself or `dir/benchmark_dataset`. */
const prefEvalRoot = async (dir: string): Promise<string | undefined> => {
  for (const candidate of [dir, path.join(dir, "benchmark_dataset")]) {
    if (await isKind("file", path.join(candidate, PrefEval.distractorFile))) return candidate
  }
  return undefined
}

const prefEvalPlan = Effect.fn("Dataset.prefEval")(function* (source: string, rest: string) {
  const [folderPart, ...options] = rest.split(",")
  let turns: number | undefined
  let topics: ReadonlyArray<string> | undefined
  for (const option of options) {
    const m = /^(turns|topics)=(.+)$/.exec(option.trim())
    if (m === null || (m[1] === "turns" && !/^\d+$/.test(m[2]!)))
      return yield* new Errors.DatasetError({
        source,
        reason: `unknown option "${option}": expected ${usage.prefeval}`
      })
    if (m[1] === "turns") turns = Number(m[2])
    else topics = m[2]!.split("+").map((t) => t.trim())
  }
  const dir = path.resolve(folderPart!)
  if (rest === "" || folderPart === "")
    return yield* new Errors.DatasetError({ source, reason: `expected ${usage.prefeval}` })
  const root = yield* attempt(dir, () => prefEvalRoot(dir))
  if (root === undefined) {
    return yield* new Errors.DatasetError({
      source: dir,
      reason: `not a PrefEval data folder: expected ${PrefEval.distractorFile} in it or in its benchmark_dataset folder (${usage.prefeval})`
    })
  }
  const distractorPath = path.join(root, PrefEval.distractorFile)
  const distractorRows = yield* Stream.runCollect(elements(distractorPath))
  const values: Array<unknown> = []
  for (const r of distractorRows) {
    if ("malformed" in r)
      return yield* new Errors.DatasetError({ source: distractorPath, row: r.row, reason: r.malformed })
    values.push(r.value)
  }
  const others = PrefEval.distractors(values, turns)
  if (Either.isLeft(others)) {
    const { row, ...problem } = others.left
    return yield* new Errors.DatasetError({ source: distractorPath, row, ...problem })
  }
  const parts: Array<{ readonly form: PrefEval.Form; readonly rel: string; readonly topic: string }> = []
  for (const form of PrefEval.forms) {
    const folder = path.join(root, ...form.folder.split("/"))
    if (!(yield* attempt(folder, () => isKind("directory", folder)))) continue
    for (const name of yield* attempt(folder, () => directoryEntries(folder))) {
      parts.push({ form: form.type, rel: `${form.folder}/${name}`, topic: name.replace(/\.json$/i, "") })
    }
  }
  if (parts.length === 0) {
    return yield* new Errors.DatasetError({
      source: root,
      reason: `no topic files: expected .json files in ${PrefEval.forms.map((f) => `${f.folder}/`).join(", ")}`
    })
  }
  const known = [...new Set(parts.map((p) => p.topic))].sort()
  const unknown = (topics ?? []).filter((t) => !known.includes(t))
  if (unknown.length > 0)
    return yield* new Errors.DatasetError({
      source,
      reason: `no topic ${unknown.map((t) => `"${t}"`).join(", ")} in ${root}: expected topics=<name>[+<name>...] of ${known.join(", ")}`
    })
  const kept = topics === undefined ? parts : parts.filter((p) => topics.includes(p.topic))
  // Without topics= the fingerprint is the one of every topic; with it, the topics named and read.
  const hash = createHash("sha256").update(
    `prefeval turns=${turns ?? "all"}${topics === undefined ? "" : ` topics=${[...topics].sort().join("+")}`}\n`
  )
  for (const rel of [PrefEval.distractorFile, ...kept.map((p) => p.rel)]) {
    const bytes = yield* attempt(root, () => fs.readFile(path.join(root, ...rel.split("/"))))
    hash.update(`${Buffer.byteLength(rel)}:${rel}:${bytes.byteLength}:`).update(bytes)
  }
  // Rows are numbered within their file, so a row is named `<path>:<n>`.
  const rows = () =>
    Stream.flatMap(Stream.fromIterable(kept), (part) =>
      Stream.map(elements(path.join(root, ...part.rel.split("/"))), (r): DecodedRow => {
        const entry = decoded(
          r,
          () => undefined,
          (value) =>
            Either.mapBoth(PrefEval.entryInstance(part.form, part.topic, Number(r.row) - 1, value, others.right), {
              onLeft: (p: Problem) => p,
              onRight: (i) => [Either.right(i)]
            })
        )
        return { ...entry, row: `${part.rel}:${r.row}` }
      })
    )
  const plan: Plan = { benchmark: "prefeval", resolved: root, fingerprint: hash.digest("hex"), rows }
  return plan
})

/** The plan of a benchmark source, or undefined when the source names no benchmark. */
export const planBenchmark = (
  source: string,
  hfFile: HfFile
): Effect.Effect<Plan | undefined, Errors.DatasetError, FileSystem.FileSystem> => {
  const benchmark = benchmarks.find((b) => source.startsWith(`${b}:`))
  if (benchmark === undefined) return Effect.succeed(undefined)
  const rest = source.slice(benchmark.length + 1).trim()
  if (rest === "") return Effect.fail(new Errors.DatasetError({ source, reason: `expected ${usage[benchmark]}` }))
  return benchmark === "prefeval" ? prefEvalPlan(source, rest) : filePlan(benchmark, source, rest, hfFile)
}
