// raw.jsonl: a header with the fingerprint of everything that shapes model calls, then one record
// per finished unit, appended as it finishes (a killed run loses at most the line being written,
// which is dropped on reopening). At the end of a run the file is rewritten in a fixed order, so
// two runs that reach the same records leave the same bytes.
import { Either, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SynthesisRunError } from "../Errors.js"
import { RawRecord } from "../Records.js"

const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(RawRecord))
const encodeLine = Schema.encodeSync(Schema.parseJson(RawRecord))

export const keyOf = (r: RawRecord): string => {
  switch (r._tag) {
    case "header":
      return "0"
    case "persona":
    case "factors":
      return `${r.persona}\u0000${r._tag}`
    case "session":
    case "dialogue":
      return `${r.persona}\u0000${r._tag}\u0000${String(r.session).padStart(5, "0")}`
    case "checklist":
      return `${r.persona}\u0000checklist\u0000${r.preference}`
  }
}

const order = { header: 0, persona: 1, factors: 2, session: 3, checklist: 4, dialogue: 5 } as const

const compare = (a: RawRecord, b: RawRecord): number => {
  const pa = a._tag === "header" ? -1 : a.persona
  const pb = b._tag === "header" ? -1 : b.persona
  if (pa !== pb) return pa - pb
  if (a._tag !== b._tag) return order[a._tag] - order[b._tag]
  const ka = keyOf(a),
    kb = keyOf(b)
  return ka < kb ? -1 : ka > kb ? 1 : 0
}

export interface RawStore {
  readonly file: string
  readonly get: (key: string) => RawRecord | undefined
  readonly add: (record: RawRecord) => void
  readonly records: () => ReadonlyArray<RawRecord>
  /** Rewrite the file sorted. */
  readonly compact: () => void
  /** Lines dropped on opening (a line cut short by a kill). */
  readonly dropped: number
}

/**
 * Open (or create) `<dir>/raw.jsonl`. `persist: false` keeps records in memory only (dry runs,
 * which read what a real run stored but store nothing).
 */
export const open = (
  dir: string,
  fingerprint: string,
  persist: boolean
): Either.Either<RawStore, SynthesisRunError> => {
  const file = path.join(dir, "raw.jsonl")
  const map = new Map<string, RawRecord>()
  let dropped = 0
  try {
    const text = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : ""
    const lines = text.split("\n").filter((l) => l !== "")
    if (persist && text !== "" && !text.endsWith("\n")) fs.appendFileSync(file, "\n")
    for (const line of lines) {
      const decoded = decodeLine(line)
      if (Either.isLeft(decoded)) {
        dropped++
        continue
      }
      const r = decoded.right
      if (r._tag === "header" && r.fingerprint !== fingerprint) {
        return Either.left(
          new SynthesisRunError({
            path: file,
            reason:
              "was written by a synthesis with other models, prompts or generation options; choose another out directory (or delete it) to start afresh"
          })
        )
      }
      map.set(keyOf(r), r)
    }
    if (persist) {
      fs.mkdirSync(dir, { recursive: true })
      if (!map.has("0")) {
        map.set("0", { _tag: "header", fingerprint })
        fs.writeFileSync(
          file,
          [...map.values()]
            .sort(compare)
            .map((r) => `${encodeLine(r)}\n`)
            .join("")
        )
      }
    }
  } catch (e) {
    return Either.left(new SynthesisRunError({ path: file, reason: e instanceof Error ? e.message : String(e) }))
  }
  const records = () => [...map.values()].sort(compare)
  return Either.right({
    file,
    dropped,
    get: (key) => map.get(key),
    add: (record) => {
      map.set(keyOf(record), record)
      if (persist) fs.appendFileSync(file, `${encodeLine(record)}\n`)
    },
    records,
    compact: () => {
      if (!persist) return
      const tmp = `${file}.${process.pid}.tmp`
      fs.writeFileSync(
        tmp,
        records()
          .map((r) => `${encodeLine(r)}\n`)
          .join("")
      )
      fs.renameSync(tmp, file)
    }
  })
}
