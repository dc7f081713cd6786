/**
 * Loads every sample source of both splits and runs the validator on them: each persona's own rules,
 * plus shared templates across all personas. Used by the build script and the tests.
 */
import { Path } from "@effect/platform"
import { Effect } from "effect"
import * as path from "node:path"
import { listSplits, type FileProblems, type LoadedSource, type Problem, readFiles, type Split } from "./Source.js"
import * as Validate from "./Validate.js"

export const sampleSourceRoot = (dataDirectory: string): string => path.join(dataDirectory, "sample-src")

/** The jsonl file each split builds. */
export const splitOutputs = (dataDirectory: string): ReadonlyArray<readonly [Split, string]> => [
  ["dev", path.join(dataDirectory, "sample.jsonl")],
  ["test", path.join(dataDirectory, "sample-test.jsonl")]
]

export interface CheckResult {
  readonly loaded: ReadonlyArray<LoadedSource>
  /** Only files with problems; restricted to `only` when given. */
  readonly problems: ReadonlyArray<FileProblems>
}

/**
 * Validate the sources under `root`. With `only` (absolute paths), report problems of those files
 * alone, though shared templates are still looked for across every source (and the named files
 * need not live under `root`).
 */
export const checkSources = Effect.fn("Sample.checkSources")(function* (root: string, only?: ReadonlyArray<string>) {
  const p = yield* Path.Path
  const listed = yield* listSplits(root)
  const extra = (only ?? [])
    .filter((f) => !listed.some((l) => l.file === f))
    .map((file) => ({ file, split: "dev" as Split }))
  const { loaded, broken } = yield* readFiles([...listed, ...extra])
  const problems = new Map<string, Array<Problem>>()
  const add = (file: string, list: ReadonlyArray<Problem>) => {
    if (list.length === 0) return
    problems.set(file, [...(problems.get(file) ?? []), ...list])
  }
  for (const b of broken) add(b.file, b.problems)
  for (const l of loaded) add(l.file, Validate.source(l.source))
  for (const { file, problem } of Validate.sharedRuns(loaded)) add(file, [problem])
  const wanted = only === undefined ? undefined : new Set(only.map((f) => p.resolve(f)))
  const result: CheckResult = {
    loaded,
    problems: [...problems]
      .filter(([file]) => wanted === undefined || wanted.has(file))
      .map(([file, list]) => ({ file, problems: list }))
  }
  return result
})
