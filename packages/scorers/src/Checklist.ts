/**
 * Decomposers: turn a preference into a checklist of atomic requirements, the unit preference
 * match counts in. `clauses` is an offline heuristic (sentence, clause and coordination
 * boundaries); `llm` asks a configured model for a JSON checklist, as the paper does.
 *
 * @example
 * import { Checklist } from "@cupid-lab/scorers"
 * Checklist.splitClauses("Answers must be brief and use numbered steps; cite sources.")
 * // ["Answers must be brief", "use numbered steps", "cite sources"]
 */
import {
  AnswerJson,
  Errors,
  Hash,
  LanguageModel,
  type Memo,
  Models,
  PromptTemplate,
  ReferencePrompts
} from "@cupid-lab/core"
import type { FileSystem } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import { contentWords } from "./internal/Nlp.js"
import * as Template from "./internal/Template.js"
import * as ReferenceAccounting from "./ReferenceAccounting.js"
import type { Accounting } from "./ReferenceAccounting.js"

export interface Decomposer {
  /** True for offline heuristics: scores that depend on them are labelled as such. */
  readonly heuristic: boolean
  /** How reports name it, e.g. `clauses` or `llm(gpt4o)`. */
  readonly label: string
  readonly decompose: (preference: string) => Effect.Effect<ReadonlyArray<string>, Errors.StageError>
}

/**
 * Options of an LLM-backed component: a `models:` entry, its prompt pack (`project`, or `reference`
 * for the authors' prompts), an optional template file, the answer's token limit (the reference's
 * by default), the temperature (null sends none) and whether to ask the provider for a JSON object
 * (default: yes with the project's prompts, never with the authors', which do not).
 */
export const llmSpec = (defaultMaxTokens: number) =>
  Schema.Struct({
    model: Schema.String,
    prompts: Schema.optionalWith(Schema.Literal("project", "reference"), { default: () => "project" as const }),
    template: Schema.optional(Schema.String),
    json: Schema.optional(Schema.Boolean),
    maxTokens: Schema.optionalWith(Schema.Int.pipe(Schema.positive()), { default: () => defaultMaxTokens }),
    temperature: Schema.optionalWith(Schema.NullOr(Schema.Number.pipe(Schema.between(0, 2))), { default: () => 0 })
  })
/** The decomposer's options (the reference asks for at most 4096 tokens). */
export const LlmSpec = llmSpec(4096)
export type LlmSpec = typeof LlmSpec.Type

/** Whether a spec uses the authors' prompts (a `template` file replaces any pack). */
export const usesReference = (spec: Pick<LlmSpec, "prompts" | "template">): boolean =>
  spec.prompts === "reference" && spec.template === undefined

/** The request fields a spec fixes: token limit, temperature, JSON mode. */
export const requestSettings = (
  spec: Pick<LlmSpec, "prompts" | "template" | "json" | "maxTokens" | "temperature">
) => ({
  maxTokens: spec.maxTokens,
  ...(spec.temperature === null ? {} : { temperature: spec.temperature }),
  ...((spec.json ?? !usesReference(spec)) ? { responseFormat: "json" as const } : {})
})

const clauseBreak = /\s*(?:;|,|\.(?=\s|$)|[!?](?=\s|$)|\s(?:and also|as well as|and|but|while|whereas|plus)\s)\s*/i
// Periods of common abbreviations are hidden while splitting, so "e.g." does not end a sentence.
const abbreviation = /\b(e\.g|i\.e|etc|vs|cf|approx|incl|esp|min|max|no)\./gi
const hidden = "\uE000"
const leading = /^(?:(?:and|but|also|then|so|plus|while|whereas)\b[\s,]*)+/i

/**
 * Split a preference at sentence ends, semicolons, commas and the coordinators
 * "and", "but", "while", "whereas", "plus", "as well as" ("or" joins alternatives of one
 * requirement, so it does not split). Fragments without a content word are merged into the next
 * one; a preference with no split point is one item. Items keep their own words only: a subject
 * shared by coordinated requirements is not copied into each. Analyses are remembered in `memo`
 * (a sweep's) when one is given.
 */
export const splitClauses = (preference: string, memo?: Memo.Service): ReadonlyArray<string> => {
  const text = preference.replace(/\s+/g, " ").trim()
  if (text === "") return []
  const parts = text
    .replace(abbreviation, (m) => m.replace(/\./g, hidden))
    .split(clauseBreak)
    .map((p) =>
      p
        .replace(leading, "")
        .replace(/[\s.,;:!?]+$/, "")
        .replaceAll(hidden, ".")
        .trim()
    )
    .filter((p) => /[\p{L}\p{N}]/u.test(p))
  const items: Array<string> = []
  let pending = ""
  for (const p of parts) {
    const joined = pending === "" ? p : `${pending} ${p}`
    if (contentWords(joined, memo).length === 0) pending = joined
    else {
      items.push(joined)
      pending = ""
    }
  }
  if (pending !== "") {
    if (items.length === 0) items.push(pending)
    else items[items.length - 1] = `${items[items.length - 1]} ${pending}`
  }
  return items
}

/** The offline decomposer ({@link splitClauses}), remembering in `memo` when one is given. */
export const clauses = (memo?: Memo.Service): Decomposer => ({
  heuristic: true,
  label: "clauses",
  decompose: (preference) => Effect.sync(() => splitClauses(preference, memo))
})

const Answer = Schema.Union(Schema.Struct({ checklist: Schema.Array(Schema.String) }), Schema.Array(Schema.String))

/** Read a decomposer's answer: `{"checklist": [...]}` or a bare list, anywhere in the text. */
export const parseChecklist = (answer: string): Either.Either<ReadonlyArray<string>, string> => {
  const found = AnswerJson.extract(answer)
  if (found === undefined) return Either.left(`no JSON found in the answer ${AnswerJson.excerpt(answer)}`)
  return Schema.decodeUnknownEither(Answer)(found.value).pipe(
    Either.mapLeft(() => `expected {"checklist": ["...", ...]}, got ${AnswerJson.excerpt(answer)}`),
    Either.map((a) => ("checklist" in a ? a.checklist : a).map((s) => s.trim()).filter((s) => s !== ""))
  )
}

// Marked with a digest of the preference, so that in a dry run the matcher's prompts differ
// between preferences as they would with real checklists (and the cache shares them only when a
// real run would).
const dryRunAnswer = (preference: string) =>
  JSON.stringify({
    checklist: [
      `Does the answer use numbered steps (case ${Hash.sha256Hex(preference).slice(0, 8)})?`,
      "Is the answer brief?"
    ]
  })

/**
 * An LLM decomposer built from a `models:` entry; `plugin` names the scorer in errors. With
 * `accounting: reference` its answer is read as the authors' code reads it.
 */
export const llm = Effect.fn("Checklist.llm")(function* (
  plugin: string,
  spec: LlmSpec,
  accounting: Accounting = "strict"
): Effect.fn.Return<Decomposer, Errors.PluginError | Errors.ModelNotConfigured, Models.Models | FileSystem.FileSystem> {
  const lm = yield* (yield* Models.Models).languageModel(spec.model)
  const reference = usesReference(spec)
  const template = reference
    ? yield* ReferencePrompts.template("decompose", { plugin, required: ["preferences"] })
    : yield* Template.load(plugin, spec.template, "decompose.md", ["preference"], ["preference"])
  const who = `decomposer model "${spec.model}" (${lm.info.provider}/${lm.info.model})`
  const fail = (reason: string) => new Errors.StageError({ stage: "score", plugin, reason: `${who}: ${reason}` })
  const read = (text: string): Either.Either<ReadonlyArray<string>, string> => {
    if (accounting === "strict") return parseChecklist(text)
    const items = ReferenceAccounting.checklist(text)
    return items === undefined
      ? Either.left(
          `the answer has no JSON with a "checklist" list as the authors' parse_json reads it: ${AnswerJson.excerpt(text)}`
        )
      : Either.right(items)
  }
  const request = (preference: string): LanguageModel.CompletionRequest => ({
    messages: PromptTemplate.render(template, reference ? { preferences: preference } : { preference }),
    dryRunAnswer: reference
      ? `**Analysis**\n\nTwo aspects.\n\n**Checklist**\n\n\`\`\`json\n${dryRunAnswer(preference)}\n\`\`\``
      : dryRunAnswer(preference),
    ...requestSettings(spec),
    read: (text) => LanguageModel.reading(read(text)),
    ...(accounting === "strict"
      ? {
          accept: (text: string) =>
            Either.match(read(text), { onLeft: () => false, onRight: (items) => items.length > 0 })
        }
      : {})
  })
  return {
    heuristic: false,
    label: `llm(${spec.model}${reference ? ", the authors' prompt" : ""})`,
    decompose: (preference) =>
      lm.complete(request(preference)).pipe(
        Effect.mapError((e) => fail(e.message)),
        Effect.flatMap((out) =>
          Either.match(read(out.text), {
            onLeft: (reason) => Effect.fail(fail(reason)),
            onRight: (items) =>
              items.length === 0 && accounting === "strict"
                ? Effect.fail(fail("returned an empty checklist for a non-empty preference"))
                : Effect.succeed(items)
          })
        )
      )
  }
})
