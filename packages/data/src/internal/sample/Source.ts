/**
 * The hand-written source of one sample persona
 * (`packages/data/data/sample-src/<split>/<persona_id>.json`): its factors with their surface forms,
 * the topic phrase shared across factors, preferences and checklists, twelve prior sessions in
 * chronological order, and the current request. The schema checks the shape; `Validate` checks the
 * CUPID template and the realism rules of docs/sample-data.md.
 *
 * @example
 * Source.parse("d01-x.json", text) // Either<SampleSource, DatasetError>
 */
import { FileSystem, Path } from "@effect/platform"
import { Effect, Either, ParseResult, Schema } from "effect"
import { Domain, Errors } from "@cupid-lab/core"

export const Slot = Schema.Literal("A", "A-changed", "B", "other").annotations({
  message: () => ({ message: `expected one of "A", "A-changed", "B", "other"`, override: true })
})
export type Slot = typeof Slot.Type

/** CUPID's factor types. */
export const FactorType = Schema.Literal(
  "person",
  "organization",
  "tool",
  "location",
  "activity",
  "event",
  "media",
  "artifact"
)
export type FactorType = typeof FactorType.Type

export const ResourceKind = Schema.Literal("code", "document", "data")

const Text = Schema.String.pipe(Schema.nonEmptyString({ message: () => "expected a non-empty string" }))
const Mentions = Schema.Array(Text).pipe(Schema.minItems(1, { message: () => "expected at least one mention" }))

export const Factor = Schema.Struct({ name: Text, type: FactorType, mentions: Mentions })
export type Factor = typeof Factor.Type

export const Topic = Schema.Struct({ name: Text, mentions: Mentions })

export const SourceSession = Schema.Struct({
  slot: Slot,
  context_factor: Text,
  contextual_preference: Text,
  resource: Schema.optional(ResourceKind),
  dialogue: Schema.Array(Domain.Message)
})
export type SourceSession = typeof SourceSession.Type

export const SampleSource = Schema.Struct({
  persona_id: Text,
  persona: Text,
  topic: Topic,
  factors: Schema.Array(Factor),
  factor_a: Text,
  preference_a: Text,
  checklist_a: Schema.Array(Text),
  preference_a_changed: Text,
  checklist_a_changed: Schema.Array(Text),
  factor_b: Text,
  preference_b: Text,
  current_request: Text,
  sessions: Schema.Array(SourceSession)
})
export type SampleSource = typeof SampleSource.Type

/** The two splits: `dev` builds `sample.jsonl`, `test` builds `sample-test.jsonl`. */
export const splits = ["dev", "test"] as const
export type Split = (typeof splits)[number]

export interface Problem {
  readonly field: string
  readonly reason: string
}

export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (out, key) => (typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`),
    ""
  )

const decodeUnknown = Schema.decodeUnknownEither(SampleSource, { errors: "all", onExcessProperty: "error" })

/** Decode one source's shape; every schema problem is listed with its field path. */
export const decodeShape = (input: unknown): Either.Either<SampleSource, ReadonlyArray<Problem>> =>
  Either.mapLeft(decodeUnknown(input), (error) =>
    ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
      field: issue.path.length > 0 ? formatPath(issue.path) : "(root)",
      reason: issue.message
    }))
  )

/** Parse the text of a source file and decode its shape. */
export const parseShape = (text: string): Either.Either<SampleSource, ReadonlyArray<Problem>> =>
  Either.flatMap(
    Either.try({
      try: (): unknown => JSON.parse(text),
      catch: (e) => [{ field: "(root)", reason: `not valid JSON: ${e instanceof Error ? e.message : String(e)}` }]
    }),
    decodeShape
  )

export interface LoadedSource {
  /** The path the source was read from. */
  readonly file: string
  readonly split: Split
  readonly source: SampleSource
}

export interface FileProblems {
  readonly file: string
  readonly problems: ReadonlyArray<Problem>
}

/** One problem list as a DatasetError naming the file and the first field. */
export const problemError = (file: string, problems: ReadonlyArray<Problem>): Errors.DatasetError => {
  const [first, ...rest] = problems
  return new Errors.DatasetError({
    source: file,
    ...(first !== undefined ? { field: first.field } : {}),
    reason:
      (first?.reason ?? "invalid") +
      (rest.length > 0 ? ` (and ${rest.length} more problem${rest.length === 1 ? "" : "s"})` : "")
  })
}

/**
 * Read the given source files and decode their shapes. The file name must be the persona id. Files
 * that cannot be read fail; files of the wrong shape are returned as problems, so a check can list them all.
 */
export const readFiles = Effect.fn("Sample.readFiles")(function* (
  files: ReadonlyArray<{ readonly file: string; readonly split: Split }>
) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const loaded: Array<LoadedSource> = []
  const broken: Array<FileProblems> = []
  for (const { file, split } of files) {
    const text = yield* fs
      .readFileString(file)
      .pipe(
        Effect.mapError((e) => new Errors.DatasetError({ source: file, reason: `cannot read the file: ${e.message}` }))
      )
    const decoded = parseShape(text)
    if (Either.isLeft(decoded)) {
      broken.push({ file, problems: decoded.left })
      continue
    }
    const name = path.basename(file)
    if (`${decoded.right.persona_id}.json` !== name) {
      broken.push({
        file,
        problems: [
          {
            field: "persona_id",
            reason: `must match the file name ("${name.replace(/\.json$/, "")}"), found "${decoded.right.persona_id}"`
          }
        ]
      })
      continue
    }
    loaded.push({ file, split, source: decoded.right })
  }
  return { loaded, broken }
})

/** Every `*.json` of `<root>/dev` and `<root>/test`, sorted by file name within a split. */
export const listSplits = Effect.fn("Sample.listSplits")(function* (root: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const files: Array<{ file: string; split: Split }> = []
  for (const split of splits) {
    const directory = path.join(root, split)
    const names = yield* fs
      .readDirectory(directory)
      .pipe(
        Effect.mapError(
          (e) => new Errors.DatasetError({ source: directory, reason: `cannot list the directory: ${e.message}` })
        )
      )
    const sources = names.filter((n) => n.endsWith(".json")).sort()
    files.push(...sources.map((n) => ({ file: path.join(directory, n), split })))
  }
  return files
})
