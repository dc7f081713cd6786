/**
 * Rebuilds the bundled sample dataset, `packages/core/data/sample.jsonl`, from the persona sources in
 * `packages/core/data/sample-src/*.json`. Run it after editing or adding a source:
 *
 *   npx tsx packages/core/src/bin/build-sample.ts
 *
 * A source that breaks the format or the CUPID template stops the build with the file and field.
 */
import { FileSystem, Path } from "@effect/platform"
import { NodeContext, NodeRuntime } from "@effect/platform-node"
import { Console, Effect } from "effect"
import { fileURLToPath } from "node:url"
import { DatasetError } from "../Errors.js"
import { buildRows, toJsonl } from "../internal/sample/Build.js"
import { loadDirectory } from "../internal/sample/Source.js"

const dataDirectory = fileURLToPath(new URL("../../data/", import.meta.url))

const program = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const sources = yield* loadDirectory(path.join(dataDirectory, "sample-src"))
  const rows = buildRows(sources.map((s) => s.source))
  const out = path.join(dataDirectory, "sample.jsonl")
  yield* fs.writeFileString(out, toJsonl(rows)).pipe(
    Effect.mapError((e) => new DatasetError({ source: out, reason: `cannot write: ${e.message}` }))
  )
  yield* Console.log(`wrote ${rows.length} rows (${sources.length} personas x 3 instance types) to ${path.relative(process.cwd(), out)}`)
})

program.pipe(
  Effect.tapError((e) => Console.error(`build-sample: ${e.message}`)),
  Effect.provide(NodeContext.layer),
  (effect) => NodeRuntime.runMain(effect, { disableErrorReporting: true })
)
