/**
 * Predictions files: what a memory system that runs outside the framework chose, one JSON line per
 * (system, instance), read once and checked against the data before anything runs
 * (docs/external-systems.md). A line names its instance (`persona_id`, `instance_type`), the
 * sessions the system passed on (`selected`, 1-based positions in `prior_interactions`), and
 * optionally its full `ranking` (with `scores`), the inferred `preference`, the `response` and the
 * `system`. Every problem is reported at once, each with its line and field.
 *
 * Lines are keyed by {@link fingerprint}, what the stages can see of an instance (its query), so the
 * replaying plugins (Replay.ts) find a prediction without ever seeing the instance's id or gold.
 *
 * @example
 * const resolved = yield* Predictions.read("runs/mem0.jsonl", opened)
 * resolved.systems.map((s) => s.name) // ["mem0", "mem0-rerank"]
 */
import { type Domain, Files, Hash, Issues, type Retriever } from "@cupid-lab/core"
import type { Dataset } from "@cupid-lab/data"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Schema, Stream } from "effect"
import * as path from "node:path"

const Position = Schema.Int.annotations({
  message: () => "expected a 1-based session position (a whole number: 1 is the oldest prior session)"
})

const required = <A, I>(schema: Schema.Schema<A, I>, what: string) =>
  Schema.propertySignature(schema).annotations({ missingMessage: () => `missing (expected ${what})` })

const optional = <A, I>(schema: Schema.Schema<A, I>) => Schema.optionalWith(schema, { exact: true })

/** One line of a predictions file, as written. */
export const Line = Schema.Struct({
  persona_id: required(Schema.String, "the instance's persona_id, a string"),
  instance_type: required(Schema.String, "the instance's instance_type, a string such as consistent"),
  selected: required(Schema.Array(Position), "the selected sessions: an array of 1-based positions, e.g. [2, 4]"),
  ranking: optional(Schema.Array(Position)),
  scores: optional(Schema.Array(Schema.Finite)),
  preference: optional(Schema.String),
  response: optional(Schema.String),
  system: optional(Schema.NonEmptyTrimmedString)
})
export type Line = typeof Line.Type

export const fields: ReadonlyArray<string> = Object.keys(Line.fields)

/** What the replaying stages give for one instance. */
export interface Prediction {
  /** 1-based line in the file. */
  readonly line: number
  readonly instance: string
  readonly retrieval: Retriever.Retrieval
  readonly preference?: string
  readonly response?: string
}

export interface System {
  readonly name: string
  /** By the {@link fingerprint} of the instance's query. */
  readonly predictions: ReadonlyMap<string, Prediction>
}

export interface Resolved {
  /** The file as given. */
  readonly file: string
  /** SHA-256 of the file's bytes: part of each cell's options, so a changed file is another run. */
  readonly sha256: string
  /** In the order of their first line. */
  readonly systems: ReadonlyArray<System>
  /** Whether the lines give `preference` (all of them do, or none), and `response`. */
  readonly preferences: boolean
  readonly responses: boolean
  /** Instances in the data (before any filter). */
  readonly instances: number
}

export class PredictionsError extends Schema.TaggedError<PredictionsError>()("PredictionsError", {
  file: Schema.String,
  problems: Schema.Array(Schema.String)
}) {
  override get message(): string {
    const shown = this.problems.slice(0, maxShown)
    const more = this.problems.length - shown.length
    return this.problems.length === 1
      ? `${this.file}: ${this.problems[0]}`
      : `${this.file}: ${this.problems.length} problems:\n  ${shown.join("\n  ")}${more > 0 ? `\n  ... and ${more} more` : ""}`
  }
}

const maxShown = 20

/**
 * What a stage sees of an instance, as one key: the persona's opaque query key, the request and the
 * sessions' content hashes. Two instances of a dataset with the same fingerprint cannot be told
 * apart by any stage (and are refused when a prediction names one of them).
 */
export const fingerprint = (query: Domain.Query): string =>
  Hash.sha256Hex([query.key, query.request, ...query.sessions.map((s) => s.hash)].join("\u0000"))

/** The name of the system of lines without `system`: the file's name without its extension. */
export const defaultSystem = (file: string): string => path.basename(file).replace(/\.[^.]*$/, "") || "predictions"

interface Known {
  readonly sessions: number
  readonly fingerprint: string
}

const shown = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 60 ? `${text.slice(0, 57)}...` : text
}

/** The problems of one decoded line against its instance; `at` is the line's prefix. */
const rangeProblems = (line: Line, known: Known, id: string, at: string): Array<string> => {
  const problems: Array<string> = []
  const n = known.sessions
  const positions = (field: string, list: ReadonlyArray<number>) => {
    const seen = new Map<number, number>()
    list.forEach((p, i) => {
      if (p < 1 || p > n)
        problems.push(
          `${at}: ${field}[${i}]: position ${p} is out of range: ${id} has ${n} prior sessions, so positions go from 1 (the oldest) to ${n}`
        )
      const first = seen.get(p)
      if (first !== undefined)
        problems.push(
          `${at}: ${field}[${i}]: position ${p} is listed twice (also ${field}[${first}]); expected distinct positions`
        )
      else seen.set(p, i)
    })
  }
  positions("selected", line.selected)
  if (line.ranking !== undefined) positions("ranking", line.ranking)
  if (line.scores !== undefined) {
    if (line.ranking === undefined)
      problems.push(`${at}: scores: given without ranking; expected one score per ranking position, beside a ranking`)
    else if (line.scores.length !== line.ranking.length)
      problems.push(
        `${at}: scores: ${line.scores.length} scores for ${line.ranking.length} ranking positions; expected one score per position`
      )
    else {
      const rise = line.scores.findIndex((s, i) => i > 0 && s > line.scores![i - 1]!)
      if (rise > 0)
        problems.push(
          `${at}: scores[${rise}]: ${line.scores[rise]} is higher than scores[${rise - 1}] (${line.scores[rise - 1]}); expected the scores of the ranking best first (never increasing)`
        )
    }
  }
  return problems
}

const retrievalOf = (line: Line): Retriever.Retrieval => {
  const id = (p: number) => `s${p}`
  // Without a ranking, the selection in the order written is the ranking (MRR and nDCG read it).
  const ranked = line.ranking ?? line.selected
  return {
    ranking: ranked.map((p, i) => ({ sessionId: id(p), score: line.scores?.[i] ?? ranked.length - i })),
    selected: line.selected.map(id)
  }
}

/** Every instance of the data: its id, number of sessions and fingerprint (one pass, no gold kept). */
const index = (opened: Dataset.Opened) =>
  Stream.runFold(
    opened.instances,
    { known: new Map<string, Known>(), owners: new Map<string, Array<string>>() },
    (acc, instance) => {
      const fp = fingerprint(instance.query)
      acc.known.set(instance.id, { sessions: instance.query.sessions.length, fingerprint: fp })
      const owners = acc.owners.get(fp)
      if (owners === undefined) acc.owners.set(fp, [instance.id])
      else owners.push(instance.id)
      return acc
    }
  )

/** Read a predictions file and check every line against the data (the whole source, before filters). */
export const read = Effect.fn("Predictions.read")(function* (file: string, opened: Dataset.Opened) {
  const fs = yield* FileSystem.FileSystem
  const bytes = yield* fs
    .readFile(file)
    .pipe(Effect.mapError((e) => new PredictionsError({ file, problems: [`cannot read: ${Files.describe(e)}`] })))
  const { known, owners } = yield* index(opened)
  const problems: Array<string> = []
  const notInData: Array<string> = []
  const systems = new Map<string, Map<string, Prediction>>()
  const firstLine = new Map<string, number>()
  const presence = { preference: [] as Array<[number, boolean]>, response: [] as Array<[number, boolean]> }
  const fallback = defaultSystem(file)
  const texts = Buffer.from(bytes).toString("utf8").split("\n")
  texts.forEach((raw, i) => {
    const number = i + 1
    const at = `line ${number}`
    if (raw.trim() === "") return
    const parsed = Either.try(() => JSON.parse(raw) as unknown)
    if (Either.isLeft(parsed)) {
      const reason = parsed.left instanceof Error ? parsed.left.message : String(parsed.left)
      problems.push(`${at}: not JSON (${reason}); expected one JSON object per line`)
      return
    }
    if (parsed.right === null || typeof parsed.right !== "object" || Array.isArray(parsed.right)) {
      problems.push(`${at}: expected a JSON object with ${fields.join(", ")}, found ${shown(parsed.right)}`)
      return
    }
    const decoded = Issues.decode(Line, parsed.right, "field")
    if (Either.isLeft(decoded)) {
      for (const issue of decoded.left)
        problems.push(
          `${at}: ${issue.path.length === 0 ? "" : `${issue.path.map(String).join(".")}: `}${issue.message}`
        )
      return
    }
    const line = decoded.right
    const id = `${line.persona_id}:${line.instance_type}`
    const instance = known.get(id)
    if (instance === undefined) {
      notInData.push(`${at} (${id})`)
      return
    }
    const twins = owners.get(instance.fingerprint) ?? []
    if (twins.length > 1) {
      problems.push(
        `${at}: ${id} shows the same request and sessions as ${twins.filter((t) => t !== id).join(", ")}: no stage can tell them apart, so their predictions cannot be replayed`
      )
      return
    }
    const range = rangeProblems(line, instance, id, at)
    if (range.length > 0) return void problems.push(...range)
    const system = line.system ?? fallback
    const key = `${system}\u0000${id}`
    const first = firstLine.get(key)
    if (first !== undefined) {
      problems.push(
        `${at}: a second line for system "${system}" and instance ${id} (the first is line ${first}); expected one line per (system, instance)`
      )
      return
    }
    firstLine.set(key, number)
    presence.preference.push([number, line.preference !== undefined])
    presence.response.push([number, line.response !== undefined])
    let of = systems.get(system)
    if (of === undefined) systems.set(system, (of = new Map()))
    of.set(instance.fingerprint, {
      line: number,
      instance: id,
      retrieval: retrievalOf(line),
      ...(line.preference !== undefined ? { preference: line.preference } : {}),
      ...(line.response !== undefined ? { response: line.response } : {})
    })
  })
  if (notInData.length > 0) {
    const example = known.keys().next().value
    problems.push(
      `${notInData.length} line${notInData.length === 1 ? " names an instance" : "s name instances"} that ${notInData.length === 1 ? "is" : "are"} not in the data (${opened.source}, ${known.size} instances): ${notInData.slice(0, 10).join(", ")}${notInData.length > 10 ? ", ..." : ""}; an instance is persona_id:instance_type${example === undefined ? "" : `, e.g. ${example}`}`
    )
  }
  for (const field of ["preference", "response"] as const) {
    const given = presence[field].find(([, has]) => has)
    const missing = presence[field].find(([, has]) => !has)
    if (given !== undefined && missing !== undefined)
      problems.push(
        `line ${missing[0]}: ${field}: missing, but line ${given[0]} gives one: every line gives a ${field} or none does (the scorers are shared by every system; write "${field}": "" where a system gave none)`
      )
  }
  if (problems.length === 0 && systems.size === 0) problems.push("no predictions: the file has no lines")
  if (problems.length > 0) return yield* new PredictionsError({ file, problems })
  return {
    file,
    sha256: Hash.sha256Hex(bytes),
    systems: [...systems].map(([name, predictions]) => ({ name, predictions })),
    preferences: presence.preference.some(([, has]) => has),
    responses: presence.response.some(([, has]) => has),
    instances: known.size
  } satisfies Resolved
})

/**
 * The predictions for the instances a run keeps (`score --types`, `--limit`): lines for the others
 * are dropped, and counted (`ignored`) so that the command says so once.
 */
export const keep = (
  resolved: Resolved,
  ids: ReadonlySet<string>
): { readonly resolved: Resolved; readonly ignored: number } => {
  const systems = resolved.systems.map((s) => ({
    name: s.name,
    predictions: new Map([...s.predictions].filter(([, p]) => ids.has(p.instance)))
  }))
  const lines = (of: ReadonlyArray<System>) => of.reduce((n, s) => n + s.predictions.size, 0)
  return { resolved: { ...resolved, systems }, ignored: lines(resolved.systems) - lines(systems) }
}
