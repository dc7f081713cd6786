/**
 * Validates the bundled sample's persona sources and rebuilds both splits:
 * `packages/data/data/sample-src/dev/*.json` -> `packages/data/data/sample.jsonl` (source `sample`) and
 * `packages/data/data/sample-src/test/*.json` -> `packages/data/data/sample-test.jsonl` (`sample-test`).
 *
 *   npx tsx packages/data/src/bin/build-sample.ts                  # validate everything, write both splits
 *   npx tsx packages/data/src/bin/build-sample.ts --check FILE...  # validate only, print every problem
 *
 * `--check` checks the named files against the rules of docs/sample-data.md, and for shared templates
 * against every other source too. Exit code 1 when anything is wrong.
 */
import { FileSystem, Path } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { fileURLToPath } from "node:url"
import { Errors } from "@cupid-lab/core"
import { checkSources, sampleSourceRoot, splitOutputs } from "../internal/sample/Check.js"
import { buildRows, toJsonl } from "../internal/sample/Build.js"

const dataDirectory = fileURLToPath(new URL("../../data/", import.meta.url))

const program = Effect.gen(function* () {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const args = process.argv.slice(2)
  const checkOnly = args[0] === "--check"
  const only = checkOnly ? args.slice(1).map((f) => path.resolve(f)) : undefined
  const result = yield* checkSources(sampleSourceRoot(dataDirectory), only)
  for (const { file, problems } of result.problems) {
    for (const p of problems) yield* Console.error(`${path.relative(process.cwd(), file)}, ${p.field}: ${p.reason}`)
  }
  const count = result.problems.reduce((n, f) => n + f.problems.length, 0)
  if (count > 0)
    return yield* new Errors.DatasetError({
      source: "sample-src",
      reason: `${count} problem${count === 1 ? "" : "s"} in ${result.problems.length} file${result.problems.length === 1 ? "" : "s"}`
    })
  if (checkOnly) {
    yield* Console.log(`ok: ${only?.length ?? 0} file(s) checked`)
    return
  }
  for (const [split, file] of splitOutputs(dataDirectory)) {
    const sources = result.loaded.filter((l) => l.split === split).map((l) => l.source)
    if (sources.length === 0)
      return yield* new Errors.DatasetError({
        source: path.join(dataDirectory, "sample-src", split),
        reason: "no *.json persona sources found"
      })
    const rows = buildRows(sources)
    yield* fs
      .writeFileString(file, toJsonl(rows))
      .pipe(Effect.mapError((e) => new Errors.DatasetError({ source: file, reason: `cannot write: ${e.message}` })))
    yield* Console.log(
      `wrote ${rows.length} rows (${sources.length} personas x 3 instance types) to ${path.relative(process.cwd(), file)}`
    )
  }
})

program.pipe(
  Effect.tapError((e) => Console.error(`build-sample: ${e.message}`)),
  Effect.provide(NodeContext.layer),
  (effect) => NodeRuntime.runMain(effect, { disableErrorReporting: true })
)
