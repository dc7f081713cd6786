import * as path from "node:path"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import { Errors, Files, HttpGet } from "@cupid-lab/core"

import {
  cardMetadata,
  declaredFiles,
  decodeListing,
  expand,
  isPattern,
  isSafePath,
  listedFiles,
  preferredType,
  type Problem,
  wantedSplit
} from "./hubFiles.js"
import * as Hf from "./huggingFace.js"
import { describeIssue } from "./rowDecoder.js"

/*
 * An hf: source in the cache: the file it names, or the files of the split its repository's card
 * or file list gives (hubFiles.ts). Once every file is cached, the resolved paths are recorded in
 * <cacheDir>/hf/.resolved/<owner>/<name>.json, so later runs read the cache without the network.
 */

/** A cached file and its path in the repository. */
export interface CachedFile extends Hf.Cached {
  readonly file: string
}

export interface Fetched {
  /** In reading order; never empty. */
  readonly files: ReadonlyArray<CachedFile>
  /** How the files were chosen, e.g. `dataset card, config default, split test`. */
  readonly rule: string
  /** The paths come from the cache's record of an earlier resolution (no request was made for them). */
  readonly recorded: boolean
}

const Resolution = Schema.Struct({
  files: Schema.NonEmptyArray(
    Schema.String.pipe(Schema.filter(isSafePath, { description: "a path inside the repository" }))
  ),
  rule: Schema.String
})
type Resolution = typeof Resolution.Type

/** Where the resolved paths of a repository are recorded; owners never start with a dot, so no repository lands here. */
export const resolutionPath = (cacheDir: string, repo: string): string => {
  const [owner, name] = repo.split("/") as [string, string]
  return path.resolve(cacheDir, "hf", ".resolved", owner, `${name}.json`)
}

const readRecord = (
  source: string,
  file: string
): Effect.Effect<Resolution | undefined, Errors.DatasetError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    if (!(yield* fs.exists(file))) return undefined
    const text = yield* fs.readFileString(file)
    const fail = (reason: string, field?: string) =>
      new Errors.DatasetError({
        source: file,
        ...(field === undefined ? {} : { field }),
        reason: `${reason}; delete it to resolve ${source} again`
      })
    const parsed = yield* Effect.try({ try: () => JSON.parse(text) as unknown, catch: () => fail("not JSON") })
    return yield* Schema.decodeUnknown(Resolution)(parsed).pipe(
      Effect.mapError((e) => {
        const p = describeIssue(e.issue)
        return fail(p.reason, p.field)
      })
    )
  }).pipe(
    Effect.catchTag(
      "SystemError",
      "BadArgument",
      (e) => new Errors.DatasetError({ source: file, reason: `cannot read (${Files.describe(e)})` })
    )
  )

const writeRecord = (
  file: string,
  resolution: Resolution
): Effect.Effect<void, Errors.DatasetError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    yield* fs.makeDirectory(path.dirname(file), { recursive: true })
    yield* Files.writeFileAtomic(file, `${JSON.stringify(resolution, null, 2)}\n`)
  }).pipe(
    Effect.mapError((e) => new Errors.DatasetError({ source: file, reason: `cannot write (${Files.describe(e)})` }))
  )

interface Answer {
  readonly url: string
  readonly status: number
  readonly text: string
}

/** One request to the hub for resolving files; being unreachable says how to do without it. */
const get = (
  src: Hf.HfSource,
  cacheDir: string,
  url: string,
  limits: HttpGet.Limits
): Effect.Effect<Answer, Errors.DatasetError> =>
  Effect.tryPromise({
    try: async (signal) => {
      const answer = await HttpGet.bytes(url, { limits, signal })
      return { url: HttpGet.redact(url), status: answer.status, text: answer.bytes.toString("utf8") }
    },
    catch: (e) =>
      new Errors.DatasetError({
        source: src.source,
        reason:
          `could not reach ${HttpGet.redact(url)} (${e instanceof HttpGet.HttpGetError ? e.reason : Hf.errorMessage(e)}) ` +
          `to find which file holds the ${wantedSplit} split, ` +
          `and nothing is cached for it. Name the file instead (hf:${src.repo}/<path in repo>; a copy saved by hand as ` +
          `${path.resolve(cacheDir, "hf", ...src.repo.split("/"))}/<path in repo> is then read without the network), ` +
          "or pass --data <file> pointing at a downloaded copy."
      })
  })

const atUrl = (url: string, p: Problem) =>
  new Errors.DatasetError({ source: url, ...(p.field === undefined ? {} : { field: p.field }), reason: p.reason })

const httpError = (src: Hf.HfSource, answer: Answer) =>
  new Errors.DatasetError({
    source: src.source,
    reason:
      answer.status === 404
        ? `${answer.url} answered HTTP 404: the hub has no dataset ${src.repo}, or it is private`
        : answer.status === 401 || answer.status === 403
          ? `${answer.url} answered HTTP ${answer.status}: the dataset may be gated, and requests are sent without a token; ` +
            "download its file by hand and pass --data <file>"
          : `${answer.url} answered HTTP ${answer.status}`
  })

/** The repository's files (the listing's `siblings`), paths that could leave the repository dropped. */
const listing = (
  src: Hf.HfSource,
  cacheDir: string,
  endpoint: string,
  limits: HttpGet.Limits
): Effect.Effect<ReadonlyArray<string>, Errors.DatasetError> =>
  Effect.gen(function* () {
    const answer = yield* get(src, cacheDir, Hf.listingUrl(endpoint, src.repo), limits)
    if (answer.status !== 200) return yield* httpError(src, answer)
    const json = yield* Effect.try({
      try: () => JSON.parse(answer.text) as unknown,
      catch: (e) => atUrl(answer.url, { reason: `not JSON (${Hf.errorMessage(e)})` })
    })
    const decoded = decodeListing(json)
    if (Either.isLeft(decoded)) return yield* atUrl(answer.url, decoded.left)
    return decoded.right.siblings.map((s) => s.rfilename).filter(isSafePath)
  })

const shown = 50

const noFile = (src: Hf.HfSource, why: string, files: ReadonlyArray<string>) =>
  new Errors.DatasetError({
    source: src.source,
    reason:
      `found no file to read: ${why}. Expected the ${wantedSplit} split (or the only split) of the default config ` +
      "in the dataset card's configs, or else, in the file list, .parquet, .jsonl or .json files whose paths name the " +
      `${wantedSplit} split (like test.parquet or data/test-00000-of-00001.parquet) or that are its only data files. ` +
      `${src.repo} has ${files.length} file${files.length === 1 ? "" : "s"}: ` +
      (files.length === 0
        ? "none"
        : files.slice(0, shown).join(", ") + (files.length > shown ? `, ... and ${files.length - shown} more` : "")) +
      `. Name the file to read as hf:${src.repo}/<path in repo>.`
  })

/** The files of the split to read, from the dataset card, else from the file list (rules in hubFiles.ts). */
export const resolve = (
  src: Hf.HfSource,
  cacheDir: string,
  endpoint: string,
  limits: HttpGet.Limits
): Effect.Effect<Resolution, Errors.DatasetError> =>
  Effect.gen(function* () {
    const files = yield* Effect.cached(listing(src, cacheDir, endpoint, limits))
    const card = yield* get(src, cacheDir, Hf.cardUrl(endpoint, src.repo), limits)
    if (card.status !== 200 && card.status !== 404) return yield* httpError(src, card)
    const metadata = card.status === 404 ? Either.right({}) : cardMetadata(card.text)
    if (Either.isLeft(metadata)) return yield* atUrl(card.url, metadata.left)
    const declared = declaredFiles(metadata.right)
    if (Either.isLeft(declared)) return yield* atUrl(card.url, declared.left)
    if (declared.right === undefined) {
      const listed = listedFiles(yield* files)
      if (Either.isLeft(listed))
        return yield* noFile(
          src,
          `the dataset card declares no files and the file list ${listed.left.reason}`,
          yield* files
        )
      const [first, ...rest] = listed.right.patterns
      return { files: [first!, ...rest], rule: listed.right.rule }
    }
    const { patterns, rule } = declared.right
    const unsafe = patterns.find((p) => !isSafePath(p))
    if (unsafe !== undefined)
      return yield* atUrl(card.url, { field: "configs", reason: `path "${unsafe}" leaves the repository` })
    const expanded = patterns.some(isPattern) ? expand(patterns, yield* files) : patterns
    const [first, ...rest] = preferredType(expanded)
    if (first === undefined) {
      const what =
        expanded.length === 0
          ? `matches no file`
          : `names ${expanded.join(", ")}, none of them a .parquet, .jsonl or .json file`
      return yield* noFile(
        src,
        `the dataset card (${rule}) declares ${patterns.join(", ")}, which ${what}`,
        yield* files
      )
    }
    return { files: [first, ...rest], rule }
  })

/**
 * Makes sure the files of an `hf:` source are cached, downloading what is missing. A source that
 * names its file, or whose files were recorded by an earlier resolution, makes no request when
 * those files are cached. Every request has the limits of `settings` (HttpGet.limits).
 */
export const fetchToCache: (
  source: string,
  cacheDir: string,
  endpoint: string,
  settings?: HttpGet.Settings
) => Effect.Effect<Fetched, Errors.DatasetError, FileSystem.FileSystem> = Effect.fn("Hf.fetchToCache")(function* (
  source: string,
  cacheDir: string,
  endpoint: string,
  settings: HttpGet.Settings = {}
) {
  const src = Hf.parseHfSource(source)
  if (src instanceof Errors.DatasetError) return yield* src
  const limits = yield* Effect.try({
    try: () => HttpGet.limits(settings.limits),
    catch: (e) => new Errors.DatasetError({ source, reason: Hf.errorMessage(e) })
  })
  const record = resolutionPath(cacheDir, src.repo)
  const recorded = src.file === undefined ? yield* readRecord(source, record) : undefined
  const resolution: Resolution =
    src.file !== undefined
      ? { files: [src.file], rule: "named in the source" }
      : (recorded ?? (yield* resolve(src, cacheDir, endpoint, limits)))
  const runtime = yield* Effect.runtime<FileSystem.FileSystem>()
  const files = yield* Effect.forEach(resolution.files, (file) =>
    Effect.tryPromise({
      try: (signal) =>
        Hf.ensureCached({ source, repo: src.repo, file }, cacheDir, endpoint, runtime, {
          limits,
          signal,
          ...(settings.onProgress && { onProgress: settings.onProgress })
        }),
      catch: (e) =>
        e instanceof Errors.DatasetError ? e : new Errors.DatasetError({ source, reason: Hf.errorMessage(e) })
    }).pipe(Effect.map((cached): CachedFile => ({ ...cached, file })))
  )
  if (src.file === undefined && recorded === undefined) yield* writeRecord(record, resolution)
  return { files, rule: resolution.rule, recorded: recorded !== undefined }
})
