/**
 * The compiled CLI the tests run as a user runs it (packages/experiments/dist/cli.mjs), built by
 * `tools/build-cli.mjs --if-stale` when a source is newer than its last build. The build runs as an
 * asynchronous child process (see {@link Subprocess}), so a test file awaits it in a `beforeAll`
 * hook with a ceiling for a loaded machine.
 *
 * @example
 * import { CompiledCli } from "@cupid-lab/core/testing"
 * beforeAll(CompiledCli.build, 120_000)
 * const r = await Subprocess.run(process.execPath, [CompiledCli.entry, "--help"])
 */
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as Subprocess from "./Subprocess.js"

const repo = fileURLToPath(new URL("../../../../", import.meta.url))

/** The compiled CLI's entry point. */
export const entry = path.join(repo, "packages", "experiments", "dist", "cli.mjs")

/** Build the CLI when it is stale (quietly); throws with the build's stderr when the build fails. */
export const build = async (): Promise<void> => {
  const built = await Subprocess.run(process.execPath, [
    path.join(repo, "tools", "build-cli.mjs"),
    "--if-stale",
    "--quiet"
  ])
  if (built.code !== 0) throw new Error(`building the CLI failed: ${built.stderr}`)
}
