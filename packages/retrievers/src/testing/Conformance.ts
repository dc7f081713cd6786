/**
 * The conformance suite every retriever plugin runs. `suite({ plugin, options })` registers vitest
 * tests that check the contract of the retrieval stage:
 *
 * - its options decode with its own schema, and it builds;
 * - the same query gives the same retrieval, from one service or from a freshly built one;
 * - rankings and selections hold only ids of the history, each once, the selection in
 *   chronological order, and the selection within the ranking's sessions;
 * - it selects at most `k` sessions when it has a `k` option (also with `k: 1`);
 * - it cannot tell instance types or gold apart unless it declares `needsGold`: each fixture gets a
 *   twin built through the real data path (`Domain.fromRow`) with the same visible text but another
 *   instance type, another target preference and other session labels, and both must get the same
 *   retrieval ({@link blindnessProblems}; tested against probe plugins that peek, so the check can
 *   fail); a retriever that declares `needsGold` gets the labels;
 * - it does not mutate its input (queries are deeply frozen);
 * - two builds share nothing they remember: a build retrieves for queries whose session hashes are
 *   those another build already saw with other texts, and must answer as for honest hashes
 *   ({@link sharingProblems}; tested against a probe with a module-level cache, so the check can
 *   fail); builds that share one memo (core's `Memo`, as a sweep's cells do) retrieve the same;
 * - empty, one-session and 10,000-session histories work.
 *
 * The default environment: an in-memory model cache, no configured models (pass `models` for a
 * plugin that needs some), a `Corpus` of the suite's small fixture histories, and a registry of
 * this package's plugins (for composite retrievers).
 *
 * @example
 * // packages/retrievers/test/my-retriever.test.ts
 * import { Conformance } from "@cupid-lab/retrievers/testing"
 * const { suite } = Conformance
 * import { plugin } from "../src/MyRetriever.js"
 * suite({ plugin, options: { k: 2 } })
 */
import { Corpus, Domain, Memo, ModelCache, Models, Plugin, type Retriever } from "@cupid-lab/core"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import * as Builtins from "../Builtins.js"
import { bareQuery, deepFreeze, forged, summariesOf, twin } from "../internal/ConformanceQueries.js"
import * as Histories from "./Histories.js"

export { forged, twin } from "../internal/ConformanceQueries.js"

export interface SuiteOptions {
  readonly plugin: Plugin.AnyRetrieverPlugin
  /** Raw options, as a config would give them (decoded with the plugin's schema). */
  readonly options?: Readonly<Record<string, unknown>>
  /** Name shown in the test titles; default: the plugin name and its options. */
  readonly label?: string
  /** Models the plugin may ask for, by the name its options use. */
  readonly models?: Readonly<Record<string, Models.ModelBundle>>
  /** Extra plugins for the registry composite retrievers build their parts from. */
  readonly plugins?: ReadonlyArray<Plugin.AnyPlugin>
  /** Size of the large history; default 10,000. */
  readonly largeHistory?: number
  /** Per-test timeout in milliseconds for the large history; default 120,000. */
  readonly largeTimeout?: number
}

type AnyService = Retriever.Service | Retriever.GoldService

/** What a non-gold retriever is handed: by default the visible query as a bare, frozen object. */
export type Visible = (instance: Domain.Instance) => Domain.Query

export const defaultVisible: Visible = (instance) => bareQuery(instance.query)

/**
 * Problems when a non-gold service retrieves differently for an instance and its {@link twin}: it
 * must be reading something the visible query should not carry. Empty when it is blind to them.
 */
export const blindnessProblems = (
  service: Retriever.Service,
  instances: ReadonlyArray<Domain.Instance>,
  visible: Visible = defaultVisible
): Effect.Effect<ReadonlyArray<string>, unknown> =>
  Effect.gen(function* () {
    const problems: Array<string> = []
    for (const instance of instances) {
      const pair = [instance, twin(instance)] as const
      const [a, b] = yield* Effect.forEach(pair, (i) => {
        const query = visible(i)
        return service.retrieve(service.needsSummaries ? { query, summaries: summariesOf(query) } : { query })
      })
      if (JSON.stringify(a) !== JSON.stringify(b)) {
        problems.push(
          `${instance.id}: the retrieval differs between the ${pair[0].type} instance and its ${pair[1].type} twin, whose visible text is the same`
        )
      }
    }
    return problems
  })

/**
 * Problems when builds share what they remember (a module-level cache instead of the memo a build
 * is given). A first build retrieves for the instances; a second retrieves for {@link forged}
 * queries with honest hashes (the expected answers); then, per instance, a new build retrieves for
 * the same forged texts under the stale hashes the first build saw with the original texts (one
 * build per instance: a persona's instances share sessions, so their stale hashes disagree). A
 * build that remembers nothing of the first answers like the second. Empty when nothing is shared.
 */
export const sharingProblems = <S, E, R>(
  build: Effect.Effect<S, E, R>,
  instances: ReadonlyArray<Domain.Instance>,
  retrieve: (service: S, query: Domain.Query, instance: Domain.Instance) => Effect.Effect<Retriever.Retrieval, unknown>
): Effect.Effect<ReadonlyArray<string>, unknown, R> =>
  Effect.gen(function* () {
    const first = yield* build
    for (const i of instances) yield* retrieve(first, bareQuery(i.query), i)
    const honest = yield* build
    const expected = yield* Effect.forEach(instances, (i) => retrieve(honest, forged(i.query, "honest"), i))
    const problems: Array<string> = []
    for (const [k, i] of instances.entries()) {
      const got = yield* retrieve(yield* build, forged(i.query, "stale"), i)
      if (JSON.stringify(got) !== JSON.stringify(expected[k])) {
        problems.push(
          `${i.id}: a fresh build retrieved differently for texts whose session hashes an earlier build had seen with other texts: builds share what they remember (use the memo of core's Memo, not module-level state)`
        )
      }
    }
    return problems
  })

/**
 * Problems with a retrieval's turn ranking (none without one): it must hold turns of the history,
 * each once, best first, and rank each session at its best turn's score (Retriever.fromTurnScores).
 */
export const turnProblems = (instance: Domain.Instance, r: Retriever.Retrieval): ReadonlyArray<string> => {
  if (r.turns === undefined) return []
  const problems: Array<string> = []
  const lengths = new Map(instance.query.sessions.map((s) => [s.id, s.dialogue.length]))
  const seen = new Set<string>()
  const best = new Map<string, number>()
  r.turns.forEach((t, i) => {
    const key = `${t.sessionId}#${t.turn}`
    if (!(Number.isInteger(t.turn) && t.turn >= 0 && t.turn < (lengths.get(t.sessionId) ?? 0)))
      problems.push(`${key} is not a turn of the history`)
    if (seen.has(key)) problems.push(`${key} is ranked twice`)
    seen.add(key)
    if (!Number.isFinite(t.score)) problems.push(`${key} has a non-finite score`)
    if (i > 0 && r.turns![i - 1]!.score < t.score) problems.push(`${key} scores more than the turn ranked before it`)
    best.set(t.sessionId, Math.max(best.get(t.sessionId) ?? -Infinity, t.score))
  })
  const ranked = new Map(r.ranking.map((x) => [x.sessionId, x.score]))
  for (const [id, score] of best)
    if (ranked.get(id) !== score)
      problems.push(`${id} is ranked at ${ranked.get(id)}, not at its best turn's score ${score}`)
  for (const id of ranked.keys()) if (!best.has(id)) problems.push(`${id} is ranked but has no ranked turn`)
  return problems
}

export const suite = (config: SuiteOptions): void => {
  const { plugin } = config
  const raw = config.options ?? {}
  const label = config.label ?? `${plugin.name} ${JSON.stringify(raw)}`
  const large = config.largeHistory ?? 10_000
  const fixtures: ReadonlyArray<Domain.Instance> = [...Histories.set(8, 11), ...Histories.set(13, 29)]
  const tiny = [Histories.instance({ sessions: 0, seed: 5 }), Histories.instance({ sessions: 1, seed: 6 })]
  const needsGold = plugin.needsGold === true

  const models = Models.layer(config.models ?? {})
  const env = Layer.mergeAll(
    models,
    Corpus.layerFromQueries(
      fixtures.map((f) => f.query),
      `conformance-${fixtures.length}`
    ),
    Layer.succeed(Plugin.Plugins, Plugin.makeRegistry([...Builtins.plugins, ...(config.plugins ?? [])])),
    NodeContext.layer
  ).pipe(Layer.provideMerge(ModelCache.layerMemory))

  const decode = (overrides: Readonly<Record<string, unknown>> = {}) =>
    Effect.mapError(
      plugin.decode({ ...raw, ...overrides }),
      (e) => new Error(`options do not decode: ${e.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`)
    )
  const build = (overrides: Readonly<Record<string, unknown>> = {}) =>
    Effect.flatMap(decode(overrides), (decoded) => Effect.map(decoded.make, (built): AnyService => built.service))
  const retrieve = (
    service: AnyService,
    instance: Domain.Instance,
    query: Domain.Query = bareQuery(instance.query)
  ) => {
    const input: Retriever.RetrievalInput = service.needsSummaries
      ? { query, summaries: summariesOf(query) }
      : { query }
    return needsGold
      ? (service as Retriever.GoldService).retrieve(input, deepFreeze(structuredClone(instance.gold)))
      : (service as Retriever.Service).retrieve(input)
  }
  const run = <A, E>(effect: Effect.Effect<A, E, Plugin.Env>) => Effect.scoped(effect).pipe(Effect.provide(env))

  const checkShape = (instance: Domain.Instance, r: Retriever.Retrieval) => {
    const ids = instance.query.sessions.map((s) => s.id)
    const known = new Set(ids)
    const ranked = r.ranking.map((x) => x.sessionId)
    expect(
      ranked.filter((id) => !known.has(id)),
      `${instance.id}: unknown ids in ranking`
    ).toEqual([])
    expect(
      r.selected.filter((id) => !known.has(id)),
      `${instance.id}: unknown ids in selection`
    ).toEqual([])
    expect(new Set(ranked).size, `${instance.id}: repeated ids in ranking`).toBe(ranked.length)
    expect(new Set(r.selected).size, `${instance.id}: repeated ids in selection`).toBe(r.selected.length)
    const order = r.selected.map((id) => ids.indexOf(id))
    expect(order, `${instance.id}: selection not chronological`).toEqual([...order].sort((a, b) => a - b))
    for (const x of r.ranking)
      expect(Number.isFinite(x.score), `${instance.id}: non-finite score for ${x.sessionId}`).toBe(true)
    for (let i = 1; i < r.ranking.length; i++)
      expect(r.ranking[i - 1]!.score).toBeGreaterThanOrEqual(r.ranking[i]!.score)
    expect(turnProblems(instance, r), `${instance.id}: turn ranking`).toEqual([])
  }

  describe(`retriever conformance: ${label}`, () => {
    it.effect("decodes its options and builds", () => run(build()))

    it.effect("declares whether it reads gold", () =>
      run(
        Effect.gen(function* () {
          expect(plugin.stage).toBe("retriever")
          const options = yield* decode()
          expect(options).toBeTypeOf("object")
          expect(plugin.needsGold === true || plugin.needsGold === undefined || plugin.needsGold === false).toBe(true)
        })
      )
    )

    it.effect("returns only ids of the history, each once, in a consistent shape", () =>
      run(
        Effect.gen(function* () {
          const service = yield* build()
          for (const f of fixtures) checkShape(f, yield* retrieve(service, f))
        })
      )
    )

    it.effect("is deterministic across calls and rebuilds", () =>
      run(
        Effect.gen(function* () {
          const first = yield* build()
          const second = yield* build()
          for (const f of fixtures) {
            const a = yield* retrieve(first, f)
            expect(yield* retrieve(first, f)).toEqual(a)
            expect(yield* retrieve(second, f)).toEqual(a)
          }
        })
      )
    )

    it.effect("shares nothing between builds, and retrieves the same when builds share a sweep's memo", () =>
      run(
        Effect.gen(function* () {
          expect(
            yield* sharingProblems(build(), fixtures, (service, query, instance) => retrieve(service, instance, query))
          ).toEqual([])
          const [x, y] = yield* Memo.shared(Effect.all([build(), build()]))
          for (const f of fixtures) {
            const a = yield* retrieve(x, f)
            expect(yield* retrieve(y, f)).toEqual(a)
            expect(yield* retrieve(yield* build(), f)).toEqual(a)
          }
        })
      )
    )

    if ("defaultSelect" in plugin && plugin.defaultSelect !== undefined) {
      it.effect("is a ranker: scores every session and leaves the cut to a selector", () =>
        run(
          Effect.gen(function* () {
            const service = yield* build()
            // A second stage (a `candidates` option) scores only its first stage's candidates.
            const secondStage = "candidates" in (yield* decode()).params
            for (const f of fixtures) {
              const r = yield* retrieve(service, f)
              const scored = new Set(r.ranking.map((x) => x.sessionId)).size
              if (secondStage) expect(scored, `${f.id}: no candidate scored`).toBeGreaterThan(0)
              else expect(scored, `${f.id}: sessions without a score`).toBe(f.query.sessions.length)
            }
          })
        )
      )
    }

    it.effect("respects k", () =>
      run(
        Effect.gen(function* () {
          const options = (yield* decode()) as { readonly k?: unknown }
          if (typeof options.k !== "number") return
          const k = options.k
          const service = yield* build()
          for (const f of fixtures) expect((yield* retrieve(service, f)).selected.length).toBeLessThanOrEqual(k)
          const one = yield* build({ k: 1 })
          for (const f of fixtures) expect((yield* retrieve(one, f)).selected.length).toBeLessThanOrEqual(1)
        })
      )
    )

    if (needsGold) {
      it.effect("reads gold only as it declares (needsGold)", () =>
        run(
          Effect.gen(function* () {
            const service = yield* build()
            for (const f of fixtures) checkShape(twin(f), yield* retrieve(service, twin(f)))
          })
        )
      )
    } else {
      it.effect(
        "cannot tell instance types or gold apart: an instance and its twin (same text, other type and labels) get the same retrieval",
        () =>
          run(
            Effect.gen(function* () {
              const service = (yield* build()) as Retriever.Service
              expect(yield* blindnessProblems(service, fixtures)).toEqual([])
            })
          )
      )
    }

    it.effect("handles an empty history", () =>
      run(
        Effect.gen(function* () {
          const r = yield* retrieve(yield* build(), tiny[0]!)
          expect(r.selected).toEqual([])
          expect(r.ranking).toEqual([])
        })
      )
    )

    it.effect("handles a one-session history", () =>
      run(
        Effect.gen(function* () {
          const r = yield* retrieve(yield* build(), tiny[1]!)
          checkShape(tiny[1]!, r)
          expect(r.selected.every((id) => id === "s1")).toBe(true)
        })
      )
    )

    it.effect(
      `handles a ${large.toLocaleString("en")}-session history`,
      () =>
        run(
          Effect.gen(function* () {
            const service = yield* build()
            const options = (yield* decode()) as { readonly k?: unknown }
            const big = Histories.instance({ sessions: large, type: "changing", seed: 42 })
            const r = yield* retrieve(service, big)
            checkShape(big, r)
            if (typeof options.k === "number") expect(r.selected.length).toBeLessThanOrEqual(options.k)
          })
        ),
      config.largeTimeout ?? 120_000
    )
  })
}
