import { Corpus, Domain, type LanguageModel, ModelCache, Models, Plugin, type Trace } from "@cupid-lab/core"
import { NodeContext } from "@effect/platform-node"
import { Effect, Layer } from "effect"
import { plugins } from "../src/Builtins.js"

type Label = Domain.RelevanceLabel

const current = {
  factor: "Grandma's recipe binder",
  preference: "Recipes must use metric units and list prep time first."
}

/** An instance whose prior sessions carry the given labels, in chronological order (s1, s2, ...). */
export const makeInstance = (
  labels: ReadonlyArray<Label>,
  gold: { readonly preference?: string; readonly checklist?: ReadonlyArray<string> } = {}
): Domain.Instance => {
  const preference = gold.preference ?? current.preference
  return Domain.fromRow({
    persona_id: "p1",
    instance_type: "changing",
    current_request: "Can you write up the lemon cake recipe for the binder?",
    current_context_factor: current.factor,
    current_contextual_preference: preference,
    current_checklist: gold.checklist ?? ["Does the recipe use metric units?", "Is the prep time listed first?"],
    prior_interactions: labels.map((label, i) => ({
      context_factor: label === "other" ? `Other factor ${i}` : current.factor,
      contextual_preference: label === "relevant" ? preference : `Old preference ${i}`,
      dialogue: [
        { role: "user" as const, content: `Session ${i + 1} request` },
        { role: "assistant" as const, content: `Session ${i + 1} answer` }
      ]
    }))
  })
}

export const makeTrace = (instance: Domain.Instance, extra: Partial<Trace.Trace> = {}): Trace.Trace => ({
  instanceId: instance.id,
  instanceType: instance.type,
  scores: {},
  usage: [],
  timings: {},
  ...extra
})

/** A language model that answers with `answer(request)` and keeps every request it received. */
export const scriptedModel = (
  answer: (request: LanguageModel.CompletionRequest) => string,
  model = "scripted-1"
): LanguageModel.Service & { readonly requests: Array<LanguageModel.CompletionRequest> } => {
  const requests: Array<LanguageModel.CompletionRequest> = []
  return {
    requests,
    info: { provider: "test", model, params: { temperature: 0 } },
    complete: (request) =>
      Effect.sync(() => {
        requests.push(request)
        const text = answer(request)
        return { text, promptTokens: 10, completionTokens: text.length }
      })
  }
}

export const userText = (request: LanguageModel.CompletionRequest): string =>
  request.messages
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .join("\n")

export const allText = (request: LanguageModel.CompletionRequest): string =>
  request.messages.map((m) => m.content).join("\n")

/** Everything a plugin's `make` may ask for: the given models, a memory cache, an empty corpus, this package's registry, the Node platform. */
export const pluginEnv = (
  bundles: Readonly<Record<string, Models.ModelBundle>> = {},
  options: Models.MakeOptions = {}
) =>
  Layer.mergeAll(
    Models.layer(bundles, options),
    Corpus.layerFromQueries([], "empty"),
    Layer.succeed(Plugin.Plugins, Plugin.makeRegistry(plugins)),
    NodeContext.layer
  ).pipe(Layer.provideMerge(ModelCache.layerMemory))

/** Decode config-style options and build the scorer, as the runner does. */
export const buildScorer = (use: string, raw: Record<string, unknown> = {}) => Plugin.build("scorer", { use, ...raw })
