import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { CommandIo, given, outputs, runDirectory, runOption } from "./Io.js"

export const command = Command.make(
  "report",
  {
    run: runOption,
    baseline: Options.text("baseline").pipe(
      Options.withPseudoName("cell"),
      Options.optional,
      Options.withDescription(
        "the cell the report's differences are measured against: id, id prefix, exact name, or @k for the k-th cell (default: the run's baseline)"
      )
    ),
    main: Options.text("main").pipe(
      Options.withPseudoName("metric"),
      Options.optional,
      Options.withDescription(
        "the report's main metric (default: the config's report.main, else an exact metric chosen from the scorers' declarations)"
      )
    )
  },
  Effect.fn("Report.command")(function* (a) {
    const io = yield* CommandIo
    const Report = yield* Effect.promise(() => import("@cupid-lab/report").then((m) => m.Report))
    const dir = yield* runDirectory(a.run)
    yield* Report.write(dir, given({ baseline: a.baseline, main: a.main }))
    io.stdout(outputs(dir))
  })
).pipe(
  Command.withDescription(
    "rewrite report.md, report.html, report.tex, results.csv and results.parquet of a run directory from its results and summary"
  )
)
