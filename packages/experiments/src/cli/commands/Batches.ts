/**
 * The `batches` command: the provider batch jobs a run submitted (its batches.jsonl), with their
 * state as the providers report it now; `--cancel` cancels those still running. Rerunning the
 * sweep's command collects the answers instead.
 *
 * @example
 * npx cupid-lab batches --run runs/paper-ablations/latest
 * npx cupid-lab batches --run runs/paper-ablations/latest --cancel
 */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { CommandIo, configFile, runDirectory, runOption } from "./Io.js"

const options = {
  run: runOption,
  config: Options.text("config").pipe(
    Options.withPseudoName("file | name"),
    Options.optional,
    Options.withDescription("the config the run was made with, when run.json's is not reachable from here")
  ),
  cancel: Options.boolean("cancel").pipe(
    Options.withDescription("cancel every batch that has not ended (answers already made stay in their output files)")
  )
}

export const command = Command.make(
  "batches",
  options,
  Effect.fn("Batches.command")(function* (a) {
    const io = yield* CommandIo
    const { BatchAdmin } = yield* Effect.promise(() => import("@cupid-lab/runner"))
    const dir = yield* runDirectory(a.run)
    const config = Option.isSome(a.config) ? yield* configFile(a.config.value) : undefined
    const target = {
      dir,
      ...(config !== undefined ? { config } : {}),
      ...(io.env !== undefined ? { env: io.env } : {})
    }
    if (a.cancel) {
      const { rows, cancelled } = yield* BatchAdmin.cancel(target)
      if (rows.length === 0) return io.stdout(`no batches recorded in ${dir}\n`)
      io.stdout(
        cancelled.length === 0
          ? `no batch to cancel: every batch recorded in ${dir} has ended\n`
          : `cancelled ${cancelled.length} batch${cancelled.length === 1 ? "" : "es"}: ${cancelled.join(", ")}\n`
      )
      return
    }
    const rows = yield* BatchAdmin.list(target)
    if (rows.length === 0) return io.stdout(`no batches recorded in ${dir}\n`)
    io.stdout(`${rows.map(BatchAdmin.describe).join("\n")}\n`)
  })
).pipe(
  Command.withDescription("List the provider batch jobs a run submitted, with their state; --cancel cancels them.")
)
