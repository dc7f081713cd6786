import { Args, Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { CommandIo, dataOption, given, logTo, outputs } from "./Io.js"

export const command = Command.make(
  "merge",
  {
    out: Options.text("out").pipe(
      Options.withPseudoName("dir"),
      Options.withDescription(
        "the merged run's directory; a directory holding another run (or one of the shards) is refused"
      )
    ),
    data: dataOption(
      "the run's data, when the source the shards recorded does not open from here (it orders the results and gives the report's examples; its fingerprint must be the shards')"
    ),
    shards: Args.directory({ name: "shard dir", exists: "either" }).pipe(
      Args.atLeast(1),
      Args.withDescription(
        "the N shard directories (runs/<name>/<run id>-shard-i-of-N, or each shard's --out), in any order"
      )
    )
  },
  Effect.fn("Merge.command")(function* (a) {
    const io = yield* CommandIo
    const Sweeps = yield* Effect.promise(() => import("../../Sweeps.js"))
    const merged = yield* Sweeps.merge({
      out: a.out,
      shards: a.shards,
      ...given({ data: a.data }),
      ...(io.runner?.openDataset !== undefined ? { openDataset: io.runner.openDataset } : {}),
      log: logTo(io)
    })
    const Leaderboard = yield* Effect.promise(() => import("@cupid-lab/report").then((m) => m.Leaderboard))
    if (merged.published !== undefined)
      io.stdout(Leaderboard.console(merged.published.analysis, merged.published.verdict, []))
    io.stdout(
      `\nmerged ${merged.shards} shards of run ${merged.identity.id}: ${merged.pairs} pairs, ${merged.instances} instances\n`
    )
    io.stdout(outputs(merged.out))
  })
).pipe(
  Command.withDescription(
    "combine the shard directories of `sweep --shard i/N` into one run directory, byte-identical to a run on one machine: " +
      "checks that the shards are one run's (config and data), that all N are given and finished, and that every pair is in exactly one shard"
  )
)
