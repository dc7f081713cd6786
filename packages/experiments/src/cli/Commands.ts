/**
 * The cupid-lab command line on `@effect/cli`: one command per file in `commands/` (plus core's
 * `data`), and `main`, which runs an argument list to an exit code: 0 done, 1 an error, 2 a usage
 * error, 3 too many failed pairs, 4 the budget; interruption is left to the caller.
 *
 * @example
 * const code = yield* Commands.main(["sweep", "--config", "smoke"], io)
 */
import { CliConfig, Command, HelpDoc, ValidationError } from "@effect/cli"
import * as Descriptor from "@effect/cli/CommandDescriptor"
import type * as Usage from "@effect/cli/Usage"
import { Issues } from "@cupid-lab/core"
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeTerminal from "@effect/platform-node/NodeTerminal"
import { command as data } from "./commands/Data.js"
import { Console, Effect, HashMap, HashSet, Layer, Predicate } from "effect"
import * as Batches from "./commands/Batches.js"
import * as Compare from "./commands/Compare.js"
import * as Errors from "./commands/Errors.js"
import * as Export from "./commands/Export.js"
import { CommandIo, type Io, usage } from "./commands/Io.js"
import * as Merge from "./commands/Merge.js"
import * as Report from "./commands/Report.js"
import * as Score from "./commands/Score.js"
import * as Sweep from "./commands/Sweep.js"
import * as Synthesize from "./commands/Synthesize.js"
import * as View from "./commands/View.js"

export type { Io } from "./commands/Io.js"

const commands = [
  Sweep.command,
  Merge.command,
  Score.command,
  Batches.command,
  Report.command,
  Compare.command,
  Export.command,
  Errors.command,
  View.command,
  Synthesize.command,
  data
] as const

const descriptors: ReadonlyArray<Descriptor.Command<unknown>> = commands.map((c) => c.descriptor)

const names = descriptors.flatMap((d) => [...HashSet.values(Descriptor.getNames(d))])

const root = Command.make("cupid-lab", {}, () => usage(`name a command: ${names.join(", ")}`)).pipe(
  Command.withDescription(
    "Run CUPID experiments: sweep a config, rewrite or compare reports, code errors, inspect and make datasets. Every command takes --help."
  ),
  Command.withSubcommands(commands)
)

/** The commands an argument list names, as far as they exist: `data inspect` of `data inspect --x`. */
const commandPath = (argv: ReadonlyArray<string>): Array<string> => {
  const [first, second] = argv
  const top = descriptors.find((d) => first !== undefined && HashSet.has(Descriptor.getNames(d), first))
  if (top === undefined || first === undefined) return []
  // A command without subcommands lists itself as its only one.
  return second !== undefined && second !== first && HashMap.has(Descriptor.getSubcommands(top), second)
    ? [first, second]
    : [first]
}

/** Every `--flag` a usage names. */
const flagsOf = (u: Usage.Usage): Array<string> => {
  switch (u._tag) {
    case "Named":
      return u.names.filter((n) => n.startsWith("--"))
    case "Optional":
    case "Repeated":
      return flagsOf(u.usage)
    case "Alternation":
    case "Concat":
      return [...flagsOf(u.left), ...flagsOf(u.right)]
    default:
      return []
  }
}

/** `did you mean '--limit'?` for a flag the named command does not have (the parser suggests only for some). */
const flagHint = (argv: ReadonlyArray<string>, named: ReadonlyArray<string>): string | undefined => {
  const top = descriptors.find((d) => HashSet.has(Descriptor.getNames(d), named[0] ?? ""))
  if (top === undefined) return undefined
  const sub = named[1] === undefined ? undefined : HashMap.get(Descriptor.getSubcommands(top), named[1])
  const d = sub !== undefined && sub._tag === "Some" ? sub.value : top
  const flags = [...flagsOf(Descriptor.getUsage(d)), "--help"]
  for (const arg of argv) {
    const flag = arg.split("=")[0]!
    if (!flag.startsWith("--") || flags.includes(flag)) continue
    const close = Issues.suggest(
      flag.slice(2),
      flags.map((f) => f.slice(2))
    )
    if (close !== undefined) return `the flag '${flag}' is not one of ${named.join(" ")}'s: did you mean '--${close}'?`
  }
  return undefined
}

const cli = Command.run(root, { name: "cupid-lab", version: "0.1.0", executable: "cupid-lab" })

// eslint-disable-next-line no-control-regex
const ansi = /\u001b\[[0-9;]*m/g

const text = (args: ReadonlyArray<unknown>, color: boolean) => {
  const s = args.map(String).join(" ")
  return `${color ? s : s.replace(ansi, "")}\n`
}

/** The Effect console of a command: help and parse errors go where the command's output goes. */
const consoleOf = (io: Io) =>
  Effect.map(Effect.console, (base): Console.Console => {
    const log = (...args: ReadonlyArray<unknown>) => io.stdout(text(args, io.color === true))
    const error = (...args: ReadonlyArray<unknown>) => void io.stderr.write(text(args, io.color === true))
    const out = (...args: ReadonlyArray<unknown>) => Effect.sync(() => log(...args))
    const err = (...args: ReadonlyArray<unknown>) => Effect.sync(() => error(...args))
    return { ...base, log: out, info: out, error: err, warn: err, unsafe: { ...base.unsafe, log, error } }
  })

const platform = Layer.mergeAll(
  NodeFileSystem.layer,
  NodePath.layer,
  NodeTerminal.layer,
  CliConfig.layer({ showBuiltIns: false })
)

const messageOf = (e: unknown): string =>
  e instanceof Error ? e.message : typeof e === "object" && e !== null && "message" in e ? String(e.message) : String(e)

export const main = Effect.fn("Commands.main")(function* (
  argv: ReadonlyArray<string>,
  io: Io
): Effect.fn.Return<number> {
  const console = yield* consoleOf(io)
  return yield* cli(["node", "cupid-lab", ...Errors.spelledArgs(argv)]).pipe(
    Effect.as(0),
    Effect.catchAll((e) =>
      Effect.sync(() => {
        // The parser (or Io.usage) has shown a ValidationError already.
        if (ValidationError.isValidationError(e)) {
          const named = commandPath(argv)
          const hint = /did you mean/i.test(HelpDoc.toAnsiText(e.error)) ? undefined : flagHint(argv, named)
          if (hint !== undefined) io.stderr.write(`${hint}\n`)
          io.stderr.write(`(cupid-lab ${[...named, "--help"].join(" ")} lists the options)\n`)
          return 2
        }
        io.stderr.write(`error: ${messageOf(e)}\n`)
        return Predicate.isTagged(e, "TooManyFailures") ? 3 : Predicate.isTagged(e, "BudgetError") ? 4 : 1
      })
    ),
    Effect.catchAllDefect((defect) => Effect.sync(() => (io.stderr.write(`error: ${messageOf(defect)}\n`), 1))),
    Effect.provide(platform),
    Effect.provideService(CommandIo, io),
    Effect.withConsole(console)
  )
})
