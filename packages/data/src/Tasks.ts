/**
 * The work of the `data` subcommands (inspect, download, generate): each returns the lines to print.
 * The command line declares their options and loads this module only when one runs.
 */
import * as path from "node:path"
import type { FileSystem } from "@effect/platform"
import { Effect, Either, ParseResult, Schema, Stream } from "effect"
import * as Dataset from "./Dataset.js"
import { Errors } from "@cupid-lab/core"
import * as Synthetic from "./Synthetic.js"
import * as HubDownload from "./internal/hubDownload.js"
import * as Hf from "./internal/huggingFace.js"
import { accumulator, format } from "./internal/inspect.js"
import { fileSha256 } from "./internal/readers.js"

/** Counts, lengths, token and label statistics of a source, as the lines `data inspect` prints. */
export const inspect = Effect.fn("Tasks.inspect")(function* (
  source: string,
  options: Dataset.LoadOptions
): Effect.fn.Return<ReadonlyArray<string>, Errors.DatasetError, FileSystem.FileSystem> {
  const opened = yield* Dataset.open(source, options)
  const acc = accumulator(Dataset.benchmarkTypes[opened.benchmark])
  yield* Stream.runForEach(opened.instances, (i) => Effect.sync(() => acc.add(i)))
  const lines = [
    `source: ${source}${opened.resolved !== source ? ` (${opened.resolved})` : ""}`,
    `benchmark: ${opened.benchmark}`,
    `fingerprint: ${opened.fingerprint}`,
    format(acc.result(), opened.benchmark !== "cupid")
  ]
  const skipped = opened.skipped()
  lines.push(`skipped rows: ${skipped.length}`)
  const shown = 20
  for (const s of skipped.slice(0, shown))
    lines.push(`  row ${s.row}${s.id !== undefined ? ` (${s.id})` : ""}: ${s.reason}`)
  if (skipped.length > shown) lines.push(`  ... and ${skipped.length - shown} more`)
  return lines
})

/** Fetch an `hf:` source into the cache; the lines say which files were chosen and why, and name each cached file and its SHA-256. */
export const download = (
  source: string,
  options: { readonly cacheDir?: string; readonly hfEndpoint?: string }
): Effect.Effect<ReadonlyArray<string>, Errors.DatasetError, FileSystem.FileSystem> =>
  Effect.map(
    HubDownload.fetchToCache(
      source,
      options.cacheDir ?? Dataset.defaultCacheDir(),
      options.hfEndpoint ?? Hf.defaultEndpoint
    ),
    (fetched) => [
      `files: ${fetched.files.map((f) => f.file).join(", ")} (${fetched.rule}${fetched.recorded ? ", as recorded in the cache" : ""})`,
      ...fetched.files.flatMap((f) => [
        `${f.downloaded ? "downloaded" : "already cached"}: ${f.path}`,
        `sha256: ${f.sha256}`
      ])
    ]
  )

/** The command-line names of the generator's options, for messages. */
const flagOf: Readonly<Record<string, string>> = {
  sessionsPerHistory: "sessions",
  relevantPosition: "position",
  contrastiveShare: "contrastive-share",
  staleShare: "stale-share"
}

/** The generator's flags as given (strings already read as numbers). */
export interface GenerateFlags {
  readonly spec?: string
  readonly difficulty?: string
  readonly personas?: number
  readonly sessions?: number
  readonly seed?: number
  readonly position?: string
  readonly contrastiveShare?: number
  readonly staleShare?: number
  readonly types?: ReadonlyArray<string>
}

/**
 * Decode the generator's flags into `Synthetic.Options`; `--spec` keys come first and the named
 * flags override them. The failure is a message naming the flag: `--sessions: expected ...`.
 */
export const generateOptions = (f: GenerateFlags): Either.Either<Synthetic.Options, string> => {
  let extra: Record<string, unknown> = {}
  if (f.spec !== undefined) {
    const spec = Synthetic.parseSpec(`synthetic:${f.spec}`)
    if (Either.isLeft(spec)) return Either.left(`--spec: ${spec.left.reason}`)
    extra = Object.fromEntries(Object.entries(spec.right).filter(([k]) => Synthetic.knobKeys.includes(k)))
  }
  const raw = {
    ...extra,
    difficulty: f.difficulty,
    personas: f.personas,
    sessionsPerHistory: f.sessions,
    seed: f.seed,
    relevantPosition: f.position,
    contrastiveShare: f.contrastiveShare,
    staleShare: f.staleShare,
    types: f.types
  }
  const decoded = Schema.decodeUnknownEither(Synthetic.Options)(
    Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined))
  )
  if (Either.isRight(decoded)) return Either.right(decoded.right)
  const issue = ParseResult.ArrayFormatter.formatErrorSync(decoded.left)[0]!
  const key = String(issue.path[0])
  return Either.left(`--${flagOf[key] ?? key}: ${issue.message}`)
}

/** Write a synthetic dataset as JSON lines; the lines name the file, its source spec and SHA-256. */
export const generate = Effect.fn("Tasks.generate")(function* (
  out: string,
  options: Synthetic.Options
): Effect.fn.Return<ReadonlyArray<string>, Errors.DatasetError> {
  const file = path.resolve(out)
  const rows = yield* Synthetic.writeJsonl(file, Synthetic.generate(options))
  const sha = yield* Effect.promise(() => fileSha256(file))
  return [`wrote ${rows} rows to ${file}`, `source: ${Synthetic.toSpec(options)}`, `sha256: ${sha}`]
})
