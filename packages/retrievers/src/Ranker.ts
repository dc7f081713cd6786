/**
 * Rankers: the common case of a retriever, one that scores each prior session against the request
 * on its own. Its author writes a name, a description, an options schema and `score`; the framework
 * does the rest:
 *
 * - the texts: the request and each session in the configured `representation` (an option every
 *   ranker gets: `dialogue` by default, `user-turns`, `first-user-message`, or `summary`, which makes
 *   the pipeline summarize every session first), each with its stemmed content words
 *   ({@link Text.terms}), built only when `score` reads them and kept in the sweep's memo, so a
 *   session shared by many instances and cells is analysed once;
 * - the ranking: sessions by score, ties to the more recent session (`Retriever.fromScores`);
 * - the cut: the config's `select` or `k` (short for `select: { top: k }`), else the top `top`
 *   (2 unless given);
 * - errors: a `score` that throws or returns a number that is not finite fails the instance with a
 *   `StageError` naming the plugin and the session.
 *
 * A retriever that needs the whole history at once (BM25's statistics), a model, a policy of its own
 * or other retrievers is a `Plugin.retriever`.
 *
 * @example
 * import { Ranker } from "@cupid-lab/retrievers"
 * import { Schema } from "effect"
 *
 * export const plugin = Ranker.plugin({
 *   name: "shared-words",
 *   description: "Sessions by how many of the request's content words they contain.",
 *   options: Schema.Struct({}),
 *   score: (query, session) => new Set(query.terms.filter((t) => session.terms.includes(t))).size
 * })
 * // config: retriever: { use: shared-words, representation: user-turns, k: 3 }
 */
import { type Domain, Errors, Memo, Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import * as RetrieverOptions from "./RetrieverOptions.js"
import * as Text from "./Text.js"

/** A text as a ranker reads it. */
export interface Representation {
  readonly text: string
  /** Stemmed content words of `text`, in order, repeats kept ({@link Text.terms}). */
  readonly terms: ReadonlyArray<string>
}

/** The request. */
export type Query = Representation

/** A prior session in the configured representation. */
export interface Session extends Representation {
  readonly id: string
  /** Its position in the history, 0 for the oldest. */
  readonly index: number
}

/** The option every ranker has, whatever its own options. */
export interface Common {
  readonly representation: Domain.SessionRepresentation
}

export interface Spec<O, I> {
  /** As configs write it after `use:` (kebab-case). */
  readonly name: string
  /** One line for `--help`, the config reference and reports. */
  readonly description: string
  /** The ranker's own options (a `Schema.Struct`) with their defaults; `representation` is added to them. */
  readonly options: Plugin.OptionsSchema<O, I>
  /** How well a session fits the request: higher is better; a finite number. */
  readonly score: (query: Query, session: Session, options: O & Common) => number
  /** The default cut: the `top` best sessions (2 unless given). */
  readonly top?: number
  /** The default representation (`dialogue` unless given). */
  readonly representation?: Domain.SessionRepresentation
}

export const plugin = <O, I>(
  spec: Spec<O, I>
): Plugin.RetrieverPlugin<O & Common, I & { readonly representation?: Domain.SessionRepresentation | undefined }> =>
  Plugin.retriever({
    name: spec.name,
    description: spec.description,
    options: Schema.extend(
      spec.options,
      Schema.Struct({ representation: RetrieverOptions.representation(spec.representation ?? "dialogue") })
    ),
    defaultSelect: { top: spec.top ?? 2 },
    make: (o) =>
      // Texts are analysed in the sweep's memo (core's Memo): once per text for every cell.
      Effect.map(Memo.current, (memo): Retriever.Service => {
        const analyzer = Text.analyzer(memo)
        const fail = (reason: string) => new Errors.StageError({ stage: "retrieve", plugin: spec.name, reason })
        return Retriever.plain({ needsSummaries: o.representation === "summary" }, (input) => {
          const docs = RetrieverOptions.sessionDocsNow(input, o.representation, spec.name)
          const query = new LazyText(
            () => input.query.request,
            () => analyzer.terms(input.query.request)
          )
          const scores: Array<readonly [string, number]> = []
          for (const doc of docs) {
            const session = new LazySession(
              doc.id,
              doc.index,
              () => doc.text,
              () => analyzer.terms(doc.text)
            )
            let value: number
            try {
              value = spec.score(query, session, o)
            } catch (e) {
              throw fail(`score threw on session ${doc.id}: ${e instanceof Error ? e.message : String(e)}`)
            }
            if (!Number.isFinite(value))
              throw fail(`score of session ${doc.id} is ${value}; a score must be a finite number`)
            scores.push([doc.id, value])
          }
          return Retriever.fromScores(scores)
        })
      })
  })

/** A text and its terms, each computed on first read. */
class LazyText implements Representation {
  private t: string | undefined
  private ts: ReadonlyArray<string> | undefined
  constructor(
    private readonly readText: () => string,
    private readonly readTerms: () => ReadonlyArray<string>
  ) {}
  get text(): string {
    return (this.t ??= this.readText())
  }
  get terms(): ReadonlyArray<string> {
    return (this.ts ??= this.readTerms())
  }
}

class LazySession extends LazyText implements Session {
  constructor(
    readonly id: string,
    readonly index: number,
    text: () => string,
    terms: () => ReadonlyArray<string>
  ) {
    super(text, terms)
  }
}
