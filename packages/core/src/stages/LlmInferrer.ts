/**
 * Inferrer `llm`: asks a configured chat model for a short analysis and then the user's preference
 * for the current request as one sentence of at most 30 words (the paper's inference task). The
 * prompt holds the request and the evidence: the selected sessions' dialogues, oldest first, or
 * their summaries when a summarizer is configured.
 *
 * Only the first sentence after the preference label is kept: the prompt asks for one sentence,
 * and what follows it is commentary. A first sentence longer than 30 words is kept whole rather
 * than cut, because cutting would change what it says; the preference-match scorer judges it as it
 * is. An answer without a readable preference is a `StageError` (recorded for the instance).
 *
 * In a config: `inferrer: { use: llm, model: gpt4o }` (options: template, maxTokens, temperature).
 *
 * @example
 * import { LlmInferrer } from "@cupid-lab/core"
 * LlmInferrer.parse("Analysis: ...\n**Preference:** \"Use numbered steps.\"") // ok: "Use numbered steps."
 */
import { Effect } from "effect"
import { type ModelNotConfigured, type PluginError, StageError } from "../Errors.js"
import type * as Inferrer from "../Inferrer.js"
import { renderEvidence } from "../internal/stages/evidence.js"
import { ask, callOptions } from "../internal/stages/llm.js"
import { examplePreference, type ParseResult, parsePreference } from "../internal/stages/preferenceFormat.js"
import { Models } from "../Models.js"
import * as Plugin from "../Plugin.js"
import * as PromptTemplate from "./PromptTemplate.js"

export const Options = callOptions(512)
export type Options = typeof Options.Type

export const defaultTemplate = "infer.md"
export const placeholders = ["request", "evidence"] as const

/** A well-formed answer in the format {@link parse} reads (what dry runs return). */
export const dryRunAnswer = examplePreference

/** The dry-run answer to one prompt: the example, its preference marked with the prompt's tag. */
export const dryRunAnswerFor = (tag: string): string => dryRunAnswer.replace(/\.$/, ` (case ${tag}).`)

/**
 * Read an inference answer: the sentence after the last "Preference:" label (also "Inferred
 * preference", "Final preference", "Final answer", in markdown headings, bold or bullets; on the
 * same line or the next), quotes and trailing commentary removed; the analysis is the text before
 * it. A JSON object with a "preference" field and a bare one-sentence answer are read too.
 */
export const parse = (answer: string): ParseResult => parsePreference(answer)

export const make = (options: Options): Effect.Effect<Inferrer.Service, PluginError | ModelNotConfigured, Models> =>
  Effect.gen(function*() {
    const lm = yield* (yield* Models).languageModel(options.model)
    const template = yield* PromptTemplate.load({
      plugin: "llm",
      file: options.template ?? PromptTemplate.defaultFile(defaultTemplate),
      required: placeholders
    })
    const infer = Effect.fn("LlmInferrer.infer")(function*(input: Inferrer.InferenceInput) {
      const prompt = PromptTemplate.render(template, { request: input.request, evidence: renderEvidence(input.evidence) })
      const answer = yield* ask(lm, "infer", "llm", prompt, options, dryRunAnswerFor, (a) => parse(a).ok)
      const parsed = parse(answer)
      if (!parsed.ok) return yield* new StageError({ stage: "infer", plugin: "llm", reason: parsed.reason })
      return parsed.value satisfies Inferrer.InferredPreference
    })
    return { infer }
  })

export const plugin = Plugin.inferrer({
  name: "llm",
  description: "Infers the preference for the request with a chat model: a short analysis, then one sentence (at most 30 words).",
  options: Options,
  make
})
