/**
 * Applying the cells' history transforms in a sweep: the pool that `pad` and `drop: contrastive`
 * need (one extra pass over the whole dataset, only when a cell needs it), and each instance's
 * version per distinct transform. A transform that cannot apply fails that pair.
 */
import { type Domain, type Errors as CoreErrors, Pipeline, Transform, type Trace } from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import { Effect, Either, Stream } from "effect"
import type { Config } from "../config/Config.js"
import type * as Grid from "../config/Grid.js"
import type { OpenDataset } from "./Prepare.js"

/** The pool for the grid's transforms, or undefined when no cell needs one. */
export const poolFor = (config: Config, grid: Grid.Grid, open: OpenDataset): Effect.Effect<Transform.Pool | undefined, CoreErrors.DatasetError, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    if (!grid.cells.some((c) => c.transform !== null && Transform.needsPool(c.transform))) return undefined
    const all = yield* open(config.data.source, { onInvalid: config.data.onInvalid })
    const builder = Transform.poolBuilder()
    yield* Stream.runForEach(all.instances, (instance) => Effect.sync(() => builder.add(instance)))
    return builder.result()
  })

export type Prepared =
  | { readonly instance: Domain.Instance; readonly error?: undefined }
  | { readonly instance: Domain.Instance; readonly error: Trace.TraceError }

/** The instance as each transform sees it, memoized per transform within one instance. */
export const transformer = (seed: number, pool: Transform.Pool | undefined) => (instance: Domain.Instance) => {
  const memo = new Map<string, Prepared>()
  return (transform: Transform.Spec | null): Prepared => {
    if (transform === null) return { instance }
    const key = Transform.label(transform)
    let hit = memo.get(key)
    if (hit === undefined) {
      const result = Transform.apply(instance, transform, pool === undefined ? { seed } : { seed, pool })
      hit = Either.isRight(result)
        ? { instance: result.right }
        : { instance, error: { stage: "transform", plugin: key, tag: result.left._tag, message: result.left.message } }
      memo.set(key, hit)
    }
    return hit
  }
}

/** A pair's trace: the pipeline's on the transformed instance, or a failed pair when the transform could not apply. */
export const run = (pipeline: Pipeline.CellPipeline, version: Prepared): Effect.Effect<Trace.Trace> =>
  version.error === undefined
    ? Pipeline.run(pipeline, version.instance)
    : Effect.succeed({ instanceId: version.instance.id, instanceType: version.instance.type, scores: {}, usage: [], timings: {}, error: version.error })
