/**
 * A run's retrieval for the IR toolchain (`trec_eval`, ranx, pytrec_eval), in `<run>/trec/`:
 * `qrels.txt` (`qid 0 docid rel` for every prior session; one `<cell id>.qrels.txt` per cell when
 * history transforms gave cells different histories), `<cell id>.run` (the selected sessions) and
 * `<cell id>.ranking.run` (the whole ranking, where the retriever ranks). Scores encode the
 * framework's order (rank r of k scores k - r + 1); failed pairs have no lines (`trec_eval -c`).
 *
 * @example
 * yield* Trec.write("runs/retrieval") // runs/retrieval/trec/qrels.txt, <cell>.run, ...
 */
import { Files } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import * as path from "node:path"
import { RunError } from "./Errors.js"
import * as RunDir from "./RunDir.js"
import { ResultLine } from "./ResultLine.js"

/** What the files need of a result line. */
const TrecLine = ResultLine.pick("cell", "cellName", "instance", "status", "meta", "selected", "ranking")
const decode = Schema.decodeUnknownEither(TrecLine, { onExcessProperty: "ignore" })
type TrecLine = typeof TrecLine.Type

/** An id as one whitespace-free TREC field: `%` and whitespace percent-encoded (UTF-8; `a b` is `a%20b`). */
export const trecId = (id: string): string => id.replace(/[%\s]/gu, encodeURIComponent)

/** `qid Q0 docid rank score tag` lines of an ordered list of session ids. */
export const runLines = (qid: string, docs: ReadonlyArray<string>, tag: string): string =>
  docs.map((doc, r) => `${trecId(qid)} Q0 ${trecId(doc)} ${r + 1} ${docs.length - r} ${tag}\n`).join("")

/** `qid 0 docid rel` for sessions s1 ... sN. */
export const qrelLines = (qid: string, sessions: number, relevant: ReadonlyArray<string>): string => {
  const rel = new Set(relevant)
  let out = ""
  const q = trecId(qid)
  for (let i = 1; i <= sessions; i++) out += `${q} 0 s${i} ${rel.has(`s${i}`) ? 1 : 0}\n`
  return out
}

/** The selection in the order of the ranking when there is one (ties in the ranking's own order). */
export const selectionOrder = (line: Pick<TrecLine, "selected" | "ranking">): ReadonlyArray<string> => {
  const selected = line.selected ?? []
  if (line.ranking === null) return selected
  const at = new Map<string, number>()
  line.ranking.forEach((r, i) => {
    if (!at.has(r.sessionId)) at.set(r.sessionId, i)
  })
  return [...selected].sort((a, b) => (at.get(a) ?? Infinity) - (at.get(b) ?? Infinity))
}

const listOf = (map: Map<string, Array<string>>, key: string): Array<string> => {
  let list = map.get(key)
  if (list === undefined) map.set(key, (list = []))
  return list
}

export interface Written {
  readonly dir: string
  /** qrels.txt, or one `<cell id>.qrels.txt` per cell when history transforms gave cells different histories. */
  readonly qrels: ReadonlyArray<string>
  readonly runs: ReadonlyArray<string>
}

/** Read `<dir>/results.jsonl` and write `<dir>/trec/`. */
export const write = Effect.fn("Trec.write")(function* (
  dir: string
): Effect.fn.Return<Written, RunError, FileSystem.FileSystem> {
  const fileSystem = yield* FileSystem.FileSystem
  const results = path.join(dir, "results.jsonl")
  const out = path.join(dir, "trec")
  const cannot = (file: string, doing: string) => (e: unknown) =>
    new RunError({ path: file, reason: `cannot ${doing}: ${Files.describe(e)}` })
  // Per cell, since a history transform (padding, moving) changes the sessions a cell sees.
  const qrels = new Map<string, Array<string>>()
  const selections = new Map<string, Array<string>>()
  const rankings = new Map<string, Array<string>>()
  const parse = RunDir.parseLine((value) =>
    Either.mapLeft(decode(value), (e) => `not a result line (${e.message.split("\n")[0]})`)
  )
  yield* RunDir.scan(fileSystem, results, (raw, lineNo) => {
    const line = parse(raw.toString("utf8", 0, raw.length - 1), lineNo, results)
    if (Either.isLeft(line)) return line.left
    const l = line.right
    listOf(qrels, l.cell).push(qrelLines(l.instance, l.meta.sessions, l.meta.relevant))
    const selected = listOf(selections, l.cell)
    if (l.status !== "ok") return
    // The run tag names the cell as reports do (whitespace encoded); the file keeps the cell's id.
    const tag = trecId(l.cellName)
    selected.push(runLines(l.instance, selectionOrder(l), tag))
    if (l.ranking !== null)
      listOf(rankings, l.cell).push(
        runLines(
          l.instance,
          l.ranking.map((r) => r.sessionId),
          tag
        )
      )
  }).pipe(Effect.catchTag("SystemError", "BadArgument", (e) => Effect.fail(cannot(results, "read the results")(e))))
  yield* Files.makeDirectory(out).pipe(Effect.mapError(cannot(out, "create the directory")))
  // One qrels.txt when every cell saw the same histories; else one per cell, beside its run.
  const texts = [...qrels.entries()].map(([cell, parts]) => [cell, parts.join("")] as const)
  const shared = texts.every(([, t]) => t === texts[0]?.[1])
  const qrelsFile = path.join(out, "qrels.txt")
  if (shared) yield* RunDir.write(qrelsFile, texts[0]?.[1] ?? "")
  else for (const [cell, text] of texts) yield* RunDir.write(path.join(out, `${cell}.qrels.txt`), text)
  const runs: Array<string> = []
  for (const [suffix, lists] of [
    ["run", selections],
    ["ranking.run", rankings]
  ] as const) {
    for (const [cell, text] of lists) {
      const file = path.join(out, `${cell}.${suffix}`)
      yield* RunDir.write(file, text.join(""))
      runs.push(file)
    }
  }
  return { dir: out, qrels: shared ? [qrelsFile] : texts.map(([cell]) => path.join(out, `${cell}.qrels.txt`)), runs }
})
