import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { CommandIo, invalid, logTo, outOption, runDirectory, usage } from "./Io.js"

const twoRuns = (value: string) => {
  const runs = value
    .split(",")
    .map((r) => r.trim())
    .filter((r) => r !== "")
  const [first, second] = runs
  return runs.length === 2 && first !== undefined && second !== undefined
    ? Effect.succeed({ first, second })
    : invalid("compare needs --runs <first run>,<second run> (two run directories)")
}

export const command = Command.make(
  "compare",
  {
    runs: Options.text("runs").pipe(
      Options.withPseudoName("first,second"),
      Options.mapEffect(twoRuns),
      Options.withDescription("two run directories, comma-separated, compared cell by cell on the instances both ran")
    ),
    a: Options.text("cell-a").pipe(
      Options.withAlias("a"),
      Options.withPseudoName("cell"),
      Options.optional,
      Options.withDescription(
        "a cell of the first run (id, id prefix, exact name, or @k for the k-th cell); with --cell-b, compare just this pair"
      )
    ),
    b: Options.text("cell-b").pipe(
      Options.withAlias("b"),
      Options.withPseudoName("cell"),
      Options.optional,
      Options.withDescription(
        "a cell of the second run, compared with --cell-a's (the same run may be given twice to compare two of its cells)"
      )
    ),
    out: outOption("where compare.md and compare.html go (default: compare-<first>-vs-<second> beside the second run)"),
    allowMismatch: Options.boolean("allow-mismatch").pipe(
      Options.withDescription(
        "compare runs that differ in what makes numbers comparable (the data's fingerprint, metric definitions, the scorers' settings, accounting mode, prompt packs, judge and matcher models) instead of refusing them; compare.md then opens with the table of differences"
      )
    )
  },
  Effect.fn("Compare.command")(function* (a) {
    const io = yield* CommandIo
    if (Option.isSome(a.a) !== Option.isSome(a.b))
      return yield* usage("--cell-a and --cell-b go together: one cell of each run")
    const Compare = yield* Effect.promise(() => import("@cupid-lab/report").then((m) => m.Compare))
    const cells = Option.isSome(a.a) && Option.isSome(a.b) ? { cells: { a: a.a.value, b: a.b.value } } : {}
    const files = yield* Compare.write(
      yield* runDirectory(a.runs.first),
      yield* runDirectory(a.runs.second),
      Option.getOrUndefined(a.out),
      { ...cells, allowMismatch: a.allowMismatch }
    )
    const differing = [...new Set(files.differences.filter((d) => d.kind === "differs").map((d) => d.field))]
    if (differing.length > 0)
      logTo(io)(
        `warning: the runs differ in ${differing.join(", ")}; compared anyway (--allow-mismatch): the table of differences opens ${files.markdown}`
      )
    io.stdout(`compare: ${files.markdown}\ncompare: ${files.html}\n`)
  })
).pipe(Command.withDescription("compare two runs cell by cell on their shared instances, with paired differences"))
