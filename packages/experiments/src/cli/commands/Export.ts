import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { CommandIo, runDirectory, runOption } from "./Io.js"

export const command = Command.make(
  "export",
  {
    run: runOption,
    format: Options.choice("format", ["trec"]).pipe(
      Options.withDefault("trec" as const),
      Options.withDescription(
        "trec: <run>/trec/qrels.txt and one .run file per cell (and .ranking.run where the retriever ranks), for trec_eval, ranx or pytrec_eval"
      )
    )
  },
  Effect.fn("Export.command")(function* (a) {
    const io = yield* CommandIo
    const Trec = yield* Effect.promise(() => import("@cupid-lab/results").then((m) => m.Trec))
    const written = yield* Trec.write(yield* runDirectory(a.run))
    io.stdout(`${[...written.qrels.map((f) => `qrels: ${f}`), ...written.runs.map((f) => `run: ${f}`)].join("\n")}\n`)
  })
).pipe(
  Command.withDescription(
    "write a run's retrieval in the formats of other tools (trec: qrels and run files for trec_eval, ranx, pytrec_eval)"
  )
)
