/**
 * Matchers: rate how well a preference covers each item of a checklist, as fully (1), partially
 * (0.5) or not (0) covered. `llm` asks a configured model once per checklist (the paper's
 * procedure; also works with PrefMatcher-7B behind an OpenAI-compatible server). `lexical` is an
 * offline heuristic: the share of an item's content words found in the preference.
 *
 * @example
 * import { Coverage } from "@cupid-lab/scorers"
 * Coverage.lexicalCoverage("Are the steps numbered?", "Number every step.") // 1
 * const ratings = yield* Coverage.lexical(Coverage.defaultLexical).rate(items, preference)
 */
import { AnswerJson, Errors, LanguageModel, type Memo, Models, PromptTemplate, ReferencePrompts } from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import { llmSpec, requestSettings, usesReference } from "./Checklist.js"
import { type ContentWord, contentWords } from "./internal/Nlp.js"
import * as Template from "./internal/Template.js"
import * as ReferenceAccounting from "./ReferenceAccounting.js"
import { synonyms } from "./internal/WordNet.js"

export interface Matcher {
  readonly heuristic: boolean
  /** How reports name it, e.g. `lexical` or `llm(prefmatcher)`. */
  readonly label: string
  /** One rating (1, 0.5 or 0) per item, in item order. */
  readonly rate: (
    items: ReadonlyArray<string>,
    preference: string
  ) => Effect.Effect<ReadonlyArray<number>, Errors.StageError>
  /**
   * The authors' count for `accounting: reference` (LLM matchers only): the summed label scores of
   * the answer, or undefined when their code cannot read it.
   */
  readonly rateReference?: (
    items: ReadonlyArray<string>,
    preference: string
  ) => Effect.Effect<number | undefined, Errors.StageError>
}

/** Options of the lexical matcher. */
export const LexicalOptions = Schema.Struct({
  /** Coverage at or above which an item counts as fully covered. */
  full: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1)), { default: () => 0.7 }),
  /** Coverage at or above which an item counts as partially covered. */
  partial: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1)), { default: () => 0.4 }),
  /** Checklist scaffolding left out of an item's words ("Does the response ..."). */
  ignore: Schema.optionalWith(Schema.Array(Schema.String), {
    default: () => ["response", "answer", "output", "assistant", "ai"]
  })
}).pipe(Schema.filter((o) => o.partial <= o.full || `partial (${o.partial}) must not exceed full (${o.full})`))
export type LexicalOptions = typeof LexicalOptions.Type

export const defaultLexical: LexicalOptions = {
  full: 0.7,
  partial: 0.4,
  ignore: ["response", "answer", "output", "assistant", "ai"]
}

const found = (
  w: ContentWord,
  pref: ReadonlyArray<ContentWord>,
  lemmas: ReadonlySet<string>,
  memo: Memo.Service | undefined
): boolean => {
  if (lemmas.has(w.lemma) || pref.some((p) => p.stem === w.stem)) return true
  if (w.pos !== undefined) {
    for (const s of synonyms(w.lemma, w.pos, memo)) if (lemmas.has(s)) return true
  }
  // Synonymy is symmetric within a synset, but the two sides may have been tagged differently.
  return pref.some((p) => p.pos !== undefined && p.pos !== w.pos && synonyms(p.lemma, p.pos, memo).has(w.lemma))
}

/**
 * Share of the item's distinct content lemmas (stopwords, punctuation and `ignore` words left out)
 * that the preference contains as the same lemma, the same Porter stem, or a WordNet synonym of
 * the lemma (in its three most frequent senses). An item without content words scores 0. Analyses
 * and synonyms are remembered in `memo` (a sweep's) when one is given.
 */
export const lexicalCoverage = (
  item: string,
  preference: string,
  ignore: ReadonlyArray<string> = defaultLexical.ignore,
  memo?: Memo.Service
): number => coverageAgainst(item, contentWords(preference, memo), ignore, memo)

const coverageAgainst = (
  item: string,
  pref: ReadonlyArray<ContentWord>,
  ignore: ReadonlyArray<string>,
  memo: Memo.Service | undefined
): number => {
  const seen = new Set<string>()
  const words = contentWords(item, memo).filter((w) => {
    if (ignore.includes(w.lemma) || seen.has(w.lemma)) return false
    seen.add(w.lemma)
    return true
  })
  if (words.length === 0) return 0
  const lemmas = new Set(pref.map((p) => p.lemma))
  return words.filter((w) => found(w, pref, lemmas, memo)).length / words.length
}

/** Map a coverage share to a rating with the configured thresholds. */
export const ratingOf = (coverage: number, options: Pick<LexicalOptions, "full" | "partial">): number =>
  coverage >= options.full ? 1 : coverage >= options.partial ? 0.5 : 0

/** The offline matcher (a heuristic: its scores are labelled so wherever they appear); remembers in `memo` when given. */
export const lexical = (options: LexicalOptions, memo?: Memo.Service): Matcher => ({
  heuristic: true,
  label: "lexical",
  rate: (items, preference) =>
    Effect.sync(() => {
      const pref = contentWords(preference, memo)
      return items.map((item) => ratingOf(coverageAgainst(item, pref, options.ignore, memo), options))
    })
})

/** Read one rating: "Fully Covered", "fully", "1", 0.5, "Partially covered", "Not covered", ... */
export const parseRating = (value: unknown): number | undefined => {
  if (typeof value === "number") return value === 1 || value === 0.5 || value === 0 ? value : undefined
  if (typeof value === "boolean") return value ? 1 : 0
  if (typeof value !== "string") return undefined
  const s = value
    .toLowerCase()
    .replace(/[*_"'`]/g, "")
    .replace(/\s+/g, " ")
    .replace(/[.:]+$/, "")
    .trim()
  if (/^\d+(?:\.\d+)?$/.test(s) || /^\.\d+$/.test(s)) return parseRating(Number(s))
  if (/\bpartial(?:ly)?\b/.test(s)) return 0.5
  if (/^(?:not|no|none|uncovered)\b/.test(s) || /\bnot covered\b/.test(s)) return 0
  if (/^(?:fully|full|completely|complete)\b/.test(s) || s === "covered" || s === "yes" || s === "true") return 1
  return undefined
}

const ratingKeys = ["label", "rating", "score", "coverage", "match", "covered", "result"] as const

const listOf = (value: unknown): ReadonlyArray<unknown> | undefined => {
  if (Array.isArray(value)) return value
  if (value === null || typeof value !== "object") return undefined
  const obj = value as Record<string, unknown>
  for (const k of ["results", "ratings", "checklist", "items", "matches"])
    if (Array.isArray(obj[k])) return obj[k] as Array<unknown>
  if (ratingKeys.some((k) => obj[k] !== undefined)) return [obj]
  const arrays = Object.values(obj).filter(Array.isArray)
  if (arrays.length === 1) return arrays[0] as Array<unknown>
  // A map from item (or item number) to rating, in item order.
  const values = Object.values(obj)
  return values.length > 0 && values.every((v) => parseRating(v) !== undefined) ? values : undefined
}

/**
 * Read a matcher's answer for `n` items: a JSON list (bare, or under `results`) of labels,
 * numbers or objects with a `label` (and optionally an `index`); as a last resort, exactly `n`
 * "... covered" labels in the text. Returns the reason when the answer cannot be read.
 */
export const parseRatings = (answer: string, n: number): Either.Either<ReadonlyArray<number>, string> => {
  const expected = `expected ${n} rating${n === 1 ? "" : "s"} (Fully / Partially / Not covered)`
  const json = AnswerJson.extract(answer)
  const list = json === undefined ? undefined : listOf(json.value)
  if (list !== undefined) {
    const entries = list.map((el) => {
      if (el !== null && typeof el === "object" && !Array.isArray(el)) {
        const o = el as Record<string, unknown>
        const key = ratingKeys.find((k) => o[k] !== undefined)
        const index = Number(o["index"] ?? o["id"] ?? NaN)
        return {
          rating: key === undefined ? undefined : parseRating(o[key]),
          raw: key === undefined ? el : o[key],
          index
        }
      }
      return { rating: parseRating(el), raw: el, index: NaN }
    })
    const bad = entries.findIndex((e) => e.rating === undefined)
    if (bad >= 0) return Either.left(`${expected}; entry ${bad + 1} is ${JSON.stringify(entries[bad]!.raw)}`)
    if (entries.length !== n) return Either.left(`${expected}, got ${entries.length}: ${AnswerJson.excerpt(answer)}`)
    if (entries.every((e) => Number.isInteger(e.index))) {
      const byIndex = new Map(entries.map((e) => [e.index, e.rating!]))
      const out = Array.from({ length: n }, (_, i) => byIndex.get(i + 1))
      if (out.some((r) => r === undefined))
        return Either.left(`${expected} with indexes 1..${n}: ${AnswerJson.excerpt(answer)}`)
      return Either.right(out as Array<number>)
    }
    return Either.right(entries.map((e) => e.rating!))
  }
  const labels = [...answer.matchAll(/\b(fully|partially|not)\s+covered\b/gi)].map((m) => parseRating(m[1]!)!)
  if (labels.length === n) return Either.right(labels)
  return Either.left(`${expected}; could not read them from ${AnswerJson.excerpt(answer)}`)
}

const dryRunAnswer = (n: number) =>
  JSON.stringify({ results: Array.from({ length: n }, (_, i) => ({ index: i + 1, label: "Partially Covered" })) })

/** The matcher's options (the reference allows 8192 tokens). */
export const MatcherSpec = llmSpec(8192)
export type MatcherSpec = typeof MatcherSpec.Type

/** The model id PrefMatcher-7B is published under; the authors' code gives it its own prompt. */
export const prefmatcherModel = "kixlab/prefmatcher-7b"

/**
 * An LLM matcher built from a `models:` entry; `plugin` names the scorer in errors. With
 * `prompts: reference` it sends the authors' matcher prompt with their 8 annotated examples, or,
 * when the model is `kixlab/prefmatcher-7b`, the prompt PrefMatcher was fine-tuned on (as their
 * code chooses).
 */
export const llm = Effect.fn("Coverage.llm")(function* (
  plugin: string,
  spec: MatcherSpec
): Effect.fn.Return<Matcher, Errors.PluginError | Errors.ModelNotConfigured, Models.Models | FileSystem.FileSystem> {
  const lm = yield* (yield* Models.Models).languageModel(spec.model)
  const reference = usesReference(spec)
  const prefmatcher = lm.info.model === prefmatcherModel
  // Rendered once: the same block opens every matching call's system message.
  const examples = reference && !prefmatcher ? yield* ReferencePrompts.matcherExamples : undefined
  const examplesText = examples === undefined ? "" : ReferencePrompts.renderMatcherExamples(examples)
  const template = !reference
    ? yield* Template.load(
        plugin,
        spec.template,
        "match.md",
        ["preference", "checklist", "count"],
        ["preference", "checklist"]
      )
    : prefmatcher
      ? yield* ReferencePrompts.template("matchPrefmatcher", { plugin, required: ["preference", "checklist"] })
      : yield* ReferencePrompts.template("match", { plugin, required: ["examples", "preference", "checklist"] })
  const who = `matcher model "${spec.model}" (${lm.info.provider}/${lm.info.model})`
  const fail = (reason: string) => new Errors.StageError({ stage: "score", plugin, reason: `${who}: ${reason}` })
  const values = (items: ReadonlyArray<string>, preference: string) =>
    reference
      ? {
          preference,
          checklist: ReferencePrompts.numberedChecklist(items),
          // A dry run without the authors' files prices the call without the examples' text.
          ...(prefmatcher ? {} : { examples: examplesText })
        }
      : { preference, checklist: ReferencePrompts.numberedChecklist(items), count: String(items.length) }
  const request = (
    items: ReadonlyArray<string>,
    preference: string,
    strict: boolean
  ): LanguageModel.CompletionRequest => {
    const answer = dryRunAnswer(items.length)
    return {
      messages: PromptTemplate.render(template, values(items, preference)),
      dryRunAnswer: reference && !prefmatcher ? `\`\`\`json\n${answer}\n\`\`\`` : answer,
      ...requestSettings(spec),
      read: strict
        ? (text) => LanguageModel.reading(parseRatings(text, items.length))
        : (text) => ({ ok: true, value: ReferenceAccounting.matcherSum(text, prefmatcher) }),
      ...(strict ? { accept: (text: string) => Either.isRight(parseRatings(text, items.length)) } : {})
    }
  }
  return {
    heuristic: false,
    label: `llm(${spec.model}${reference ? ", the authors' prompt" : ""})`,
    rate: (items, preference) =>
      items.length === 0
        ? Effect.succeed([])
        : lm.complete(request(items, preference, true)).pipe(
            Effect.mapError((e) => fail(e.message)),
            Effect.flatMap((out) =>
              Either.match(parseRatings(out.text, items.length), {
                onLeft: (reason) => Effect.fail(fail(reason)),
                onRight: Effect.succeed
              })
            )
          ),
    rateReference: (items, preference) =>
      lm.complete(request(items, preference, false)).pipe(
        Effect.mapError((e) => fail(e.message)),
        Effect.map((out) => ReferenceAccounting.matcherSum(out.text, prefmatcher))
      )
  }
})
