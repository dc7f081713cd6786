/**
 * A file of a benchmark's authors' repository at a pinned commit, read at run time and never
 * copied into this one: from a checkout (`<NAME>_REFERENCE_DIR`), else the model cache, else
 * downloaded from a raw-file server (`<NAME>_REFERENCE_URL`, else GitHub's) and kept in the cache;
 * whatever the place, its sha256 must be the pinned one. A dry run downloads nothing. The judges'
 * prompts (scorers) and the `qa` generator's LongMemEval reader load the authors' files with it.
 *
 * @example
 * import { PinnedFile } from "@cupid-lab/core"
 * const text = yield* PinnedFile.read(source, { path: "src/evaluation/evaluate_qa.py", sha256: "ecce..." }, locations)
 */
import * as Errors from "./Errors.js"
import * as Hash from "./Hash.js"
import * as HttpGet from "./HttpGet.js"
import * as ModelCache from "./ModelCache.js"
import { Effect, Option, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

/** The repository at its commit, and how the errors name it. */
export interface Source {
  readonly repository: string
  readonly commit: string
  /** The scorer whose errors these are. */
  readonly plugin: string
  /** The environment variables' prefix: `<variable>_REFERENCE_DIR`, `<variable>_REFERENCE_URL`. */
  readonly variable: string
  readonly howToGet: string
}

export interface File {
  readonly path: string
  readonly sha256: string
}

/** Where to look for the files. */
export interface Locations {
  /** A checkout of the pinned commit. */
  readonly dir?: string | undefined
  /** Root of the raw-file server; `<url>/<commit>/<path>` is fetched (default GitHub's raw files). */
  readonly url?: string | undefined
  /** Send nothing; stand in for a file that is neither in the checkout nor in the cache. */
  readonly dryRun?: boolean
  /** Download limits; unset ones from `CUPID_HTTP_*`, else HttpGet's defaults with a 60 s deadline. */
  readonly limits?: Partial<HttpGet.Limits>
}

/** `<variable>_REFERENCE_DIR` and `<variable>_REFERENCE_URL`. */
export const fromEnvironment = (source: Source): Omit<Locations, "dryRun"> => ({
  dir: process.env[`${source.variable}_REFERENCE_DIR`] || undefined,
  url: process.env[`${source.variable}_REFERENCE_URL`] || undefined
})

/** The model-cache key of a pinned file. */
export const cacheKey = (source: Source, file: File): string =>
  ModelCache.key({
    kind: "reference-file",
    repository: source.repository,
    commit: source.commit,
    path: file.path,
    sha256: file.sha256
  })

const failure = (source: Source, where: string, reason: string) =>
  new Errors.PluginError({ plugin: source.plugin, reason: `${where}: ${reason}` })

const pinned = (file: File, bytes: Buffer | string) => Hash.sha256Hex(bytes) === file.sha256

const checked = (
  source: Source,
  file: File,
  where: string,
  bytes: Buffer
): Effect.Effect<string, Errors.PluginError> =>
  pinned(file, bytes)
    ? Effect.succeed(bytes.toString("utf8"))
    : Effect.fail(
        failure(
          source,
          where,
          `sha256 ${Hash.sha256Hex(bytes)} does not match the pinned ${file.sha256} (${source.repository} at ${source.commit}); ${source.howToGet}`
        )
      )

const download = (source: Source, url: string, at: Locations): Effect.Effect<Buffer, Errors.PluginError> =>
  Effect.tryPromise({
    try: async (signal) => {
      const limits = HttpGet.limits(at.limits, { ...HttpGet.defaults, deadlineMs: 60_000 })
      const res = await HttpGet.bytes(url, { limits, signal })
      if (res.status !== 200) throw new Error(`HTTP ${res.status}`)
      return res.bytes
    },
    catch: (e) =>
      failure(
        source,
        HttpGet.redact(url),
        `no checkout (${source.variable}_REFERENCE_DIR) and the download failed ` +
          `(${e instanceof HttpGet.HttpGetError ? e.reason : HttpGet.describe(e)}); ${source.howToGet}`
      )
  })

/** A file's text and where it came from, or undefined in a dry run that has neither checkout nor cached copy. */
export const read = (
  source: Source,
  file: File,
  at: Locations
): Effect.Effect<
  { readonly text: string; readonly from: string } | undefined,
  Errors.PluginError,
  ModelCache.ModelCache
> =>
  Effect.gen(function* () {
    if (at.dir !== undefined) {
      const full = path.join(at.dir, file.path)
      if (!fs.existsSync(full))
        return yield* failure(source, full, `missing from the checkout ${at.dir}; ${source.howToGet}`)
      return { text: yield* checked(source, file, full, fs.readFileSync(full)), from: full }
    }
    const cache = yield* ModelCache.ModelCache
    const key = cacheKey(source, file)
    const from = `${source.repository}@${source.commit.slice(0, 7)}:${file.path}`
    const hit = yield* cache.get(key, { schema: Schema.String, accept: (t: string) => pinned(file, t) })
    if (Option.isSome(hit)) return { text: hit.value, from }
    if (at.dryRun === true) return undefined
    const root = (at.url ?? `https://raw.githubusercontent.com/${source.repository}`).replace(/\/+$/, "")
    const url = `${root}/${source.commit}/${file.path}`
    const text = yield* checked(source, file, HttpGet.redact(url), yield* download(source, url, at))
    yield* cache.set(key, text)
    return { text, from }
  })
