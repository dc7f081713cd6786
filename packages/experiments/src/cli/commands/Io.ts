import { HelpDoc, Options, ValidationError } from "@effect/cli"
import type { FileSystem } from "@effect/platform"
import { Console, Context, Effect, type Option, Record as Rec } from "effect"
import * as path from "node:path"
import { Domain, type ProgressLine } from "@cupid-lab/core"
import type { Runner } from "@cupid-lab/runner"

/** Where a command writes, where it finds configs, and (for tests) the runner's plugins. */
export interface Io {
  /** Directories a bare `--config` name is looked up in, in order. */
  readonly configDirs: ReadonlyArray<string>
  readonly stdout: (text: string) => void
  readonly stderr: ProgressLine.Sink
  /** Default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  readonly runner?: Pick<Runner.Options, "plugins" | "openDataset">
  readonly color?: boolean
}

export class CommandIo extends Context.Tag("@cupid-lab/experiments/CommandIo")<CommandIo, Io>() {}

/** A usage problem found after parsing: shown like the parser's own, and exit code 2. */
export const usage = (message: string): Effect.Effect<never, ValidationError.ValidationError> =>
  Effect.zipRight(Console.error(`${message}\n`), Effect.fail(ValidationError.invalidArgument(HelpDoc.p(message))))

export const runDirectory = (dir: string) =>
  Effect.flatMap(
    Effect.promise(() => import("@cupid-lab/results").then((m) => m.RunId)),
    (RunId) => RunId.resolve(dir)
  )

/** An option value the parser rejects with `message` (exit code 2). */
export const invalid = (message: string): Effect.Effect<never, ValidationError.ValidationError> =>
  Effect.fail(ValidationError.invalidValue(HelpDoc.p(message)))

export const positive =
  (flag: string) =>
  (n: number): Effect.Effect<number, ValidationError.ValidationError> =>
    Number.isInteger(n) && n >= 1 ? Effect.succeed(n) : invalid(`--${flag} expects a whole number >= 1, got "${n}"`)

/** The options given, without those left out: `{ out: Option.some("x"), data: Option.none() }` -> `{ out: "x" }`. */
export const given = <O extends Readonly<Record<string, Option.Option<unknown>>>>(options: O) =>
  Rec.getSomes<string, unknown>(options) as { readonly [K in keyof O]?: Option.Option.Value<O[K]> }

export const outputs = (dir: string): string =>
  `report: ${path.join(dir, "report.md")}\nreport: ${path.join(dir, "report.html")}\nresults: ${path.join(dir, "results.csv")}\nresults: ${path.join(dir, "results.parquet")}\n`

export const logTo =
  (io: Io) =>
  (text: string): void =>
    void io.stderr.write(`${text}\n`)

/** `--run`: a run directory. */
export const runOption = Options.text("run").pipe(
  Options.withPseudoName("dir"),
  Options.withDescription("a run directory (the out of a sweep), e.g. runs/<name>/latest")
)

export const configOption = (description: string) =>
  Options.text("config").pipe(Options.withPseudoName("file | name"), Options.withDescription(description))

export const countOption = (flag: string, description: string) =>
  Options.integer(flag).pipe(
    Options.withPseudoName("n"),
    Options.mapEffect(positive(flag)),
    Options.optional,
    Options.withDescription(description)
  )

export const outOption = (description: string) =>
  Options.text("out").pipe(Options.withPseudoName("dir"), Options.optional, Options.withDescription(description))

export const dataOption = (description: string) =>
  Options.text("data").pipe(Options.withPseudoName("source"), Options.optional, Options.withDescription(description))

/** The file a `--config` value names (a bare name is looked up in the config directories), relative to the working directory when under it. */
export const configFile = Effect.fn("Io.configFile")(function* (
  given: string
): Effect.fn.Return<string, never, CommandIo | FileSystem.FileSystem> {
  const io = yield* CommandIo
  const { resolveFile } = yield* Effect.promise(() => import("@cupid-lab/runner").then((m) => m.Config))
  const resolved = yield* Effect.reduce(io.configDirs, given, (found, dir) =>
    found === given ? resolveFile(given, dir) : Effect.succeed(found)
  )
  const relative = path.relative(process.cwd(), resolved)
  return path.isAbsolute(resolved) && !relative.startsWith("..") && relative !== "" ? relative : resolved
})

const isType = (t: string): t is Domain.CupidType => (Domain.cupidTypes as ReadonlyArray<string>).includes(t)

const parseTypes = (value: string) => {
  const given = value
    .split(",")
    .map((t) => t.trim())
    .filter((t) => t !== "")
  const bad = given.filter((t) => !isType(t))
  return bad.length > 0 || given.length === 0
    ? invalid(
        `--types: unknown instance type ${bad.map((b) => `"${b}"`).join(", ") || "(none given)"}; valid choices: ${Domain.cupidTypes.join(", ")}`
      )
    : Effect.succeed(given.filter(isType))
}

/** `--types t,...`: CUPID instance types, checked when parsed. */
export const typesOption = (description: string) =>
  Options.text("types").pipe(
    Options.withPseudoName("t,..."),
    Options.mapEffect(parseTypes),
    Options.optional,
    Options.withDescription(`${description}, comma-separated: ${Domain.cupidTypes.join(", ")}`)
  )
