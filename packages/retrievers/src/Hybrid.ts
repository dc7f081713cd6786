/**
 * `hybrid`: reciprocal-rank fusion of two retrievers. Each session scores
 * `1 / (rrfK + rank_a) + 1 / (rrfK + rank_b)` (ranks 1-based; a ranking that omits the session adds
 * nothing), and the top `k` are selected. Fusion uses ranks, not scores, so parts with different
 * scales (BM25, cosine) combine without calibration.
 *
 * The parts are any retriever specs (`{ use: ..., ...options }`); a part that reads gold is refused.
 *
 * @example
 * // config:
 * // retriever: { use: hybrid, a: { use: bm25, representation: user-turns }, b: { use: embedding }, k: 2, rrfK: 60 }
 */
import { Errors, Memo, Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import * as Selector from "./Selector.js"

/** A nested retriever spec: `use` plus that plugin's options (decoded by that plugin's schema). */
export const PartSpec = Schema.Struct(
  { use: Schema.String },
  Schema.Record({ key: Schema.String, value: Schema.Unknown })
)
export type PartSpec = typeof PartSpec.Type

/** Build a non-gold retriever from a spec, refusing plugins that read gold. */
export const buildPart = (
  owner: string,
  spec: PartSpec
): Effect.Effect<Retriever.Service, Plugin.MakeError, Plugin.Env> =>
  Effect.gen(function* () {
    const registry = yield* Plugin.Plugins
    const part = yield* registry.get("retriever", spec.use)
    if (part.needsGold === true) {
      return yield* new Errors.PluginError({
        plugin: owner,
        reason: `part "${spec.use}" reads gold labels; ${owner} only combines retrievers that see the visible query`
      })
    }
    // A part may carry its own cut (`select`, or `k` for rankers): applied to the part's retrieval.
    return yield* Selector.build(spec)
  })

/** Reciprocal-rank fusion of rankings: session id -> fused score. */
export const fuse = (
  rankings: ReadonlyArray<ReadonlyArray<Retriever.RankedSession>>,
  rrfK: number
): Map<string, number> => {
  const fused = new Map<string, number>()
  for (const ranking of rankings) {
    ranking.forEach((r, i) => fused.set(r.sessionId, (fused.get(r.sessionId) ?? 0) + 1 / (rrfK + i + 1)))
  }
  return fused
}

export const options = Schema.Struct({
  a: PartSpec,
  b: PartSpec,
  rrfK: Schema.optionalWith(Schema.Number.pipe(Schema.greaterThanOrEqualTo(0)), { default: () => 60 })
})
export type Options = typeof options.Type

export const plugin = Plugin.retriever({
  name: "hybrid",
  description: "Reciprocal-rank fusion of two retrievers (a, b).",
  options,
  defaultSelect: { top: 2 },
  make: (o: Options) =>
    // The parts share one memo (the sweep's when there is one).
    Memo.shared(
      Effect.gen(function* () {
        const a = yield* buildPart("hybrid", o.a)
        const b = yield* buildPart("hybrid", o.b)
        return {
          needsSummaries: a.needsSummaries || b.needsSummaries,
          retrieve: (input: Retriever.RetrievalInput) =>
            Effect.map(Effect.all([a.retrieve(input), b.retrieve(input)]), ([ra, rb]) => {
              const known = new Set(input.query.sessions.map((s) => s.id))
              const fused = fuse([ra.ranking, rb.ranking], o.rrfK)
              return Retriever.fromScores([...fused].filter(([id]) => known.has(id)))
            })
        } satisfies Retriever.Service
      })
    )
})
