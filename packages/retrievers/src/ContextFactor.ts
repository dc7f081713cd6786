/**
 * `context-factor`: select the prior sessions that involve the context factor the current request
 * names (CUPID's first user message of every session names its factor), then keep the current
 * evidence for it according to a policy.
 *
 * Strategies (`strategy`), for recognising the factor:
 * - `offline` (default): lexical and entity overlap with wink-nlp, no weights. The request's
 *   mentions (proper nouns, named entities, noun chunks, as lemmas) are matched against each
 *   session's first user message; a shared multi-word name counts far more than a shared word, and
 *   words the user uses in most sessions count less. Sessions scoring at least `threshold` times the
 *   best score match. A similar but different factor (another colleague, another fund) shares at
 *   most its kind word with the request, so it stays below the threshold.
 * - `embedding`: cosine similarity of first user messages and the request under an embedder
 *   (default: the offline TF-IDF + SVD one), with the same relative threshold.
 * - `llm`: a configured chat model is shown the request and the numbered first messages (in
 *   batches of `batchSize`) and answers which sessions involve the same factor, as JSON. An answer
 *   that cannot be read, or names unknown sessions, is a stage error for that instance.
 *
 * Policies (`policy`), for histories where the factor's preference changed:
 * - `all-matching`: every matching session.
 * - `most-recent` (default): the latest `m` matching sessions (CUPID shows each preference in two
 *   sessions, so m = 2 keeps the current one whether or not it changed).
 * - `detect-change`: split the matching sessions (the latest 50 at most) chronologically
 *   where the user's feedback (their turns after the first) differs most between the earlier and
 *   the later group, each group holding at least `minGroup` sessions; when the feedback within the
 *   groups is at least `minContrast` times as similar as across them, the preference changed and
 *   only the later group is kept. Otherwise (including when there are too few sessions to split)
 *   all matching sessions are kept.
 *
 * The ranking puts the kept sessions first, then the other matching ones, then the rest, each by
 * factor score. No gold is read.
 *
 * @example
 * // config: retriever: { use: context-factor, strategy: offline, policy: detect-change }
 * // config: retriever: { use: context-factor }   # offline, most-recent, m: 2
 * // config: retriever: { use: context-factor, strategy: llm, model: gpt4o, policy: most-recent, m: 2 }
 */
import { Domain, Errors, type LanguageModel, Memo, Models, Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import * as Embedder from "./Embedder.js"
import { currentGroup, feedbackText } from "./internal/ChangeDetection.js"
import * as FactorMatch from "./internal/FactorMatch.js"
import * as FactorPrompt from "./internal/FactorPrompt.js"
import * as RetrieverOptions from "./RetrieverOptions.js"
import * as Text from "./Text.js"

export const Strategy = Schema.Literal("offline", "embedding", "llm")
export type Strategy = typeof Strategy.Type
export const Policy = Schema.Literal("all-matching", "most-recent", "detect-change")
export type Policy = typeof Policy.Type

/** How many of the latest matching sessions change detection looks at. */
export const changeWindow = 50

export const options = Schema.Struct({
  strategy: Schema.optionalWith(Strategy, { default: () => "offline" as const }),
  policy: Schema.optionalWith(Policy, { default: () => "most-recent" as const }),
  /** `most-recent`: how many of the latest matching sessions to keep. */
  m: Schema.optionalWith(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)), { default: () => 2 }),
  /** `offline`, `embedding`: a session matches when its score is at least this share of the best. */
  threshold: Schema.optionalWith(Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(1)), {
    default: () => 0.6
  }),
  /** `detect-change`: within-group over across-group feedback similarity that signals a change. */
  minContrast: Schema.optionalWith(Schema.Number.pipe(Schema.greaterThanOrEqualTo(1)), { default: () => 1.2 }),
  /** `detect-change`: sessions each side of a change needs (a preference is shown at least this often). */
  minGroup: Schema.optionalWith(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)), { default: () => 2 }),
  /** `embedding` strategy only (default: the offline TF-IDF + SVD embedder). */
  embedder: Schema.optional(Embedder.Spec),
  /** `llm` strategy only: the name of a chat model under `models:`. */
  model: Schema.optional(Schema.String),
  /** `llm` strategy only: sessions shown per call (default 40). */
  batchSize: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)))
}).pipe(
  Schema.filter((o) => {
    if (o.strategy === "llm" && o.model === undefined)
      return { path: ["model"], message: "the llm strategy needs `model` (a chat model under models:)" }
    if (o.strategy !== "llm" && o.model !== undefined)
      return { path: ["model"], message: "`model` is only used by the llm strategy" }
    if (o.strategy !== "llm" && o.batchSize !== undefined)
      return { path: ["batchSize"], message: "`batchSize` is only used by the llm strategy" }
    if (o.strategy !== "embedding" && o.embedder !== undefined)
      return { path: ["embedder"], message: "`embedder` is only used by the embedding strategy" }
    return true
  })
)
export type Options = typeof options.Type

type Scorer = (input: Retriever.RetrievalInput) => Effect.Effect<ReadonlyArray<number>, Errors.StageError>

const openings = (sessions: ReadonlyArray<Domain.SessionView>) =>
  sessions.map((s) => Domain.sessionText(s, "first-user-message"))

const bestOf = (scores: ReadonlyArray<number>): number => scores.reduce((a, b) => Math.max(a, b), 0)

/** Sessions whose score is positive and at least `threshold` of the best. */
const matching = (scores: ReadonlyArray<number>, threshold: number): Array<boolean> => {
  const best = bestOf(scores)
  return scores.map((s) => best > 0 && s > 0 && s >= threshold * best)
}

/** Apply a policy to the matching sessions (chronological); returns the ids kept. */
export const applyPolicy = (
  policy: Policy,
  matched: ReadonlyArray<Domain.SessionView>,
  history: ReadonlyArray<Domain.SessionView>,
  settings: { readonly m: number; readonly minContrast: number; readonly minGroup: number },
  analyzer: Text.Analyzer
): ReadonlyArray<string> => {
  switch (policy) {
    case "all-matching":
      return matched.map((s) => s.id)
    case "most-recent":
      return matched.slice(-settings.m).map((s) => s.id)
    case "detect-change": {
      const recent = matched.slice(-changeWindow)
      const background = history.map((s) => feedbackText(s.dialogue))
      return currentGroup(
        recent,
        recent.map((s) => feedbackText(s.dialogue)),
        background,
        settings.minContrast,
        settings.minGroup,
        analyzer
      ).map((s) => s.id)
    }
  }
}

const embeddingScorer =
  (embedder: Embedder.TextEmbedder, keys: RetrieverOptions.Keys): Scorer =>
  (input) =>
    Effect.map(
      embedder.embed([
        { key: keys.request(input.query), text: input.query.request },
        ...input.query.sessions.map((s) => ({
          key: `${s.hash}:first-user-message`,
          text: Domain.sessionText(s, "first-user-message")
        }))
      ]),
      ([request, ...sessions]) => sessions.map((v) => Embedder.cosine(v, request!))
    ).pipe(Effect.mapError(Errors.stageErrorFromModel("retrieve", "context-factor")))

const llmScorer =
  (lm: LanguageModel.Service, batchSize: number): Scorer =>
  (input) => {
    const sessions = input.query.sessions
    const batches: Array<ReadonlyArray<Domain.SessionView>> = []
    for (let i = 0; i < sessions.length; i += batchSize) batches.push(sessions.slice(i, i + batchSize))
    return Effect.forEach(
      batches,
      (batch) =>
        Effect.gen(function* () {
          const ids = batch.map((s) => s.id)
          const texts = openings(batch)
          const completion = yield* lm
            .complete({
              messages: FactorPrompt.messages(
                input.query.request,
                batch.map((s, i) => ({ id: s.id, opening: texts[i]! }))
              ),
              temperature: 0,
              maxTokens: 400,
              responseFormat: "json",
              dryRunAnswer: FactorPrompt.example(ids.slice(-1))
            })
            .pipe(Effect.mapError(Errors.stageErrorFromModel("retrieve", "context-factor")))
          const parsed = FactorPrompt.parse(completion.text, new Set(ids))
          if (!parsed.ok)
            return yield* new Errors.StageError({ stage: "retrieve", plugin: "context-factor", reason: parsed.reason })
          const chosen = new Set(parsed.sessions)
          return ids.map((id) => (chosen.has(id) ? 1 : 0))
        }),
      { concurrency: 4 }
    ).pipe(Effect.map((parts) => parts.flat()))
  }

export const plugin = Plugin.retriever({
  name: "context-factor",
  description:
    "Sessions about the factor the request names (offline lexical/entity match, embedding or LLM), with a policy for changed preferences.",
  options,
  make: (o: Options) =>
    // One memo for the build and its embedder (the sweep's when there is one).
    Memo.shared(
      Effect.gen(function* () {
        const memo = yield* Memo.current
        const analyzer = Text.analyzer(memo)
        // The llm strategy answers yes or no, so every positive score matches.
        const threshold = o.strategy === "llm" ? Number.MIN_VALUE : o.threshold
        const retrieval = (sessions: ReadonlyArray<Domain.SessionView>, scores: ReadonlyArray<number>) => {
          const matches = matching(scores, threshold)
          const matched = sessions.filter((_, i) => matches[i])
          const kept = new Set(applyPolicy(o.policy, matched, sessions, o, analyzer))
          // The ranking is the match score as a share of the best, so selectors (`select:`) can
          // re-cut it; the selection is the policy's.
          const best = bestOf(scores)
          const ranking = Retriever.fromScores(
            sessions.map((s, i) => [s.id, best > 0 ? Math.max(0, scores[i]!) / best : 0] as const)
          ).ranking
          return { ranking, selected: Retriever.chronological([...kept]) }
        }
        // Offline, it is plain code.
        if (o.strategy === "offline") {
          return Retriever.plain({ needsSummaries: false }, ({ query }) =>
            query.sessions.length === 0
              ? { ranking: [], selected: [] }
              : retrieval(query.sessions, FactorMatch.scores(query.request, openings(query.sessions), analyzer))
          )
        }
        const scorer: Scorer =
          o.strategy === "embedding"
            ? embeddingScorer(yield* Embedder.make(o.embedder ?? Embedder.defaultSpec), RetrieverOptions.keys(memo))
            : llmScorer(yield* (yield* Models.Models).languageModel(o.model!), o.batchSize ?? 40)
        return {
          needsSummaries: false,
          retrieve: (input: Retriever.RetrievalInput) =>
            input.query.sessions.length === 0
              ? Effect.succeed({ ranking: [], selected: [] })
              : Effect.map(scorer(input), (scores) => retrieval(input.query.sessions, scores))
        } satisfies Retriever.Service
      })
    )
})
