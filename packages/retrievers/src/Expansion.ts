/**
 * Key expansion for the text rankers (`bm25`, `embedding`): each session gets a second text, its
 * key phrases, its summary or the facts the user states in it, joined to what is ranked as
 * LongMemEval does (Wu et al., ICLR 2025, section 5.2):
 *
 * - `join: merge` (default): the session is ranked on its text followed by the expansion.
 * - `join: replace`: on the expansion alone.
 * - `join: separate`: the expansion is a second document of the session; the session ranks at the
 *   better of the two.
 *
 * `keyphrases` are read offline from the session text (noun phrases by Text.analyze, the most
 * frequent first). `summary` is the pipeline summarizer's summary of the session (the retriever
 * then asks for summaries, `needsSummaries`). `facts` asks the model named by `expandModel` for
 * the facts the user states; like every call it goes through the model cache, so a session's facts
 * are asked once and shared by every instance and cell that holds it. Expansions read the visible
 * session text only.
 *
 * @example
 * // config: retriever: { use: bm25, expand: keyphrases, join: merge }
 * //         retriever: { use: bm25, expand: facts, expandModel: gpt4o, join: separate }
 * import { Expansion } from "@cupid-lab/retrievers"
 * Expansion.keyphrases("I bought a new road bike for the Alpine tour.") // "alpine tour; new road bike" (most frequent first)
 */
import { Domain, Errors, type LanguageModel, Memo, Models, type Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import * as RetrieverOptions from "./RetrieverOptions.js"
import * as Text from "./Text.js"

export const Kind = Schema.Literal("keyphrases", "summary", "facts")
export type Kind = typeof Kind.Type
export const Join = Schema.Literal("separate", "merge", "replace")
export type Join = typeof Join.Type

/** The options a text ranker adds for expansion. */
export const fields = {
  /** What to add to each session's key; none when absent. */
  expand: Schema.optionalWith(Kind, { exact: true }),
  /** How the expansion joins the session text; `merge` when absent. */
  join: Schema.optionalWith(Join, { exact: true }),
  /** `expand: facts`: a chat model under the config's `models:`. */
  expandModel: Schema.optionalWith(Schema.String, { exact: true })
}

export interface Options {
  readonly expand?: Kind
  readonly join?: Join
  readonly expandModel?: string
}

/** Key phrases kept per session. */
export const maxPhrases = 12

/** Key phrases of recent sessions, by session hash (every cell of a sweep asks for the same sessions). */
const phrases = Memo.namespace<string>("expansion/keyphrases", 50_000)

/**
 * Noun phrases of a text (runs of content words without a phrase break, holding a noun or a
 * name), most frequent first, then in order of appearance, joined with "; ". `analyze` is
 * Text.analyze unless a build passes its memo's analyzer.
 */
export const keyphrases = (text: string, analyze: (text: string) => Text.Analysis = Text.analyze): string => {
  const counts = new Map<string, number>()
  let run: Array<Text.Word> = []
  const flush = () => {
    if (run.some((w) => w.pos === "NOUN" || w.pos === "PROPN")) {
      const phrase = run.map((w) => w.lemma).join(" ")
      counts.set(phrase, (counts.get(phrase) ?? 0) + 1)
    }
    run = []
  }
  for (const word of analyze(text).words) {
    if (word === undefined || word.chunkStart || word.pos === "VERB") flush()
    if (word !== undefined && word.pos !== "VERB") run.push(word)
  }
  flush()
  const order = [...counts.keys()]
  return [...counts]
    .sort((a, b) => b[1] - a[1] || order.indexOf(a[0]) - order.indexOf(b[0]))
    .slice(0, maxPhrases)
    .map(([p]) => p)
    .join("; ")
}

/** The prompt that asks for a session's facts (this project's own wording). */
export const factsMessages = (dialogue: string): ReadonlyArray<LanguageModel.ChatMessage> => [
  {
    role: "system",
    content: "You read a conversation between a user and an assistant and list what it tells about the user."
  },
  {
    role: "user",
    content: [
      "Conversation:",
      dialogue,
      "",
      "List every fact the user states or implies about themselves: their circumstances, possessions, relationships, events (with any dates), plans and preferences.",
      "Write one short sentence per line, nothing else. If the user tells nothing about themselves, write NONE."
    ].join("\n")
  }
]

/** The facts of an answer: its non-empty lines, without list markers; none for NONE. */
export const parseFacts = (text: string): ReadonlyArray<string> =>
  text
    .split("\n")
    .map((l) => l.replace(/^\s*(?:[-*•]|\d+[.)])\s*/, "").trim())
    .filter((l) => l !== "" && l.toUpperCase() !== "NONE")

export interface Expander {
  readonly needsSummaries: boolean
  /** The expansion of each session of the input, in order. */
  readonly texts: (input: Retriever.RetrievalInput) => Effect.Effect<ReadonlyArray<string>, Errors.StageError>
}

/**
 * The expander of a plugin's options, or undefined without `expand`. Refused: `facts` without
 * `expandModel`, and expansion with `granularity: turn` (expansions are of whole sessions).
 */
export const make = (
  plugin: string,
  o: Options & { readonly granularity?: RetrieverOptions.Granularity }
): Effect.Effect<Expander | undefined, Errors.PluginError | Errors.ModelNotConfigured, Models.Models> =>
  Effect.gen(function* () {
    if (o.expand === undefined) return undefined
    if (o.granularity === "turn") {
      return yield* new Errors.PluginError({
        plugin,
        reason: "expand adds keys to whole sessions; use it with granularity: session"
      })
    }
    switch (o.expand) {
      case "keyphrases": {
        const memo = yield* Memo.current
        const text = Text.analyzer(memo)
        const store = memo.store(phrases)
        return {
          needsSummaries: false,
          texts: (input) =>
            Effect.sync(() =>
              input.query.sessions.map((s) =>
                store.getOrSet(s.hash, () => keyphrases(s.dialogue.map((m) => m.content).join("\n"), text.analyze))
              )
            )
        }
      }
      case "summary":
        return {
          needsSummaries: true,
          texts: (input) =>
            Effect.forEach(input.query.sessions, (s) => {
              const summary = input.summaries?.get(s.id)
              return summary === undefined
                ? Effect.fail(
                    new Errors.StageError({
                      stage: "retrieve",
                      plugin,
                      reason: `session ${s.id} has no summary; expand: summary needs a summarizer in the pipeline`
                    })
                  )
                : Effect.succeed(Domain.summaryText(summary))
            })
        }
      case "facts": {
        if (o.expandModel === undefined)
          return yield* new Errors.PluginError({
            plugin,
            reason: "expand: facts needs expandModel, a chat model under models:"
          })
        const lm = yield* (yield* Models.Models).languageModel(o.expandModel)
        return {
          needsSummaries: false,
          texts: (input) =>
            Effect.forEach(
              input.query.sessions,
              (s) =>
                lm
                  .complete({
                    messages: factsMessages(Domain.dialogueText(s.dialogue)),
                    temperature: 0,
                    maxTokens: 400,
                    dryRunAnswer: "The user has a dog."
                  })
                  .pipe(
                    Effect.map((c) => parseFacts(c.text).join("\n")),
                    Effect.mapError(Errors.stageErrorFromModel("retrieve", plugin))
                  ),
              { concurrency: 4 }
            )
        }
      }
    }
  })

/**
 * The documents a ranker scores once a session's expansion is joined: one per session for `merge`
 * and `replace`, two (the text, then the expansion) for `separate`. Documents keep their
 * session's id; {@link bestPerSession} folds their scores back.
 */
export const join = (
  docs: ReadonlyArray<RetrieverOptions.SessionDoc>,
  expansions: ReadonlyArray<string>,
  how: Join = "merge"
): ReadonlyArray<RetrieverOptions.SessionDoc> => {
  const doc = (d: RetrieverOptions.SessionDoc, text: string): RetrieverOptions.SessionDoc => ({
    id: d.id,
    index: d.index,
    key: RetrieverOptions.textKey(text),
    text
  })
  switch (how) {
    case "merge":
      return docs.map((d, i) => doc(d, expansions[i] === "" ? d.text : `${d.text}\n${expansions[i]}`))
    case "replace":
      return docs.map((d, i) => doc(d, expansions[i]!))
    case "separate":
      return [...docs, ...docs.map((d, i) => doc(d, expansions[i]!))]
  }
}

/** Each session at its best document's score, in first-seen order. */
export const bestPerSession = (
  docs: ReadonlyArray<RetrieverOptions.SessionDoc>,
  scores: ReadonlyArray<number>
): Array<readonly [string, number]> => {
  const best = new Map<string, number>()
  docs.forEach((d, i) => best.set(d.id, Math.max(best.get(d.id) ?? -Infinity, scores[i]!)))
  return [...best]
}
