/**
 * The chat-completion contract. Providers (OpenAI and compatible servers, Cohere, local models)
 * implement it; stages and scorers depend only on it.
 *
 * @example
 * import { LanguageModel } from "@cupid-lab/core"
 * const out = yield* lm.complete({ messages: [{ role: "user", content: "Hi" }], temperature: 0 })
 * out.text
 */
import { type Effect, Either } from "effect"
import type { ModelError } from "./Errors.js"

export interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

export interface CompletionRequest {
  readonly messages: ReadonlyArray<ChatMessage>
  readonly temperature?: number
  readonly maxTokens?: number
  readonly topP?: number
  readonly seed?: number
  readonly stop?: ReadonlyArray<string>
  /** `json` asks the provider for a JSON object (structured output) where it supports it. */
  readonly responseFormat?: "text" | "json"
  /**
   * A well-formed example answer in the format the caller parses. Used only by dry runs (which
   * return it instead of calling the model, so the rest of the pipeline runs on); never part of the
   * cache key and never sent to a provider. A function is called only by a dry run (an answer made
   * from the prompt is not made when nothing uses it).
   */
  readonly dryRunAnswer?: string | (() => string)
  /**
   * Whether the caller can use an answer (e.g. it parses). An answer it rejects is returned but
   * never cached, and a cached answer it rejects is asked for again and replaced, so that a rerun
   * asks the model again instead of repeating a recorded failure. A refusal ({@link isRefusal}) is
   * never accepted: the call fails with a `ModelError`. Not part of the cache key; never sent to a
   * provider.
   */
  readonly accept?: (text: string) => boolean
  /**
   * How the caller reads an answer: its call's transcript records what this gives (the value read,
   * or why the answer could not be read). Never changes what is cached (that is `accept`'s); not
   * part of the cache key; never sent to a provider.
   */
  readonly read?: (text: string) => Reading
  /**
   * The caller reads an answer cut at the token limit as it is (LongMemEval's judge: its 10 tokens
   * can end a reply after the verdict), so such an answer is returned and cached instead of failing
   * as truncated. Not part of the cache key; never sent to a provider.
   */
  readonly acceptTruncated?: boolean
}

/** What a caller read from an answer: a value, or why there was none. */
export type Reading = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly reason: string }

/** A parser's `Either` (value, or why not) as a {@link Reading}. */
export const reading = (read: Either.Either<unknown, string>): Reading =>
  Either.isRight(read) ? { ok: true, value: read.right } : { ok: false, reason: read.left }

export interface Completion {
  readonly text: string
  readonly promptTokens: number
  readonly completionTokens: number
  /**
   * Why the model stopped, as the provider says (`stop`, `length`, ...). `length` means the answer
   * was cut at the token limit: `Models` makes that a failure (truncated), never an answer.
   */
  readonly finishReason?: string
  /** HTTP requests this answer took, retries included (providers that send requests set it). */
  readonly requests?: number
  /** Milliseconds spent waiting for the model's rate limiters (providers with a limiter set it). */
  readonly limiterMs?: number
  /** The provider batch job that carried this answer (batched models set it). */
  readonly batch?: string
}

export interface ModelInfo {
  readonly provider: string
  readonly model: string
  /** Generation parameters fixed by configuration; part of every cache key. */
  readonly params: Readonly<Record<string, unknown>>
  /**
   * The model's calls go as provider batch jobs, priced at `rate` times the synchronous price.
   * Not part of any cache key: a batched answer is the same answer.
   */
  readonly batch?: { readonly rate: number }
}

export interface Service {
  readonly info: ModelInfo
  readonly complete: (request: CompletionRequest) => Effect.Effect<Completion, ModelError>
  /**
   * The body the provider sends for a request, after every rename (the instructions' role, the
   * token limit's name) and with the fixed settings added, without credentials: what transcripts
   * record. Absent: the request is recorded as the stage made it.
   */
  readonly wire?: (request: CompletionRequest) => Readonly<Record<string, unknown>>
}

const refusalOpeners = [
  // "I'm sorry, but I can't help with that." / "Sorry, that's not something I can assist with."
  /^(?:(?:i'?m|i am)\s+(?:very\s+|really\s+|so\s+)?sorry|sorry|i apologi[sz]e|unfortunately|as an ai(?:\s+(?:language\s+)?model)?)\b[\s,.!:;-]*(?:but\s+)?(?:i|that|this)\b/,
  // "I can't assist with that." / "I am unable to comply."
  /^(?:i\s+(?:can'?t|cannot|can not|won'?t|will not|am\s+(?:unable|not able)\s+to|must decline)|i'm\s+(?:unable|not able)\s+to)\b/
]
const refusalVerb = new RegExp(
  String.raw`\b(?:can'?t|cannot|can not|won'?t|will not|unable to|not able to|not something i can)\b(?:\s+\w+){0,3}?\s+` +
    String.raw`(?:help(?! but)|assist|comply|fulfil+|provide (?:that|this|such|any|assistance|help)|answer (?:that|this|your)|` +
    String.raw`respond to (?:that|this|your)|engage|complete (?:that|this|your)|continue (?:with )?(?:that|this))\b|\bmust decline\b`
)

/**
 * Whether an answer is a refusal rather than an attempt: after `<think>` blocks, quotes and
 * markdown emphasis are removed, the answer is short (at most 40 words) and its opening sentence
 * (the first two when the first is a bare "Sorry!") starts with an apology, "Unfortunately", "As an
 * AI" or a first-person "I can't / I cannot / I won't / I'm unable to", and says the model cannot
 * help, assist, comply, fulfil, provide that, answer that or continue. Longer answers that merely
 * begin with an apology ("I'm sorry to hear that; here is the plan ...") are not refusals, nor is a
 * drafted "I can't make the Friday sync".
 *
 * A refusal is never cached. Callers that parse answers (those that pass `accept`) never accept
 * one: `Models` fails the call so the stage reports it, and a rerun asks again.
 *
 * @example
 * import { LanguageModel } from "@cupid-lab/core"
 * LanguageModel.isRefusal("I'm sorry, but I can't assist with that.") // true
 * LanguageModel.isRefusal("Preference: numbered steps.") // false
 */
/** An answer longer than this (after its `<think>` blocks) has more than 40 words of any markup. */
const refusalMaxChars = 4_000

export const isRefusal = (text: string): boolean => {
  const unthought = text.replace(/<think>[\s\S]*?<\/think>/gi, "")
  // Not short, whatever its markup: a model that loops answers tens of MB, too slow to clean up.
  if (unthought.length > refusalMaxChars) return false
  const plain = unthought
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[*_`"\u201C\u201D>#]/g, "")
    .replace(/\s+/g, " ")
    .trim()
    .toLowerCase()
  if (plain === "" || plain.split(" ").length > 40) return false
  const sentences = plain.match(/[^.!?]+[.!?]*/g) ?? [plain]
  const first = sentences[0]!.trim()
  const opening = first.split(" ").length <= 3 && sentences.length > 1 ? `${first} ${sentences[1]!.trim()}` : first
  return refusalOpeners.some((r) => r.test(opening)) && refusalVerb.test(opening)
}
