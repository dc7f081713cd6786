/**
 * The `cupid-lab` entry point (compiled to dist/cli.mjs): the first signal stops a sweep after the
 * pairs in flight, with its outputs written (exit 130); a second quits at once. Started with an IPC
 * channel (by Nx), it also stops when that channel closes, which it does when Nx ends even on a
 * SIGKILL, and ignores repeated signals: Nx signals a task more than once.
 *
 *   npx cupid-lab sweep --config contextual.yaml [--dry-run] ...
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Commands from "../cli/Commands.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "..", "..", "..", "..")
const linked = process.channel !== undefined

let stopping = false
/** Say why the command stops, once: the first signal, or the parent's going. */
const stop = (why: string) => {
  stopping = true
  const again = linked ? "" : ` (${why} again quits at once)`
  process.stderr.write(`\n${why}: finishing the pairs in flight, then writing results, summary and report${again}\n`)
}
const onSignal = (name: string) => () => {
  if (!stopping) return stop(name)
  if (linked) return
  process.stderr.write(
    `\n${name} again: quitting without waiting for the pairs in flight; rerun the same command to resume\n`
  )
  process.exit(130)
}
// runMain interrupts on the first signal and stops listening; these stay for the second.
process.on("SIGINT", onSignal("SIGINT"))
process.on("SIGTERM", onSignal("SIGTERM"))

const program = Commands.main(process.argv.slice(2), {
  configDirs: [path.resolve("configs"), path.join(repoRoot, "configs")],
  stdout: (text) => void process.stdout.write(text),
  stderr: process.stderr,
  color: process.stdout.isTTY === true && process.stderr.isTTY === true
})

/** Interrupted, it lets go of the channel, which would keep the process up. */
const parentGone = Effect.async<void>((resume) => {
  if (!process.connected) return resume(Effect.void)
  const onDisconnect = () => resume(Effect.void)
  process.once("disconnect", onDisconnect)
  return Effect.sync(() => void process.off("disconnect", onDisconnect))
}).pipe(
  Effect.andThen(() => {
    if (!stopping) stop("the process that started cupid-lab has ended")
  }),
  Effect.andThen(Effect.interrupt)
)

if (linked) {
  // Output to a pipe that ended with the parent fails (EPIPE): the command must still write its files.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {})
}

NodeRuntime.runMain(linked ? Effect.raceFirst(program, parentGone) : program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) =>
    onExit(
      Exit.isSuccess(exit)
        ? typeof exit.value === "number"
          ? exit.value
          : 0
        : Cause.isInterruptedOnly(exit.cause)
          ? 130
          : 1
    )
})
