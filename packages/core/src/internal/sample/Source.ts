/**
 * The hand-written source of one sample persona (`packages/core/data/sample-src/<persona_id>.json`):
 * its factors and preferences, twelve prior sessions in chronological order, and which "other"
 * sessions each instance type leaves out. The schema checks the shape; `templateProblems` checks the
 * CUPID template (2 A before 2 A-changed, 2 B, 6 distinct others), since a source that breaks it
 * would silently yield instances with the wrong relevance labels.
 *
 * @example
 * Source.parse("p01-x.json", text) // Either<SampleSource, DatasetError>
 * // Left: p01-x.json, drop_changing[1]: index 8 must point at an "other" session (0-11)
 */
import { FileSystem, Path } from "@effect/platform"
import { Effect, Either, ParseResult, Schema } from "effect"
import { Message } from "../../Domain.js"
import { DatasetError } from "../../Errors.js"

export const Slot = Schema.Literal("A", "A-changed", "B", "other").annotations({
  message: () => ({ message: `expected one of "A", "A-changed", "B", "other"`, override: true })
})
export type Slot = typeof Slot.Type

const Text = Schema.String.pipe(Schema.nonEmptyString({ message: () => "expected a non-empty string" }))

export const SourceSession = Schema.Struct({
  slot: Slot,
  context_factor: Text,
  contextual_preference: Text,
  dialogue: Schema.Array(Message)
})
export type SourceSession = typeof SourceSession.Type

export const SampleSource = Schema.Struct({
  persona_id: Text,
  persona: Text,
  factor_a: Text,
  preference_a: Text,
  checklist_a: Schema.Array(Text),
  preference_a_changed: Text,
  checklist_a_changed: Schema.Array(Text),
  factor_b: Text,
  preference_b: Text,
  current_request: Text,
  sessions: Schema.Array(SourceSession),
  drop_contrastive: Schema.Array(Schema.Int),
  drop_changing: Schema.Array(Schema.Int)
})
export type SampleSource = typeof SampleSource.Type

/** How many prior sessions of each slot a source holds; instances keep 8 of the 12. */
export const slotCounts: Readonly<Record<Slot, number>> = { A: 2, "A-changed": 2, B: 2, other: 6 }
export const sessionCount = 12
const dialogueLength = { min: 6, max: 10 }
const checklistLength = { min: 2, max: 4 }

interface Problem {
  readonly field: string
  readonly reason: string
}

const checklistProblems = (field: string, items: ReadonlyArray<string>): Array<Problem> =>
  items.length < checklistLength.min || items.length > checklistLength.max
    ? [{ field, reason: `expected ${checklistLength.min}-${checklistLength.max} checklist items, found ${items.length}` }]
    : []

const dialogueProblems = (i: number, dialogue: ReadonlyArray<Message>): Array<Problem> => {
  const field = `sessions[${i}].dialogue`
  if (dialogue.length < dialogueLength.min || dialogue.length > dialogueLength.max) {
    return [{ field, reason: `expected ${dialogueLength.min}-${dialogueLength.max} messages, found ${dialogue.length}` }]
  }
  const wrong = dialogue.findIndex((m, k) => m.role !== (k % 2 === 0 ? "user" : "assistant"))
  return wrong < 0
    ? []
    : [{ field: `${field}[${wrong}].role`, reason: "messages must alternate user/assistant, starting with the user" }]
}

/** What the labels of a session in a given slot must be. */
const expectedLabels = (source: SampleSource, slot: Slot): { factor: string; preference: string } | undefined => {
  switch (slot) {
    case "A":
      return { factor: source.factor_a, preference: source.preference_a }
    case "A-changed":
      return { factor: source.factor_a, preference: source.preference_a_changed }
    case "B":
      return { factor: source.factor_b, preference: source.preference_b }
    case "other":
      return undefined
  }
}

const sessionProblems = (source: SampleSource): Array<Problem> =>
  source.sessions.flatMap((s, i): Array<Problem> => {
    const expected = expectedLabels(source, s.slot)
    const labels: Array<Problem> = expected === undefined
      ? [source.factor_a, source.factor_b].includes(s.context_factor)
        ? [{ field: `sessions[${i}].context_factor`, reason: `an "other" session must not use factor A or B ("${s.context_factor}")` }]
        : []
      : [
        ...(s.context_factor === expected.factor ? [] : [{
          field: `sessions[${i}].context_factor`,
          reason: `a "${s.slot}" session must have factor "${expected.factor}", found "${s.context_factor}"`
        }]),
        ...(s.contextual_preference === expected.preference ? [] : [{
          field: `sessions[${i}].contextual_preference`,
          reason: `a "${s.slot}" session must repeat its preference field exactly`
        }])
      ]
    return [...labels, ...dialogueProblems(i, s.dialogue)]
  })

const slotProblems = (source: SampleSource): Array<Problem> => {
  const problems: Array<Problem> = []
  for (const slot of Slot.literals) {
    const found = source.sessions.filter((s) => s.slot === slot).length
    if (found !== slotCounts[slot]) {
      problems.push({ field: "sessions", reason: `expected ${slotCounts[slot]} "${slot}" sessions, found ${found}` })
    }
  }
  const lastA = source.sessions.findLastIndex((s) => s.slot === "A")
  const firstChanged = source.sessions.findIndex((s) => s.slot === "A-changed")
  if (firstChanged >= 0 && firstChanged < lastA) {
    problems.push({ field: `sessions[${firstChanged}].slot`, reason: `"A-changed" sessions must come after both "A" sessions` })
  }
  const otherFactors = source.sessions.filter((s) => s.slot === "other").map((s) => s.context_factor)
  if (new Set(otherFactors).size !== otherFactors.length) {
    problems.push({ field: "sessions", reason: `the "other" sessions must each have a different factor` })
  }
  return problems
}

const dropProblems = (source: SampleSource, field: "drop_contrastive" | "drop_changing"): Array<Problem> => {
  const drop = source[field]
  if (drop.length !== 2 || drop[0] === drop[1]) {
    return [{ field, reason: `expected two different session indices, found [${drop.join(", ")}]` }]
  }
  return drop.flatMap((index, k) =>
    source.sessions[index]?.slot === "other"
      ? []
      : [{ field: `${field}[${k}]`, reason: `index ${index} must point at an "other" session (0-${source.sessions.length - 1})` }]
  )
}

/** Every way the source breaks the CUPID template; empty when it is sound. */
export const templateProblems = (source: SampleSource): ReadonlyArray<Problem> => {
  if (source.sessions.length !== sessionCount) {
    return [{ field: "sessions", reason: `expected ${sessionCount} prior sessions, found ${source.sessions.length}` }]
  }
  return [
    ...(source.factor_a === source.factor_b ? [{ field: "factor_b", reason: "must differ from factor_a" }] : []),
    ...(source.preference_a === source.preference_a_changed
      ? [{ field: "preference_a_changed", reason: "must differ from preference_a" }]
      : []),
    ...(source.preference_a === source.preference_b ? [{ field: "preference_b", reason: "must differ from preference_a" }] : []),
    ...checklistProblems("checklist_a", source.checklist_a),
    ...checklistProblems("checklist_a_changed", source.checklist_a_changed),
    ...slotProblems(source),
    ...sessionProblems(source),
    ...dropProblems(source, "drop_contrastive"),
    ...dropProblems(source, "drop_changing")
  ]
}

const problemError = (file: string, problems: ReadonlyArray<Problem>): DatasetError => {
  const [first, ...rest] = problems
  return new DatasetError({
    source: file,
    ...(first !== undefined ? { field: first.field } : {}),
    reason: (first?.reason ?? "invalid") + (rest.length > 0 ? ` (more problems at: ${[...new Set(rest.map((p) => p.field))].join(", ")})` : "")
  })
}

const decodeUnknown = Schema.decodeUnknownEither(SampleSource, { errors: "all", onExcessProperty: "error" })

/** Decode and check one source; errors name the file and the offending field. */
export const decode = (file: string, input: unknown): Either.Either<SampleSource, DatasetError> =>
  Either.flatMap(
    Either.mapLeft(decodeUnknown(input), (error) =>
      problemError(
        file,
        ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
          field: issue.path.length > 0 ? formatPath(issue.path) : "(root)",
          reason: issue.message
        }))
      )),
    (source) => {
      const problems = templateProblems(source)
      return problems.length === 0 ? Either.right(source) : Either.left(problemError(file, problems))
    }
  )

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((out, key) => typeof key === "number" ? `${out}[${key}]` : out === "" ? String(key) : `${out}.${String(key)}`, "")

/** Parse the text of a source file, then {@link decode} it. */
export const parse = (file: string, text: string): Either.Either<SampleSource, DatasetError> =>
  Either.flatMap(
    Either.try({
      try: (): unknown => JSON.parse(text),
      catch: (e) => new DatasetError({ source: file, reason: `not valid JSON: ${e instanceof Error ? e.message : String(e)}` })
    }),
    (json) => decode(file, json)
  )

export interface LoadedSource {
  /** The path the source was read from, as given to {@link loadDirectory} joined with the file name. */
  readonly file: string
  readonly source: SampleSource
}

/**
 * Read every `*.json` in a directory, sorted by file name, and check them. The file name must be the
 * persona id, so ids are unique and the sample's persona order is the sorted file order.
 */
export const loadDirectory = Effect.fn("Sample.loadDirectory")(function*(directory: string) {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const names = yield* fs.readDirectory(directory).pipe(
    Effect.mapError((e) => new DatasetError({ source: directory, reason: `cannot list the directory: ${e.message}` }))
  )
  const loaded: Array<LoadedSource> = []
  for (const name of names.filter((n) => n.endsWith(".json")).sort()) {
    const file = path.join(directory, name)
    const text = yield* fs.readFileString(file).pipe(
      Effect.mapError((e) => new DatasetError({ source: file, reason: `cannot read the file: ${e.message}` }))
    )
    const source = yield* parse(file, text)
    if (`${source.persona_id}.json` !== name) {
      return yield* new DatasetError({
        source: file,
        field: "persona_id",
        reason: `must match the file name ("${name.slice(0, -".json".length)}"), found "${source.persona_id}"`
      })
    }
    loaded.push({ file, source })
  }
  if (loaded.length === 0) {
    return yield* new DatasetError({ source: directory, reason: "no *.json persona sources found" })
  }
  return loaded
})
