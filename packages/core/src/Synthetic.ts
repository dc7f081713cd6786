/**
 * A seeded procedural generator of CUPID-shaped data, for tests, benchmarks and scaling studies
 * (histories of 8 to 10,000 sessions). It follows CUPID's 13-session template per persona: two
 * sessions with factor A and preference pA, two with A and a changed preference pA', two with a
 * similar-sounding contrastive factor B of the same kind whose preference conflicts with pA, the
 * rest with the persona's other factors, and a current request about A. The three instances of a
 * persona are cut from that pool (consistent, contrastive, changing), so they share session text
 * just as the released data does. Same options, same bytes.
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
import { type CupidRow, InstanceType, instanceTypes } from "./Domain.js"
import { DatasetError } from "./Errors.js"
import { canonicalJson, sha256Hex } from "./Hash.js"
import { personaRows, specialCounts } from "./internal/dataset/synthetic/world.js"

/** Bumped whenever the generated text changes, so fingerprints of synthetic sources change with it. */
export const version = 1

export const RelevantPosition = Schema.Literal("spread", "early", "late", "recent")
export type RelevantPosition = typeof RelevantPosition.Type

const int = (lo: number, hi: number) =>
  Schema.Int.pipe(Schema.between(lo, hi, { message: () => `expected an integer from ${lo} to ${hi}` }))
const share = Schema.Number.pipe(Schema.between(0, 0.75, { message: () => "expected a number from 0 to 0.75" }))

export const Options = Schema.Struct({
  /** Personas; each yields one row per requested instance type. */
  personas: Schema.optionalWith(int(1, 10_000_000), { default: () => 10 }),
  /** Prior sessions per instance: 8 reproduces CUPID's shape. */
  sessionsPerHistory: Schema.optionalWith(int(8, 10_000), { default: () => 8 }),
  seed: Schema.optionalWith(int(0, Number.MAX_SAFE_INTEGER), { default: () => 0 }),
  /** Where the two relevant sessions sit: anywhere, first third, last third, or the last two. */
  relevantPosition: Schema.optionalWith(RelevantPosition, { default: () => "spread" as const }),
  /** Contrastive (B) sessions in a contrastive history: max(2, round(share x sessions)). */
  contrastiveShare: Schema.optionalWith(share, { default: () => 0.1 }),
  /** Stale sessions in a changing history: max(2, round(share x sessions)). */
  staleShare: Schema.optionalWith(share, { default: () => 0.1 }),
  types: Schema.optionalWith(Schema.NonEmptyArray(InstanceType), { default: () => ["consistent", "contrastive", "changing"] as const })
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
export function* generate(options: Options): Generator<CupidRow> {
  const checked = validate(options)
  if (Either.isLeft(checked)) {
    const p = problem(checked.left)
    throw new RangeError(`Synthetic.generate: ${p.field}: ${p.message}`)
  }
  const settings = {
    ...options,
    types: instanceTypes.filter((t) => options.types.includes(t))
  }
  for (let i = 0; i < options.personas; i++) yield* personaRows(settings, i)
}

/** Number of special sessions per history for these options (for reports and docs). */
export const counts = (options: Options): { readonly relevant: number; readonly contrastive: number; readonly stale: number } => ({
  relevant: 2,
  ...specialCounts(options)
})

const specKeys = {
  personas: "personas",
  sessions: "sessionsPerHistory",
  seed: "seed",
  position: "relevantPosition",
  contrastive: "contrastiveShare",
  stale: "staleShare",
  types: "types"
} as const
type SpecKey = keyof typeof specKeys
const specKeyOf = Object.fromEntries(Object.entries(specKeys).map(([k, v]) => [v, k])) as Record<string, SpecKey>

/**
 * Options from a source string `synthetic:<key>=<value>,...` with keys personas, sessions, seed,
 * position, contrastive, stale, types (types joined by `+`, e.g. `types=consistent+changing`).
 * `synthetic` alone means the defaults.
 */
export const parseSpec = (source: string): Either.Either<Options, DatasetError> => {
  const fail = (reason: string, field?: string) =>
    Either.left(new DatasetError(field === undefined ? { source, reason } : { source, field, reason }))
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
    raw[name] = name === "types" ? value.split("+") : name === "relevantPosition" ? value : value === "" ? Number.NaN : Number(value)
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
    `types=${instanceTypes.filter((t) => options.types.includes(t)).join("+")}`
  ].join(",")

/** Identifies the generated dataset: SHA-256 of the generator version and the options. */
export const fingerprint = (options: Options): string =>
  sha256Hex(canonicalJson({ generator: version, options: { ...options, types: instanceTypes.filter((t) => options.types.includes(t)) } }))

/**
 * Writes rows as JSON lines (written to a temporary file, then renamed into place). Rows are pulled
 * one at a time, so a lazy `generate` never holds the dataset in memory. Succeeds with the row count.
 */
export const writeJsonl = (file: string, rows: Iterable<CupidRow>): Effect.Effect<number, DatasetError> =>
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
    catch: (e) => new DatasetError({ source: file, reason: `cannot write (${e instanceof Error ? e.message : String(e)})` })
  }).pipe(Effect.withSpan("Synthetic.writeJsonl"))
