/**
 * A seeded procedural generator of CUPID-shaped data, for tests, benchmarks and scaling studies
 * (histories of 8 to 10,000 sessions). It follows CUPID's 13-session template per persona: two
 * sessions with factor A and preference pA, two with A and a changed preference pA', two with a
 * similar-sounding contrastive factor B of the same kind whose preference conflicts with pA, the
 * rest with the persona's other factors, and a current request about A. The three instances of a
 * persona are cut from that pool (consistent, contrastive, changing), so they share session text
 * just as the released data does. Same options, same bytes. `difficulty=hard` (the default) adds
 * varied factor mentions, a topic phrase shared across factors, composed feedback and 1-3 relevant
 * sessions; `difficulty=easy` is the original, artifact-rich text.
 *
 * What it does not model (real language variety, aliases, implicit mentions, ...) is listed in
 * docs/data.md.
 *
 * @example
 * import { Synthetic } from "@cupid-lab/core"
 * const rows = [...Synthetic.generate({ ...Synthetic.defaults, personas: 2, seed: 7 })] // 6 rows
 * yield* Synthetic.writeJsonl("/tmp/synthetic.jsonl", Synthetic.generate({ ...Synthetic.defaults, personas: 100 }))
 */
import * as fs from "node:fs/promises"
import { randomUUID } from "node:crypto"
import { Effect, Either, ParseResult, Schema } from "effect"
import { Domain, Errors, Hash } from "@cupid-lab/core"

import { type Knobs, personaRows, specialCounts } from "./internal/synthetic/world.js"

/** Bumped whenever the generated text changes, so fingerprints of synthetic sources change with it. */
export const version = 2

/** `hard` (default) imitates LLM-written histories; `easy` is the version-1 generator, for speed and scale tests. */
export const Difficulty = Schema.Literal("easy", "hard")
export type Difficulty = typeof Difficulty.Type

export const RelevantPosition = Schema.Literal("spread", "early", "late", "recent")
export type RelevantPosition = typeof RelevantPosition.Type

const int = (lo: number, hi: number) =>
  Schema.Int.pipe(Schema.between(lo, hi, { message: () => `expected an integer from ${lo} to ${hi}` }))
const share = Schema.Number.pipe(Schema.between(0, 0.75, { message: () => "expected a number from 0 to 0.75" }))
const unit = Schema.Number.pipe(Schema.between(0, 1, { message: () => "expected a number from 0 to 1" }))
const RelevantRange = Schema.Tuple(int(1, 3), int(1, 3)).pipe(
  Schema.filter(([lo, hi]) => lo <= hi || "expected a range lo-hi with lo <= hi, within 1-3")
)

export const Options = Schema.Struct({
  /** Personas; each yields one row per requested instance type. */
  personas: Schema.optionalWith(int(1, 10_000_000), { default: () => 10 }),
  /** Prior sessions per instance: 8 reproduces CUPID's shape. */
  sessionsPerHistory: Schema.optionalWith(int(8, 10_000), { default: () => 8 }),
  seed: Schema.optionalWith(int(0, Number.MAX_SAFE_INTEGER), { default: () => 0 }),
  /** Where the two relevant sessions sit (anywhere, first third, last third, or the last two). */
  relevantPosition: Schema.optionalWith(RelevantPosition, { default: () => "spread" as const }),
  /** Contrastive (B) sessions in a contrastive history: max(2, round(share x sessions)). */
  contrastiveShare: Schema.optionalWith(share, { default: () => 0.1 }),
  /** Stale sessions in a changing history: max(2, round(share x sessions)). */
  staleShare: Schema.optionalWith(share, { default: () => 0.1 }),
  types: Schema.optionalWith(Schema.NonEmptyArray(Domain.CupidType), {
    default: () => ["consistent", "contrastive", "changing"] as const
  }),
  /** Sets the defaults of the knobs below (docs/data.md, "Difficulty"). */
  difficulty: Schema.optionalWith(Difficulty, { default: () => "hard" as const }),
  /** `exact`: the factor label in every opening message; `varied`: aliases, often mid-message. */
  mentions: Schema.optionalWith(Schema.Literal("exact", "varied"), { exact: true }),
  /** Share of sessions of other factors that mention the persona's recurring topic phrase (0: none). */
  topicShare: Schema.optionalWith(unit, { exact: true }),
  /** `fixed` complaint strings, or `composed` from lead-ins, paraphrased cores and follow-ups. */
  feedback: Schema.optionalWith(Schema.Literal("fixed", "composed"), { exact: true }),
  /** Relevant sessions per instance: drawn per persona from [lo, hi]. */
  relevant: Schema.optionalWith(RelevantRange, { exact: true }),
  /** Probability that B is one of A's most similar factors (its own category). */
  similarity: Schema.optionalWith(unit, { exact: true })
})
export type Options = typeof Options.Type

export const defaults: Options = Schema.decodeSync(Options)({})

const validate = Schema.validateEither(Schema.typeSchema(Options))

const problem = (e: ParseResult.ParseError): { readonly field: string; readonly message: string } => {
  const first = ParseResult.ArrayFormatter.formatErrorSync(e)[0]
  return { field: first?.path.map(String).join(".") ?? "", message: first?.message ?? "invalid options" }
}

/**
 * The rows of the generated dataset, lazily: persona after persona, in type order consistent,
 * contrastive, changing. Throws a RangeError for options outside their documented ranges.
 */
export function* generate(options: Options): Generator<Domain.CupidRow> {
  const checked = validate(options)
  if (Either.isLeft(checked)) {
    const p = problem(checked.left)
    throw new RangeError(`Synthetic.generate: ${p.field}: ${p.message}`)
  }
  const settings = {
    ...options,
    types: Domain.cupidTypes.filter((t) => options.types.includes(t)),
    knobs: knobs(options)
  }
  for (let i = 0; i < options.personas; i++) yield* personaRows(settings, i)
}

const knobDefaults: Readonly<Record<Difficulty, Knobs>> = {
  easy: { mentions: "exact", topicShare: 0, feedback: "fixed", relevant: [2, 2], similarity: 1 },
  hard: { mentions: "varied", topicShare: 0.35, feedback: "composed", relevant: [1, 3], similarity: 1 }
}

/** The option names of the difficulty knobs (what `data generate --spec` may set besides its own flags). */
export const knobKeys: ReadonlyArray<string> = ["mentions", "topicShare", "feedback", "relevant", "similarity"]

/** The knobs in force: the difficulty's defaults, overridden by any knob given. */
export const knobs = (options: Options): Knobs => {
  const d = knobDefaults[options.difficulty]
  return {
    mentions: options.mentions ?? d.mentions,
    topicShare: options.topicShare ?? d.topicShare,
    feedback: options.feedback ?? d.feedback,
    relevant: options.relevant ?? d.relevant,
    similarity: options.similarity ?? d.similarity
  }
}

/** Number of special sessions per history for these options (for reports and docs); relevant as a range. */
export const counts = (
  options: Options
): { readonly relevant: readonly [number, number]; readonly contrastive: number; readonly stale: number } => ({
  relevant: knobs(options).relevant,
  ...specialCounts(options)
})

const specKeys = {
  personas: "personas",
  sessions: "sessionsPerHistory",
  seed: "seed",
  position: "relevantPosition",
  contrastive: "contrastiveShare",
  stale: "staleShare",
  types: "types",
  difficulty: "difficulty",
  mentions: "mentions",
  topic: "topicShare",
  feedback: "feedback",
  relevant: "relevant",
  similarity: "similarity"
} as const
type SpecKey = keyof typeof specKeys
const specKeyOf = Object.fromEntries(Object.entries(specKeys).map(([k, v]) => [v, k])) as Record<string, SpecKey>

/**
 * Options from a source string `synthetic:<key>=<value>,...` with keys personas, sessions, seed,
 * position, contrastive, stale, types (types joined by `+`, e.g. `types=consistent+changing`).
 * `synthetic` alone means the defaults.
 */
export const parseSpec = (source: string): Either.Either<Options, Errors.DatasetError> => {
  const fail = (reason: string, field?: string) =>
    Either.left(new Errors.DatasetError(field === undefined ? { source, reason } : { source, field, reason }))
  const match = /^synthetic(?::(.*))?$/.exec(source)
  if (match === null) return fail("expected synthetic:<key>=<value>,... e.g. synthetic:personas=100,sessions=50,seed=3")
  const raw: Record<string, unknown> = {}
  for (const pair of (match[1] ?? "").split(",").filter((p) => p.trim() !== "")) {
    const eq = pair.indexOf("=")
    const key = (eq < 0 ? pair : pair.slice(0, eq)).trim()
    if (!(key in specKeys)) {
      return fail(`unknown key "${key}"; valid keys: ${Object.keys(specKeys).join(", ")}`)
    }
    if (eq < 0) return fail(`expected ${key}=<value>`, key)
    const value = pair.slice(eq + 1).trim()
    const name = specKeys[key as SpecKey]
    raw[name] =
      name === "types"
        ? value.split("+")
        : name === "relevant"
          ? /^\d+$/.test(value)
            ? [Number(value), Number(value)]
            : /^\d+-\d+$/.test(value)
              ? value.split("-").map(Number)
              : value
          : ["relevantPosition", "difficulty", "mentions", "feedback"].includes(name)
            ? value
            : value === ""
              ? Number.NaN
              : Number(value)
  }
  const decoded = Schema.decodeUnknownEither(Options)(raw)
  if (Either.isLeft(decoded)) {
    const p = problem(decoded.left)
    return fail(p.message, specKeyOf[p.field.split(".")[0]!] ?? p.field)
  }
  return Either.right(decoded.right)
}

/** The canonical source string of these options (every key spelled out), e.g. for `Dataset.Opened.resolved`. */
export const toSpec = (options: Options): string =>
  "synthetic:" +
  [
    `personas=${options.personas}`,
    `sessions=${options.sessionsPerHistory}`,
    `seed=${options.seed}`,
    `position=${options.relevantPosition}`,
    `contrastive=${options.contrastiveShare}`,
    `stale=${options.staleShare}`,
    `types=${Domain.cupidTypes.filter((t) => options.types.includes(t)).join("+")}`,
    `difficulty=${options.difficulty}`,
    ...(options.mentions !== undefined ? [`mentions=${options.mentions}`] : []),
    ...(options.topicShare !== undefined ? [`topic=${options.topicShare}`] : []),
    ...(options.feedback !== undefined ? [`feedback=${options.feedback}`] : []),
    ...(options.relevant !== undefined ? [`relevant=${options.relevant[0]}-${options.relevant[1]}`] : []),
    ...(options.similarity !== undefined ? [`similarity=${options.similarity}`] : [])
  ].join(",")

/** Identifies the generated dataset: SHA-256 of the generator version and the options. */
export const fingerprint = (options: Options): string =>
  Hash.sha256Hex(
    Hash.canonicalJson({
      generator: version,
      options: { ...options, types: Domain.cupidTypes.filter((t) => options.types.includes(t)) }
    })
  )

/**
 * Writes rows as JSON lines (written to a temporary file, then renamed into place). Rows are pulled
 * one at a time, so a lazy `generate` never holds the dataset in memory. Succeeds with the row count.
 */
export const writeJsonl = (file: string, rows: Iterable<Domain.CupidRow>): Effect.Effect<number, Errors.DatasetError> =>
  Effect.tryPromise({
    try: async () => {
      const tmp = `${file}.${process.pid}.${randomUUID()}.part`
      const handle = await fs.open(tmp, "w")
      let count = 0
      try {
        let buffer = ""
        for (const row of rows) {
          buffer += JSON.stringify(row) + "\n"
          count++
          if (buffer.length >= 1 << 20) {
            await handle.write(buffer)
            buffer = ""
          }
        }
        if (buffer !== "") await handle.write(buffer)
      } catch (e) {
        await handle.close()
        await fs.rm(tmp, { force: true })
        throw e
      }
      await handle.close()
      await fs.rename(tmp, file)
      return count
    },
    catch: (e) =>
      new Errors.DatasetError({ source: file, reason: `cannot write (${e instanceof Error ? e.message : String(e)})` })
  }).pipe(Effect.withSpan("Synthetic.writeJsonl"))
