/**
 * The cupid-lab command line: `sweep`, `report`, `compare` and `data <inspect|download|generate>`,
 * each with `--help`. `npm install` compiles it to packages/experiments/dist/cli.mjs (the
 * `cupid-lab` bin); the Nx targets run that file.
 *
 *   npx cupid-lab sweep --config contextual.yaml [--dry-run] ...
 *   npx nx run experiments:sweep --config contextual.yaml
 *
 * Exit codes: 0 done, 1 config/data/run error, 2 usage error, 130 stopped by SIGINT/SIGTERM.
 * The first signal interrupts the main fiber: a sweep finishes the pairs in flight and writes its
 * outputs before it ends; a second signal quits at once.
 */
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Exit } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Commands from "../internal/Commands.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "..", "..", "..", "..")

let signals = 0
const onSignal = (name: string) => () => {
  signals++
  if (signals > 1) {
    process.stderr.write(`\n${name} again: quitting without waiting for the pairs in flight; rerun the same command to resume\n`)
    process.exit(130)
  }
  process.stderr.write(`\n${name}: finishing the pairs in flight, then writing results, summary and report (${name} again quits at once)\n`)
}
// NodeRuntime.runMain interrupts the main fiber on the first signal and then stops listening; these
// listeners stay, so a second signal exits here instead of killing the process mid-write.
process.on("SIGINT", onSignal("SIGINT"))
process.on("SIGTERM", onSignal("SIGTERM"))

const program = Commands.main(process.argv.slice(2), {
  configDirs: [path.resolve("configs"), path.join(repoRoot, "configs")],
  stdout: (text) => void process.stdout.write(text),
  stderr: process.stderr,
  color: process.stdout.isTTY === true && process.stderr.isTTY === true
})

NodeRuntime.runMain(program, {
  disableErrorReporting: true,
  teardown: (exit, onExit) =>
    onExit(Exit.isSuccess(exit) ? (typeof exit.value === "number" ? exit.value : 0) : Cause.isInterruptedOnly(exit.cause) ? 130 : 1)
})
