/**
 * Option pieces the retriever plugins share (`k`, `representation`, `granularity`) and the one
 * place that turns a retrieval input into the session (or turn) texts a plugin ranks.
 *
 * @example
 * import { RetrieverOptions } from "@cupid-lab/retrievers"
 * const options = Schema.Struct({ k: RetrieverOptions.k(2), representation: RetrieverOptions.representation("dialogue") })
 * const docs = yield* RetrieverOptions.sessionDocs(input, "user-turns", "my-retriever")
 * const turns = RetrieverOptions.turnDocs(input, "user-turns") // one doc per kept turn
 * const keys = RetrieverOptions.keys(yield* Memo.current) // in make
 * keys.history(input, "user-turns", docs) // hashed by the first cell that asks, then reused
 */
import { Domain, Errors, Hash, Memo, type Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"

/** How many sessions to pass on (a whole number >= 1). */
export const k = (defaultK: number) =>
  Schema.optionalWith(
    Schema.Int.pipe(Schema.greaterThanOrEqualTo(1, { message: () => "k must be a whole number >= 1" })),
    {
      default: () => defaultK
    }
  )

/** Which text of a session is ranked: `dialogue`, `user-turns`, `first-user-message` or `summary`. */
export const representation = (defaultRepresentation: Domain.SessionRepresentation) =>
  Schema.optionalWith(Domain.SessionRepresentation, { default: () => defaultRepresentation })

/** A session's text in one representation, with a short key that identifies that text for memos. */
export interface SessionDoc {
  readonly id: string
  readonly index: number
  /** Equal keys mean equal texts: the session's content hash and representation (summaries: text hash). */
  readonly key: string
  /** Built on first read: a plugin that finds the key in its memo never pays for the text. */
  readonly text: string
}

/** Identifies a history's content in one representation: equal keys mean the same sessions in the same order. */
export const historyKey = (docs: ReadonlyArray<SessionDoc>): string =>
  `history:${Hash.sha256Hex(docs.map((d) => `${d.id}=${d.key}`).join("\n")).slice(0, 24)}`

/** The key under which a text is memoized, for texts that are not session texts (e.g. requests). */
export const textKey = (text: string): string => `text:${Hash.contentHash(text)}`

/** Keys of a query that every cell of a sweep asks for: computed once per query, then reused. */
export interface Keys {
  /** {@link historyKey} of the docs of `input` in `representation` (summaries: hashed per call, they differ per cell). */
  readonly history: (
    input: Retriever.RetrievalInput,
    representation: Domain.SessionRepresentation,
    docs: ReadonlyArray<SessionDoc>
  ) => string
  /** {@link historyKey} of the turn docs of `input` in `representation` ({@link turnDocs}). */
  readonly turns: (
    input: Retriever.RetrievalInput,
    representation: Domain.SessionRepresentation,
    docs: ReadonlyArray<TurnDoc>
  ) => string
  /** {@link textKey} of the request. */
  readonly request: (query: Domain.Query) => string
}

const queryKeys = Memo.namespace<string>("retrievers/query-keys", 8)

/** Keys kept on each query object in `memo` (a sweep hands every cell the same query object). */
export const keys = (memo: Memo.Service): Keys => ({
  history: (input, representation, docs) =>
    representation === "summary"
      ? historyKey(docs)
      : memo.attached(input.query, queryKeys).getOrSet(`history:${representation}`, () => historyKey(docs)),
  turns: (input, representation, docs) =>
    memo.attached(input.query, queryKeys).getOrSet(`turns:${representation}`, () => historyKey(docs)),
  request: (query) => memo.attached(query, queryKeys).getOrSet("request", () => textKey(query.request))
})

const lazyDoc = (
  session: Domain.SessionView,
  representation: Exclude<Domain.SessionRepresentation, "summary">
): SessionDoc => {
  let text: string | undefined
  return {
    id: session.id,
    index: session.index,
    key: `${session.hash}:${representation}`,
    get text() {
      return (text ??= Domain.sessionText(session, representation))
    }
  }
}

/**
 * The session texts of a retrieval input in one representation. A missing summary (the retriever
 * asked for summaries but the pipeline supplied none for a session) is a stage error.
 */
export const sessionDocs = (
  input: Retriever.RetrievalInput,
  representation: Domain.SessionRepresentation,
  plugin: string
): Effect.Effect<ReadonlyArray<SessionDoc>, Errors.StageError> =>
  Errors.attempt(() => sessionDocsNow(input, representation, plugin))

/** {@link sessionDocs} as plain code, for a plain retriever (`Retriever.plain`): throws its StageError. */
export const sessionDocsNow = (
  input: Retriever.RetrievalInput,
  representation: Domain.SessionRepresentation,
  plugin: string
): ReadonlyArray<SessionDoc> => {
  if (representation !== "summary") return input.query.sessions.map((s) => lazyDoc(s, representation))
  return input.query.sessions.map((s) => {
    const summary = input.summaries?.get(s.id)
    if (summary === undefined) {
      throw new Errors.StageError({
        stage: "retrieve",
        plugin,
        reason: `session ${s.id} has no summary; the summary representation needs a summarizer in the pipeline`
      })
    }
    const text = Domain.summaryText(summary)
    return { id: s.id, index: s.index, key: textKey(text), text }
  })
}

/**
 * Whether a ranker scores whole sessions (`session`) or each turn of a session's text (`turn`;
 * the session then ranks at its best turn's score and the retrieval keeps the turn ranking,
 * LongMemEval's turn-level index).
 */
export const Granularity = Schema.Literal("session", "turn")
export type Granularity = typeof Granularity.Type

/** `session` when absent. */
export const granularity = Schema.optionalWith(Granularity, { exact: true })

/** Turn granularity needs turns: a summary has none. Checked when the plugin is built. */
export const checkGranularity = (
  plugin: string,
  representation: Domain.SessionRepresentation,
  granularity: Granularity | undefined
): Effect.Effect<void, Errors.PluginError> =>
  granularity === "turn" && representation === "summary"
    ? Effect.fail(
        new Errors.PluginError({
          plugin,
          reason:
            "granularity: turn ranks the turns of a session; representation summary has none (use dialogue, user-turns or first-user-message)"
        })
      )
    : Effect.void

/** One turn of a session, in one representation: `id` is its session's, `turn` its 0-based place in the dialogue. */
export interface TurnDoc extends SessionDoc {
  readonly turn: number
}

const turnText = (message: Domain.Message, representation: Exclude<Domain.SessionRepresentation, "summary">): string =>
  representation === "dialogue" ? Domain.dialogueText([message]) : message.content

/**
 * The turns of a retrieval input that a representation keeps, each its own text: every message
 * (`dialogue`, with its speaker as in the session text), the user's messages (`user-turns`), or
 * the first user message (`first-user-message`).
 */
export const turnDocs = (
  input: Retriever.RetrievalInput,
  representation: Exclude<Domain.SessionRepresentation, "summary">
): ReadonlyArray<TurnDoc> =>
  input.query.sessions.flatMap((s) => {
    const kept = s.dialogue.flatMap((m, turn) =>
      representation === "dialogue" || m.role === "user" ? [{ m, turn }] : []
    )
    return (representation === "first-user-message" ? kept.slice(0, 1) : kept).map(({ m, turn }): TurnDoc => {
      let text: string | undefined
      return {
        id: s.id,
        index: s.index,
        turn,
        key: `${s.hash}#${turn}:${representation}`,
        get text() {
          return (text ??= turnText(m, representation))
        }
      }
    })
  })
