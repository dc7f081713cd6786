/**
 * The command line: `sweep` runs (or resumes, or dry-runs) a config; `report` regenerates
 * report.md from a run directory.
 *
 *   tsx packages/experiments/src/bin/cli.ts sweep --config contextual.yaml [--dry-run] ...
 *   npx nx run experiments:sweep --config contextual.yaml
 *
 * Exit codes: 0 done, 1 config/data/run error, 2 usage error, 130 stopped by SIGINT/SIGTERM.
 */
import { Effect, Exit } from "effect"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Commands from "../internal/Commands.js"

const here = path.dirname(fileURLToPath(import.meta.url))
const repoRoot = path.resolve(here, "..", "..", "..", "..")

const stop = { stopped: false }
let signals = 0
const onSignal = (name: string) => () => {
  signals++
  if (signals > 1) {
    process.stderr.write(`\n${name} again: quitting without waiting for the pairs in flight; rerun the same command to resume\n`)
    process.exit(130)
  }
  stop.stopped = true
  process.stderr.write(`\n${name}: finishing the pairs in flight, then writing results, summary and report (${name} again quits at once)\n`)
}
process.on("SIGINT", onSignal("SIGINT"))
process.on("SIGTERM", onSignal("SIGTERM"))

const exit = await Effect.runPromiseExit(
  Commands.main(process.argv.slice(2), {
    stop,
    configDirs: [path.resolve("configs"), path.join(repoRoot, "configs")],
    stdout: (text) => process.stdout.write(text),
    stderr: process.stderr
  })
)
if (Exit.isSuccess(exit)) {
  process.exitCode = exit.value
} else {
  process.stderr.write(`error: unexpected failure\n${String(exit.cause)}\n`)
  process.exitCode = 1
}
