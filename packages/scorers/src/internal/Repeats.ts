// Asking a model the same question more than once (a scorer's `repeats: n`): repeat r differs from
// repeat 0 only in the request's seed, which is part of the model cache's key and is sent to the
// provider, so every repeat is cached apart and a rerun asks nothing again.
import { type LanguageModel, Models, Scorer } from "@cupid-lab/core"
import { Effect } from "effect"

/**
 * The request `seed` of repeat `r` (0-based). Repeat 0 sends the request as a single judgment does
 * (no seed of its own), so it shares its cache entry with `repeats: 1`; repeat r >= 1 sends the
 * model's configured seed plus r (r when none is configured).
 */
export const repeatSeed = (r: number, configured: unknown): number | undefined =>
  r === 0 ? undefined : (Number.isSafeInteger(configured) ? (configured as number) : 0) + r

const seeded = (lm: LanguageModel.Service, r: number): LanguageModel.Service => {
  const seed = repeatSeed(r, lm.info.params.seed)
  return seed === undefined ? lm : { info: lm.info, complete: (request) => lm.complete({ ...request, seed }) }
}

/** `models` whose language models send repeat `r`'s seed with every request. */
export const seededModels = (models: Models.Service, r: number): Models.Service =>
  r === 0
    ? models
    : { ...models, languageModel: (name) => Effect.map(models.languageModel(name), (lm) => seeded(lm, r)) }

/** Build `make` once per repeat, each under {@link seededModels}. */
export const buildEach = <A, E, R>(
  repeats: number,
  make: (r: number) => Effect.Effect<A, E, R>
): Effect.Effect<Array<A>, E, R | Models.Models> =>
  Effect.flatMap(Models.Models, (models) =>
    Effect.forEach(
      Array.from({ length: repeats }, (_, r) => r),
      (r) => Effect.provideService(make(r), Models.Models, seededModels(models, r))
    )
  )

/**
 * One instance's scores from its repeats' scores: a number metric is the mean of its repeats (each
 * recorded with {@link Scorer.recordRepeats}), counts are the mean counts (pooled over repeats).
 */
export const combine = (
  runs: ReadonlyArray<Readonly<Record<string, Scorer.Value>>>
): Effect.Effect<Record<string, Scorer.Value>> =>
  Effect.gen(function* () {
    const out: Record<string, Scorer.Value> = {}
    if (runs.length === 0) return out
    for (const metric of Object.keys(runs[0]!)) {
      const values = runs.map((s) => s[metric]!)
      if (values.every((v) => typeof v === "number")) {
        const numbers = values as ReadonlyArray<number>
        yield* Scorer.recordRepeats(metric, numbers)
        out[metric] = numbers.reduce((a, b) => a + b, 0) / numbers.length
      } else {
        const counts = values.filter(Scorer.isCount)
        out[metric] = {
          num: counts.reduce((a, c) => a + c.num, 0) / counts.length,
          den: counts.reduce((a, c) => a + c.den, 0) / counts.length
        }
      }
    }
    return out
  })
