import { HelpDoc, Options, ValidationError } from "@effect/cli"
import type { FileSystem } from "@effect/platform"
import { Console, Context, Data, Effect } from "effect"
import * as path from "node:path"
import type * as Progress from "../../run/Progress.js"
import type * as Runner from "../../run/Runner.js"

/** Where a command writes, where it finds configs, and (for tests) the runner's plugins. */
export interface Io {
  /** Directories a bare `--config` name is looked up in, in order. */
  readonly configDirs: ReadonlyArray<string>
  readonly stdout: (text: string) => void
  /** Notices, errors and the progress bar (a terminal gets a live bar). */
  readonly stderr: Progress.Sink
  /** The environment configs read (`apiKeyEnv`, `${VAR}`); default `process.env`. */
  readonly env?: Readonly<Record<string, string | undefined>>
  /** Test seam: default `Runner` options with every package's built-ins. */
  readonly runner?: Runner.Options
  /** Keep the ANSI styling of help and parse errors (default false: plain text). */
  readonly color?: boolean
}

export class CommandIo extends Context.Tag("@cupid-lab/experiments/CommandIo")<CommandIo, Io>() {}

/**
 * A usage problem found after parsing: shown like the parser's own, then a `ValidationError`, which
 * the CLI turns into exit code 2. Every `ValidationError` a command fails with has been shown.
 */
export const usage = (message: string): Effect.Effect<never, ValidationError.ValidationError> =>
  Effect.zipRight(Console.error(`${message}\n`), Effect.fail(ValidationError.invalidArgument(HelpDoc.p(message))))

/**
 * A run directory named on the command line, with a `latest` file followed and a config's directory
 * of runs refused (see RunId.resolve).
 */
export const runDirectory = (dir: string) => Effect.flatMap(Effect.promise(() => import("../../run/RunId.js")), (RunId) => RunId.resolve(dir))

/** An option value the parser rejects with `message` (exit code 2). */
export const invalid = (message: string): Effect.Effect<never, ValidationError.ValidationError> =>
  Effect.fail(ValidationError.invalidValue(HelpDoc.p(message)))

/** A whole number >= 1, with the message the CLI has always given. */
export const positive = (flag: string) => (n: number): Effect.Effect<number, ValidationError.ValidationError> =>
  Number.isInteger(n) && n >= 1 ? Effect.succeed(n) : invalid(`--${flag} expects a whole number >= 1, got "${n}"`)

/** A sweep that finished with too many failed pairs (all of them, or more than `--max-failed-share`): exit code 3. */
export class TooManyFailures extends Data.TaggedError("TooManyFailures")<{ readonly message: string }> {}

/** The exit code of a sweep whose outputs are written but whose pairs failed beyond what was allowed. */
export const failuresExitCode = 3

/** The exit code of a sweep the budget refused before any work, or stopped with the pairs done written. */
export const budgetExitCode = 4

/** `--config <file | name>`, as every command that reads a config takes it. */
export const configOption = (description: string) =>
  Options.text("config").pipe(Options.withPseudoName("file | name"), Options.withDescription(description))

/** `--<flag> <n>`, an optional whole number >= 1. */
export const countOption = (flag: string, description: string) =>
  Options.integer(flag).pipe(Options.withPseudoName("n"), Options.mapEffect(positive(flag)), Options.optional, Options.withDescription(description))

/** `--out <dir>`, optional. */
export const outOption = (description: string) =>
  Options.text("out").pipe(Options.withPseudoName("dir"), Options.optional, Options.withDescription(description))

/**
 * The file a `--config` value names: a bare name is looked up in the command's config directories;
 * shown as a path from the working directory when it is under it (messages name the file so).
 */
export const configFile = (given: string): Effect.Effect<string, never, CommandIo | FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const io = yield* CommandIo
    const { resolveFile } = yield* Effect.promise(() => import("../../config/Config.js"))
    const resolved = yield* Effect.reduce(io.configDirs, given, (found, dir) => (found === given ? resolveFile(given, dir) : Effect.succeed(found)))
    const relative = path.relative(process.cwd(), resolved)
    return path.isAbsolute(resolved) && !relative.startsWith("..") && relative !== "" ? relative : resolved
  })
