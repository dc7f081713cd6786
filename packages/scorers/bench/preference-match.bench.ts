// Speed and memory of the offline scorers on CUPID-sized synthetic instances (756 instances, a
// ~18-word preference and 3 checklist items each, 8 prior sessions). The first pass includes
// loading the wink-nlp model and every WordNet lookup; the second pass hits the synonym cache.
import { Corpus, Domain, ModelCache, Models, Plugin, type Trace } from "@cupid-lab/core"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import * as Coverage from "../src/Coverage.js"
import * as PreferenceMatch from "../src/PreferenceMatch.js"
import * as Retrieval from "../src/Retrieval.js"
import * as Statistics from "../src/Statistics.js"

const nouns = [
  "report",
  "plan",
  "recipe",
  "schedule",
  "summary",
  "table",
  "chart",
  "budget",
  "lesson",
  "email",
  "draft",
  "checklist",
  "timeline",
  "agenda",
  "proposal",
  "review",
  "workout",
  "itinerary",
  "script",
  "analysis",
  "example",
  "source",
  "step",
  "section",
  "diagram",
  "estimate",
  "deadline",
  "risk",
  "metric",
  "goal"
]
const adjectives = [
  "brief",
  "formal",
  "detailed",
  "friendly",
  "visual",
  "numbered",
  "concise",
  "technical",
  "playful",
  "strict",
  "practical",
  "clear",
  "short",
  "structured",
  "simple",
  "precise",
  "warm",
  "direct",
  "thorough",
  "quantitative"
]
const verbs = [
  "include",
  "list",
  "avoid",
  "highlight",
  "compare",
  "explain",
  "cite",
  "separate",
  "prioritize",
  "summarize",
  "estimate",
  "justify"
]
const rng = Statistics.rng(42)
const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(rng() * xs.length)]!

const preference = () =>
  `${pick(nouns)}s must be ${pick(adjectives)} and ${pick(verbs)} ${pick(adjectives)} ${pick(nouns)}s, with a ${pick(adjectives)} ${pick(nouns)} for each ${pick(nouns)}.`
const item = () => `Does the ${pick(nouns)} ${pick(verbs)} ${pick(adjectives)} ${pick(nouns)}s?`

const instances = Array.from({ length: 756 }, (_, i) => {
  const pref = preference()
  return Domain.fromRow({
    persona_id: `p${Math.floor(i / 3)}`,
    instance_type: (["consistent", "contrastive", "changing"] as const)[i % 3]!,
    current_request: "Please draft it.",
    current_context_factor: "F",
    current_contextual_preference: pref,
    current_checklist: [item(), item(), item()],
    prior_interactions: Array.from({ length: 8 }, (_, s) => ({
      context_factor: s % 3 === 0 ? "F" : `G${s}`,
      contextual_preference: s % 3 === 0 ? pref : "other",
      dialogue: [{ role: "user" as const, content: `session ${i}-${s}` }]
    }))
  })
})
const traces: Array<Trace.Trace> = instances.map((instance) => ({
  instanceId: instance.id,
  instanceType: instance.type,
  inference: { preference: preference(), analysis: "" },
  retrieval: {
    ranking: instance.query.sessions.map((s, r) => ({ sessionId: s.id, score: -r })),
    selected: ["s1", "s2", "s3"]
  },
  scores: {},
  usage: [],
  timings: {}
}))

const mb = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MB`

const program = Effect.gen(function* () {
  const service = yield* PreferenceMatch.plugin.make({
    decomposer: "clauses",
    matcher: "lexical",
    lexical: Coverage.defaultLexical,
    accounting: "strict"
  })
  for (const pass of ["cold", "warm"]) {
    const t0 = performance.now()
    let f1 = 0
    for (let i = 0; i < instances.length; i++) {
      const s = yield* service.score({ instance: instances[i]!, trace: traces[i]! })
      const v = s["inference.f1"]
      if (typeof v === "number") f1 += v
    }
    const ms = performance.now() - t0
    console.log(
      `preference-match (clauses + lexical), ${pass}: ${instances.length} instances in ${ms.toFixed(0)} ms (${(ms / instances.length).toFixed(2)} ms/instance), mean F1 ${(f1 / instances.length).toFixed(3)}`
    )
  }
  const t1 = performance.now()
  for (let rep = 0; rep < 10; rep++)
    for (let i = 0; i < instances.length; i++) Retrieval.compute(instances[i]!, traces[i]!, [2, 4])
  console.log(`retrieval: ${10 * instances.length} instance scorings in ${(performance.now() - t1).toFixed(0)} ms`)
  globalThis.gc?.()
  const mem = process.memoryUsage()
  console.log(`memory after scoring: heap ${mb(mem.heapUsed)}, rss ${mb(mem.rss)}`)
})

const env = Layer.mergeAll(
  Models.layerEmpty,
  Corpus.layerFromQueries([], "none"),
  Layer.succeed(Plugin.Plugins, Plugin.makeRegistry([])),
  NodeContext.layer
).pipe(Layer.provideMerge(ModelCache.layerMemory))

Effect.runPromise(program.pipe(Effect.scoped, Effect.provide(env)))
