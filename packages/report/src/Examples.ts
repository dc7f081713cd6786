/**
 * A report's worked examples: the first instance of each type, read again from the run's dataset,
 * with what every cell selected and inferred; when the dataset cannot be read or changed, why not.
 *
 * @example
 * const examples = yield* Examples.load(run, analysis) // Effect<Examples.Examples>
 */
import { Dataset } from "@cupid-lab/data"
import { Domain } from "@cupid-lab/core"
import { Statistics } from "@cupid-lab/scorers"
import type { Columns, RunDir, ResultLine } from "@cupid-lab/results"
import type { FileSystem } from "@effect/platform"

import { Array as Arr, Chunk, Effect, Stream } from "effect"
import type { Analysis } from "./Analysis.js"

export interface ExampleCell {
  readonly cell: string
  readonly status: ResultLine.Row["status"]
  readonly selected: ReadonlyArray<string> | null
  readonly preference: string | null
  /** The per-instance value of {@link Examples.metric}. */
  readonly value: number
  readonly error: string | null
}

export interface Example {
  readonly id: string
  readonly type: Domain.InstanceType
  readonly instance: Domain.Instance
  readonly cells: ReadonlyArray<ExampleCell>
}

export interface Examples {
  /** Per-instance metric shown next to each cell's inference. */
  readonly metric: string | undefined
  readonly examples: ReadonlyArray<Example>
  /** Why there are none. */
  readonly note: string | undefined
}

export type OpenDataset = (source: string) => Effect.Effect<Dataset.Opened, unknown, FileSystem.FileSystem>

/** First instance of each type, in result-file order. */
const pick = (idx: Columns.Index): Array<string> =>
  Arr.dedupeWith(idx.instances, (a, b) => a.type === b.type).map((r) => r.instance)

/** A metric's value on one instance: the number of a Mean, the ratio of a Ratio's counts, the F1 of an F1's two ratios. */
export const instanceValue = (metric: ResultLine.MetricDescription, scores: ResultLine.Row["scores"]): number => {
  const value = (name: string): number => {
    const v = scores[name]
    return typeof v === "number" ? v : v !== null && typeof v === "object" && v.den > 0 ? v.num / v.den : NaN
  }
  const agg = metric.aggregate
  return agg._tag === "F1" ? Statistics.f1(value(agg.precision), value(agg.recall)) : value(metric.name)
}

export const none = (note: string): Examples => ({ metric: undefined, examples: [], note })

export const load = Effect.fn("Examples.load")(
  function* (
    run: Pick<RunDir.Run, "summary" | "examples">,
    analysis: Analysis,
    open: OpenDataset = (source) => Dataset.open(source)
  ): Effect.fn.Return<Examples, unknown, FileSystem.FileSystem> {
    const ids = pick(analysis.index)
    if (ids.length === 0) return none("the run has no result lines")
    const wanted = new Set(ids)
    const given = run.examples?.filter((i) => wanted.has(i.id)) ?? []
    let found: ReadonlyArray<Domain.Instance> = given
    if (given.length < wanted.size) {
      const opened = yield* open(run.summary.dataset.source)
      if (opened.fingerprint !== run.summary.dataset.hash) {
        return none(
          `the dataset at ${run.summary.dataset.source} changed since the run (fingerprint ${opened.fingerprint.slice(0, 12)}, run ${run.summary.dataset.hash.slice(0, 12)})`
        )
      }
      found = Chunk.toReadonlyArray(
        yield* Stream.runCollect(
          opened.instances.pipe(
            Stream.filter((i) => wanted.has(i.id)),
            Stream.take(wanted.size)
          )
        )
      )
    }
    const byId = new Map(found.map((i) => [i.id, i]))
    const main = analysis.main
    const examples = ids.flatMap((id): Array<Example> => {
      const instance = byId.get(id)
      if (instance === undefined) return []
      const cells = analysis.cells.flatMap(({ summary: c }): Array<ExampleCell> => {
        const r = analysis.index.exampleRows.get(id)?.get(c.id)
        return r === undefined
          ? []
          : [
              {
                cell: c.id,
                status: r.status,
                selected: r.selected,
                preference: r.inference?.preference ?? null,
                value: main === undefined ? NaN : instanceValue(main, r.scores),
                error: r.error?.message ?? null
              }
            ]
      })
      return [{ id, type: instance.type, instance, cells }]
    })
    return {
      metric: main?.name,
      examples,
      note: examples.length === 0 ? "the run's instances were not found in its dataset" : undefined
    }
  },
  (effect, run) =>
    effect.pipe(
      Effect.catchAll((e) =>
        Effect.succeed(
          none(
            `the dataset ${run.summary.dataset.source} could not be read (${e instanceof Error ? e.message : String(e)})`
          )
        )
      ),
      Effect.catchAllDefect((d) =>
        Effect.succeed(none(`the dataset could not be read (${d instanceof Error ? d.message : String(d)})`))
      )
    )
)

/** The opening user message of a session (what names its context factor). */
export const opening = (session: Domain.SessionView): string =>
  session.dialogue.find((m) => m.role === "user")?.content ?? ""
