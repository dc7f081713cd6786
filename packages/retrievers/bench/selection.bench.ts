/**
 * Selection quality of every retriever, measured against the gold labels outside the plugins: per
 * instance type, the mean precision of the selection (instances with an empty selection left out,
 * as the retrieval scorer does) and recall_all (1 when every relevant session was selected).
 *
 *   npm run bench -- selection                     # sample + synthetic (300 personas, 8 sessions)
 *   npx tsx packages/retrievers/bench/selection.bench.ts synthetic:personas=100,seed=3
 */
import { Corpus, Domain, ModelCache, Models, Plugin, type Retriever } from "@cupid-lab/core"
import { Dataset } from "@cupid-lab/data"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Builtins from "../src/Builtins.js"
import * as Selector from "../src/Selector.js"

export const specs: ReadonlyArray<{ readonly use: string } & Record<string, unknown>> = [
  { use: "all" },
  { use: "recency", k: 2 },
  { use: "recency", k: 4 },
  { use: "bm25", k: 2 },
  { use: "bm25", k: 2, representation: "user-turns" },
  { use: "bm25", k: 2, representation: "first-user-message" },
  { use: "bm25", k: 4, representation: "first-user-message" },
  { use: "embedding", k: 2 },
  { use: "embedding", k: 2, representation: "first-user-message" },
  { use: "hybrid", a: { use: "bm25", representation: "first-user-message" }, b: { use: "embedding" }, k: 2 },
  { use: "context-factor", policy: "all-matching" },
  { use: "context-factor", policy: "most-recent" },
  { use: "context-factor", policy: "detect-change" },
  { use: "context-factor", strategy: "embedding", policy: "all-matching" },
  { use: "context-factor", strategy: "embedding", policy: "detect-change" },
  { use: "oracle" }
]

interface Tally {
  precision: Array<number>
  recallAll: Array<number>
}

export const measure = (source: string) =>
  Effect.gen(function* () {
    const { instances, fingerprint } = yield* Dataset.loadAll(source)
    const env = Layer.mergeAll(
      Models.layerEmpty,
      Corpus.layerFromQueries(
        instances.map((i) => i.query),
        fingerprint
      ),
      Layer.succeed(Plugin.Plugins, Plugin.makeRegistry(Builtins.plugins))
    ).pipe(Layer.provideMerge(ModelCache.layerMemory))
    const rows: Array<string> = []
    yield* Effect.forEach(
      specs,
      (spec) =>
        row(spec, instances).pipe(
          Effect.map((r) => rows.push(r)),
          Effect.scoped,
          Effect.provide(env)
        ),
      { discard: true }
    )
    console.log(`\n${source}: ${instances.length} instances\n`)
    console.log(
      "| retriever | consistent P | consistent R_all | contrastive P | contrastive R_all | changing P | changing R_all |"
    )
    console.log("|---|---|---|---|---|---|---|")
    for (const r of rows) console.log(r)
  })

const row = (spec: { readonly use: string } & Record<string, unknown>, instances: ReadonlyArray<Domain.Instance>) =>
  Effect.gen(function* () {
    const tallies = new Map<Domain.InstanceType, Tally>(
      Domain.cupidTypes.map((t) => [t, { precision: [], recallAll: [] }])
    )
    const plugin = yield* (yield* Plugin.Plugins).get("retriever", spec.use)
    const service = yield* Selector.build(spec)
    for (const instance of instances) {
      const r: Retriever.Retrieval =
        plugin.needsGold === true
          ? yield* (service as Retriever.GoldService).retrieve({ query: instance.query }, instance.gold)
          : yield* (service as Retriever.Service).retrieve({ query: instance.query })
      const relevant = new Set(instance.gold.sessions.filter((s) => s.label === "relevant").map((s) => s.id))
      const hits = r.selected.filter((id) => relevant.has(id)).length
      const t = tallies.get(instance.type)!
      if (r.selected.length > 0) t.precision.push(hits / r.selected.length)
      t.recallAll.push(hits === relevant.size ? 1 : 0)
    }
    const mean = (xs: ReadonlyArray<number>) =>
      xs.length === 0 ? "  -  " : (xs.reduce((a, b) => a + b, 0) / xs.length).toFixed(3)
    const { use, ...options } = spec
    return (
      `| ${use} ${Object.keys(options).length === 0 ? "" : JSON.stringify(options).replaceAll('"', "")} | ` +
      Domain.cupidTypes
        .map((type) => `${mean(tallies.get(type)!.precision)} | ${mean(tallies.get(type)!.recallAll)}`)
        .join(" | ") +
      " |"
    )
  })

const sources = process.argv.slice(2).filter((a) => a !== "selection")
const program = Effect.forEach(sources.length > 0 ? sources : ["sample", "synthetic:personas=300,seed=11"], measure, {
  discard: true
})
Effect.runPromise(program.pipe(Effect.provide(NodeContext.layer))).catch((e) => {
  console.error(e)
  process.exit(1)
})
