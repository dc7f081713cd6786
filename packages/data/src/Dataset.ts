/**
 * Loading data from every place it lives: CUPID from the bundled sample, a released-schema parquet
 * file, JSON lines, a JSON array, a directory of one-instance JSON files, the Hugging Face dataset
 * (cached once, then offline) and the synthetic generator; and three other benchmarks in their
 * published formats, `longmemeval:<file>`, `locomo:<file>` and `prefeval:<dir>` (docs/data.md).
 * Rows are decoded once, here, into {@link Domain.Instance}s; bad rows are errors naming the file,
 * the row and the field, or are skipped and listed, by policy. Instances stream: memory holds the
 * instances in flight (plus one parquet row group or one JSON array element), and the set of ids
 * seen, for duplicate detection.
 *
 * @example
 * import { Dataset } from "@cupid-lab/core"
 * import { NodeContext } from "@effect/platform-node"
 * import { Effect, Stream } from "effect"
 *
 * const program = Effect.gen(function*() {
 *   const data = yield* Dataset.open("hf:kixlab/CUPID", { types: ["changing"], onInvalid: "skip" })
 *   // or "longmemeval:data/longmemeval_s_cleaned.json", "locomo:data/locomo10.json", "prefeval:../PrefEval"
 *   yield* Stream.runForEach(data.instances, (instance) => Effect.log(instance.id))
 *   return data.skipped().length
 * })
 * // hf: files are cached through the platform's FileSystem, which the caller provides
 * Effect.runPromise(program.pipe(Effect.provide(NodeContext.layer)))
 */
import { createHash } from "node:crypto"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import type { FileSystem } from "@effect/platform"
import { Effect, Either, Stream } from "effect"
import { Domain, Errors, HttpGet } from "@cupid-lab/core"

import * as Benchmarks from "./internal/benchmarks/sources.js"
import * as HubDownload from "./internal/hubDownload.js"
import * as Hf from "./internal/huggingFace.js"
import { make } from "./internal/opened.js"
import {
  directoryEntries,
  directoryRows,
  directorySha256,
  fileSha256,
  jsonArrayRows,
  jsonlRowCount,
  jsonlRows,
  parquetRowCount,
  parquetRows,
  type RawRow,
  type RowBatches
} from "./internal/readers.js"
import { cupidRow, type DecodedRow } from "./internal/rowDecoder.js"
import * as Synthetic from "./Synthetic.js"

/** Which benchmark a source holds, and so how its rows decode and which instance types it has. */
export type Benchmark = "cupid" | Benchmarks.Benchmark

/** The instance types of each benchmark, in the order reports list them. */
export const benchmarkTypes: Readonly<Record<Benchmark, ReadonlyArray<string>>> = {
  cupid: Domain.cupidTypes,
  ...Benchmarks.benchmarkTypes
}

export interface LoadOptions {
  /** What a row that violates the schema does: fail the stream (default) or get skipped and listed. */
  readonly onInvalid?: "fail" | "skip"
  /** Where `hf:` sources are cached; default `$CUPID_CACHE_DIR`, else `<cwd>/.cache/cupid`. */
  readonly cacheDir?: string
  /** Keep only these instance types (of the source's benchmark, see {@link benchmarkTypes}); default all. */
  readonly types?: ReadonlyArray<Domain.InstanceType>
  /** The first n instances after the type filter, in file order. */
  readonly limit?: number
  /** Default https://huggingface.co. */
  readonly hfEndpoint?: string
  /**
   * How `hf:` files are downloaded: limits on the waits (unset ones from `CUPID_HTTP_*`, else
   * HttpGet's defaults) and a progress callback (else a progress line when stderr is a terminal).
   */
  readonly download?: HttpGet.Settings
}

export interface SkippedRow {
  /** 1-based row (line) number, or the file name for directory sources; `<file>:<n>` for sources of several files. */
  readonly row: string
  /** The instance's id, when it is known (CUPID: `persona_id:instance_type`, when the row has both). */
  readonly id?: string
  readonly reason: string
}

export interface Opened {
  /** The source as given. */
  readonly source: string
  /** Which benchmark the source holds: how its rows decoded, and which instance types it has ({@link benchmarkTypes}). */
  readonly benchmark: Benchmark
  /** The file or directory actually read (the cached file for `hf:`, the full spec for `synthetic:`). */
  readonly resolved: string
  /** SHA-256 hex of the data bytes; of the sorted names and contents for a directory; of the options for synthetic data. Filters are not part of it. */
  readonly fingerprint: string
  /** Re-runnable: each run reads the source again. */
  readonly instances: Stream.Stream<Domain.Instance, Errors.DatasetError>
  /** Rows skipped by the most recent run so far (skip policy). */
  readonly skipped: () => ReadonlyArray<SkippedRow>
  /**
   * How many instances a run of `instances` yields, when that is known without reading them:
   * synthetic data, and JSONL or parquet files with no `types` filter (rows counted, not decoded;
   * rows that turn out invalid make it an upper bound). `undefined` otherwise. For progress only.
   */
  readonly size?: Effect.Effect<number | undefined>
  /**
   * Reads and checks every row a run of `instances` reads (the same policy, filters and limit),
   * keeping none of them, and counts the instances it yields: the sweep runs it before the first
   * pair, so a bad row stops the sweep before any work. Generated data is valid by construction and
   * is counted without generating it. Absent for data already held in memory.
   */
  readonly validate?: Effect.Effect<number, Errors.DatasetError>
}

/** Absolute path of the bundled sample's dev split (`packages/data/data/sample.jsonl`, source `sample`), whatever the working directory. */
export const samplePath: string = fileURLToPath(new URL("../data/sample.jsonl", import.meta.url))

/** Absolute path of the bundled sample's test split (`packages/data/data/sample-test.jsonl`, source `sample-test`). */
export const sampleTestPath: string = fileURLToPath(new URL("../data/sample-test.jsonl", import.meta.url))

/** The bundled sources: `sample` (dev split: tune here) and `sample-test` (test split: report here, never tune). */
export const bundled: Readonly<Record<string, string>> = { sample: samplePath, "sample-test": sampleTestPath }

/** `$CUPID_CACHE_DIR`, else `.cache/cupid` under the working directory. */
export const defaultCacheDir = (): string =>
  path.resolve(process.env["CUPID_CACHE_DIR"] ?? path.join(".cache", "cupid"))

const sourceHelp =
  "a data source is a .parquet, .jsonl or .json file, a directory of .json files, sample, sample-test, hf:kixlab/CUPID, " +
  "hf:kixlab/CUPID-Unverified, synthetic:<key>=<value>,..., longmemeval:<file>, locomo:<file> or prefeval:<dir>"

const asDatasetError =
  (source: string) =>
  (e: unknown): Errors.DatasetError =>
    e instanceof Errors.DatasetError
      ? e
      : new Errors.DatasetError({ source, reason: `cannot read (${e instanceof Error ? e.message : String(e)})` })

const attempt = <A>(source: string, f: () => Promise<A>): Effect.Effect<A, Errors.DatasetError> =>
  Effect.tryPromise({ try: f, catch: asDatasetError(source) })

/** One file of an `hf:` source: where it is cached, its path in the repository and its SHA-256. */
interface HubPart {
  readonly file: string
  readonly inRepo: string
  readonly sha256: string
  readonly rows: () => RowBatches
}

type Plan =
  | { readonly kind: "file"; readonly file: string; readonly rows: () => RowBatches; readonly fingerprint?: string }
  | { readonly kind: "files"; readonly parts: ReadonlyArray<HubPart> }
  | { readonly kind: "directory"; readonly dir: string; readonly names: ReadonlyArray<string> }
  | { readonly kind: "synthetic"; readonly options: Synthetic.Options }

const fileReader = (file: string): Either.Either<() => RowBatches, Errors.DatasetError> => {
  const ext = path.extname(file).toLowerCase()
  if (ext === ".parquet") return Either.right(() => parquetRows(file))
  if (ext === ".jsonl" || ext === ".ndjson") return Either.right(() => jsonlRows(file))
  if (ext === ".json") return Either.right(() => jsonArrayRows(file))
  return Either.left(
    new Errors.DatasetError({
      source: file,
      reason: `unsupported file type "${ext || "(none)"}"; expected .parquet, .jsonl (or .ndjson) or .json`
    })
  )
}

const plan = (source: string, options: LoadOptions): Effect.Effect<Plan, Errors.DatasetError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    if (source === "synthetic" || source.startsWith("synthetic:")) {
      return { kind: "synthetic", options: yield* Synthetic.parseSpec(source) } as const
    }
    if (source.startsWith("hf:")) {
      const fetched = yield* cachedHf(source, options)
      const parts = yield* Effect.forEach(fetched.files, (f) =>
        Effect.map(fileReader(f.path), (rows): HubPart => ({ file: f.path, inRepo: f.file, sha256: f.sha256, rows }))
      )
      const only = parts.length === 1 ? parts[0]! : undefined
      return only !== undefined
        ? ({ kind: "file", file: only.file, rows: only.rows, fingerprint: only.sha256 } as const)
        : ({ kind: "files", parts } as const)
    }
    const target = Object.hasOwn(bundled, source) ? bundled[source]! : path.resolve(source)
    const stat = yield* attempt(target, () =>
      fs.stat(target).catch((e: NodeJS.ErrnoException) => (e.code === "ENOENT" ? undefined : Promise.reject(e)))
    )
    if (stat === undefined) {
      return yield* new Errors.DatasetError({ source: target, reason: `no such file or directory (${sourceHelp})` })
    }
    if (stat.isDirectory()) {
      const names = yield* attempt(target, () => directoryEntries(target))
      if (names.length === 0)
        return yield* new Errors.DatasetError({ source: target, reason: "no .json files in this directory" })
      return { kind: "directory", dir: target, names } as const
    }
    return { kind: "file", file: target, rows: yield* fileReader(target) } as const
  })

/**
 * Opens a data source: resolves it, downloads `hf:` files if they are not cached, and fingerprints
 * the data. Nothing is decoded until `instances` runs.
 */
export const open: (
  source: string,
  options?: LoadOptions
) => Effect.Effect<Opened, Errors.DatasetError, FileSystem.FileSystem> = Effect.fn("Dataset.open")(function* (
  source: string,
  options: LoadOptions = {}
) {
  if (options.limit !== undefined && !(Number.isInteger(options.limit) && options.limit >= 0)) {
    return yield* new Errors.DatasetError({
      source,
      field: "limit",
      reason: `expected a whole number >= 0, found ${options.limit}`
    })
  }
  const benchmark = yield* Benchmarks.planBenchmark(source, (hf) =>
    Effect.flatMap(cachedHf(hf, options), (fetched) =>
      Effect.succeed({ path: fetched.files[0]!.path, sha256: fetched.files[0]!.sha256 })
    )
  )
  const known = benchmarkTypes[benchmark?.benchmark ?? "cupid"]
  const unknownType = options.types?.find((t) => !known.includes(t))
  if (options.types !== undefined && (options.types.length === 0 || unknownType !== undefined)) {
    const reason =
      unknownType === undefined
        ? `expected at least one of ${known.join(", ")}, found none`
        : `expected one of ${known.join(", ")}, found ${JSON.stringify(unknownType)}`
    return yield* new Errors.DatasetError({ source, field: "types", reason })
  }
  if (benchmark !== undefined)
    return make(source, benchmark.benchmark, benchmark.resolved, benchmark.fingerprint, benchmark.rows, options)
  const p = yield* plan(source, options)
  switch (p.kind) {
    case "synthetic": {
      const resolved = Synthetic.toSpec(p.options)
      const raw = () =>
        Stream.fromIteratorSucceed(
          numbered(Synthetic.generate(p.options), (value, i): RawRow => ({ row: i + 1, value })),
          // Long synthetic histories are large rows: keep few in flight.
          p.options.sessionsPerHistory > 100 ? 1 : 64
        )
      const perPersona = options.types === undefined ? Domain.cupidTypes.length : new Set(options.types).size
      const total = p.options.personas * perPersona
      const opened = make(
        source,
        "cupid",
        resolved,
        Synthetic.fingerprint(p.options),
        cupidRows(raw),
        options,
        Effect.succeed(total)
      )
      return { ...opened, validate: Effect.succeed(Math.min(total, options.limit ?? total)) }
    }
    case "directory": {
      const fingerprint = yield* attempt(p.dir, () => directorySha256(p.dir, p.names))
      return make(
        source,
        "cupid",
        p.dir,
        fingerprint,
        cupidRows(() => fromBatches(p.dir, () => directoryRows(p.dir, p.names))),
        options
      )
    }
    case "file": {
      const fingerprint = p.fingerprint ?? (yield* attempt(p.file, () => fileSha256(p.file)))
      return make(
        source,
        "cupid",
        p.file,
        fingerprint,
        cupidRows(() => fromBatches(p.file, p.rows)),
        options,
        rowCount([p.file], options)
      )
    }
    case "files": {
      // Rows are numbered within their file, so a row is named `<path in repo>:<n>`.
      const raw = () =>
        Stream.flatMap(Stream.fromIterable(p.parts), (part) =>
          Stream.map(fromBatches(part.file, part.rows), (r): RawRow => ({ ...r, row: `${part.inRepo}:${r.row}` }))
        )
      const files = p.parts.map((part) => part.file)
      return make(
        source,
        "cupid",
        files.join(", "),
        partsFingerprint(p.parts),
        cupidRows(raw),
        options,
        rowCount(files, options)
      )
    }
  }
})

/** Rows in these files, counted without decoding (for `size`); unknown for `.json` arrays or with a type filter. */
const rowCount = (files: ReadonlyArray<string>, options: LoadOptions): Effect.Effect<number | undefined> => {
  const counts = files.map((f) =>
    f.endsWith(".parquet") ? parquetRowCount : f.endsWith(".json") ? undefined : jsonlRowCount
  )
  if (options.types !== undefined || counts.some((c) => c === undefined)) return Effect.succeed(undefined)
  return Effect.orElseSucceed(
    Effect.tryPromise(async () => {
      let total = 0
      for (const [i, count] of counts.entries()) total += await count!(files[i]!)
      return total
    }),
    () => undefined
  )
}

/** SHA-256 over each file's path in the repository and its own SHA-256, in reading order. */
const partsFingerprint = (parts: ReadonlyArray<HubPart>): string =>
  createHash("sha256")
    .update(parts.map((part) => `${part.inRepo}\n${part.sha256}\n`).join(""))
    .digest("hex")

function* numbered<A, B>(items: Iterable<A>, f: (a: A, i: number) => B): IterableIterator<B> {
  let i = 0
  for (const item of items) yield f(item, i++)
}

const fromBatches = (file: string, rows: () => RowBatches): Stream.Stream<RawRow, Errors.DatasetError> =>
  Stream.fromAsyncIterable(rows(), asDatasetError(file)).pipe(Stream.flattenIterables)

/** CUPID rows, one instance each. */
const cupidRows =
  (raw: () => Stream.Stream<RawRow, Errors.DatasetError>) => (): Stream.Stream<DecodedRow, Errors.DatasetError> =>
    Stream.map(raw(), (r): DecodedRow => ({
      row: r.row,
      result: "malformed" in r ? Either.left({ reason: r.malformed }) : cupidRow(r.value)
    }))

/** Opens a source and reads every instance into memory (small data, tests, statistics). */
export const loadAll = Effect.fn("Dataset.loadAll")(function* (
  source: string,
  options?: LoadOptions
): Effect.fn.Return<
  { instances: ReadonlyArray<Domain.Instance>; skipped: ReadonlyArray<SkippedRow>; fingerprint: string },
  Errors.DatasetError,
  FileSystem.FileSystem
> {
  const opened = yield* open(source, options)
  const instances = yield* Stream.runCollect(opened.instances)
  return { instances: [...instances], skipped: opened.skipped(), fingerprint: opened.fingerprint }
})

/**
 * Makes sure the files of an `hf:<owner>/<name>[/<path>]` source are in the cache and returns
 * their paths, in reading order. Without a path, the files are those of the `test` split that the
 * dataset card's `configs` declare, else that the repository's file list names (docs/data.md,
 * "Which file an hf: source reads"); with one, that file. A file is downloaded from
 * `<endpoint>/datasets/<owner>/<name>/resolve/main/<path>` and stored as
 * `<cacheDir>/hf/<owner>/<name>/<path>` with its SHA-256 beside it in `<file>.sha256`; the paths
 * found are recorded, so a cache hit works offline. A cached file whose bytes no longer match the
 * checksum is an error.
 */
export const download = (
  source: "hf:kixlab/CUPID" | "hf:kixlab/CUPID-Unverified" | (string & {}),
  options: LoadOptions = {}
): Effect.Effect<ReadonlyArray<string>, Errors.DatasetError, FileSystem.FileSystem> =>
  Effect.map(cachedHf(source, options), (fetched) => fetched.files.map((f) => f.path)).pipe(
    Effect.withSpan("Dataset.download")
  )

const cachedHf = (source: string, options: LoadOptions) =>
  HubDownload.fetchToCache(
    source,
    options.cacheDir ?? defaultCacheDir(),
    options.hfEndpoint ?? Hf.defaultEndpoint,
    options.download
  )
