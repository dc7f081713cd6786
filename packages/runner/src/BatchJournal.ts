/**
 * `<run>/batches.jsonl`: every provider batch job a sweep submitted, recorded before the sweep
 * waits on it, so that a rerun (on any machine sharing the run directory and the cache) polls the
 * recorded batches instead of paying for their requests again. Appended one line per event, the
 * way results.jsonl is: a line cut short by a kill is dropped on reading.
 *
 * - `uploaded`: an input file is at the provider, holding these keys (recorded before the batch
 *   is created: a kill between the two is found again through the provider's list of batches);
 * - `submitted`: a batch runs on that file;
 * - `cancelled`: `cupid-lab batches --cancel` cancelled it.
 *
 * @example
 * const journal = yield* BatchJournal.read(dir) // journal.batches: one entry per input file
 */
import { FileSystem } from "@effect/platform"
import { Effect, Schema } from "effect"
import * as path from "node:path"
import { Errors } from "@cupid-lab/results"

const { RunError } = Errors
type RunError = Errors.RunError

export const fileName = "batches.jsonl"

const Uploaded = Schema.Struct({
  event: Schema.Literal("uploaded"),
  at: Schema.String,
  provider: Schema.String,
  model: Schema.String,
  file: Schema.String,
  keys: Schema.Array(Schema.String),
  time: Schema.String
})
const Submitted = Schema.Struct({
  event: Schema.Literal("submitted"),
  file: Schema.String,
  batch: Schema.String,
  time: Schema.String
})
const Cancelled = Schema.Struct({ event: Schema.Literal("cancelled"), batch: Schema.String, time: Schema.String })
export const Event = Schema.Union(Uploaded, Submitted, Cancelled)
export type Event = typeof Event.Type

/** One input file and the batch started on it (absent: not recorded, perhaps killed before). */
export interface Entry {
  readonly at: string
  readonly provider: string
  readonly model: string
  readonly file: string
  readonly keys: ReadonlyArray<string>
  readonly uploadedAt: string
  readonly batch?: string
  readonly submittedAt?: string
  readonly cancelled?: boolean
}

const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(Event))

/** The entries of a journal's text, in the order their files were uploaded. */
export const parse = (file: string, text: string): Effect.Effect<ReadonlyArray<Entry>, RunError> =>
  Effect.gen(function* () {
    const lines = text.split("\n")
    // The last line without its newline was cut short by a kill.
    if (!text.endsWith("\n")) lines.pop()
    const entries = new Map<string, Entry>()
    const byBatch = new Map<string, string>()
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i]!
      if (line.trim() === "") continue
      const decoded = decodeLine(line)
      if (decoded._tag === "Left") {
        return yield* new RunError({
          path: `${file}:${i + 1}`,
          reason: `not a batch record (expected a JSON object with "event": uploaded, submitted or cancelled); move the file aside only if no batch it records is still running`
        })
      }
      const e = decoded.right
      if (e.event === "uploaded") {
        entries.set(e.file, {
          at: e.at,
          provider: e.provider,
          model: e.model,
          file: e.file,
          keys: e.keys,
          uploadedAt: e.time
        })
      } else if (e.event === "submitted") {
        const entry = entries.get(e.file)
        if (entry !== undefined) entries.set(e.file, { ...entry, batch: e.batch, submittedAt: e.time })
        byBatch.set(e.batch, e.file)
      } else {
        const f = byBatch.get(e.batch)
        const entry = f === undefined ? undefined : entries.get(f)
        if (entry !== undefined) entries.set(entry.file, { ...entry, cancelled: true })
      }
    }
    return [...entries.values()]
  })

export const read = (dir: string): Effect.Effect<ReadonlyArray<Entry>, RunError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const fs = yield* FileSystem.FileSystem
    const file = path.join(dir, fileName)
    const text = yield* fs.readFileString(file).pipe(
      Effect.catchTag("SystemError", (e) => (e.reason === "NotFound" ? Effect.succeed("") : Effect.fail(e))),
      Effect.mapError((e) => new RunError({ path: file, reason: `cannot read it: ${e.message}` }))
    )
    return yield* parse(file, text)
  })

/** Append one event as one write: a kill leaves at worst a cut last line, which {@link parse} drops. */
export const append = (dir: string, event: Event): Effect.Effect<void, RunError, FileSystem.FileSystem> =>
  Effect.flatMap(FileSystem.FileSystem, (fs) =>
    fs.writeFileString(path.join(dir, fileName), `${JSON.stringify(event)}\n`, { flag: "a" })
  ).pipe(
    Effect.mapError(
      (e) =>
        new RunError({
          path: path.join(dir, fileName),
          reason: `cannot record a batch: ${e.message}; the batch is running at the provider, and \`cupid-lab batches\` cannot list it`
        })
    )
  )
