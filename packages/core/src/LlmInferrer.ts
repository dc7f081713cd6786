/**
 * Inferrer `llm`: asks a configured chat model for a short analysis and then the user's preference
 * for the current request as one sentence of at most 30 words (the paper's inference task). The
 * prompt holds the request and the evidence: the selected sessions' dialogues, oldest first, or
 * their summaries when a summarizer is configured.
 *
 * Prompt packs (`prompts`):
 * - `project` (default): the project's prompt (`packages/core/prompts/infer.md`);
 * - `hinted`: the project's prompt plus hints about how CUPID was built (changed requirements,
 *   similar contexts), an ablation to run on purpose;
 * - `reference`: the authors' system and user prompts (`ReferencePrompts`), the evidence rendered
 *   as their interaction log; the answer is read as their code reads it (the line after
 *   `### Most Likely Preference`). When the input asks for their reading (`reading: reference`,
 *   under the scorers' `accounting: reference`) it is the only one: an answer without the heading
 *   is a failure, an empty line after it an empty preference.
 *
 * Only the first sentence after a `Preference:` label is kept: the prompt asks for one sentence,
 * and what follows it is commentary. An answer without a readable preference, or one cut off at
 * `maxTokens`, is a `StageError` (recorded for the instance).
 *
 * In a config: `inferrer: { use: llm, model: gpt4o, prompts: reference }` (options: template,
 * maxTokens, temperature, thinking).
 *
 * @example
 * import { LlmInferrer } from "@cupid-lab/core"
 * LlmInferrer.parse("Analysis: ...\n**Preference:** \"Use numbered steps.\"") // ok: "Use numbered steps."
 */
import type { FileSystem } from "@effect/platform"
import { Effect, Schema } from "effect"
import { type ModelNotConfigured, type PluginError, StageError } from "./Errors.js"
import type * as Inferrer from "./Inferrer.js"
import { renderEvidence, renderInteractionLog } from "./internal/stages/evidence.js"
import { ask, referenceMaxTokens, stageFields, withoutThinking } from "./internal/stages/llm.js"
import {
  examplePreference,
  type ParseResult,
  parsePreference,
  parseReferencePreference,
  referenceHeading
} from "./internal/stages/preferenceFormat.js"
import { Models } from "./Models.js"
import * as Plugin from "./Plugin.js"
import * as ReferencePrompts from "./ReferencePrompts.js"
import * as PromptTemplate from "./PromptTemplate.js"

export const Prompts = Schema.Literal("project", "hinted", "reference")
export type Prompts = typeof Prompts.Type

export const Options = Schema.Struct({
  ...stageFields(referenceMaxTokens),
  prompts: Schema.optionalWith(
    Prompts.annotations({
      description:
        "project (default), hinted (the project's prompt with hints about how CUPID was built) or reference (the authors' prompts)."
    }),
    { default: () => "project" as const }
  )
})
export type Options = typeof Options.Type

export const defaultTemplates = { project: "infer.md", hinted: "infer-hinted.md" } as const
export const placeholders = ["request", "evidence"] as const
/** The slots of the authors' inference prompt. */
export const referencePlaceholders = ["curr_request", "interaction_log"] as const

/** A well-formed answer in the format {@link parse} reads (what dry runs return). */
export const dryRunAnswer = examplePreference

/** The dry-run answer to one prompt: the example, its preference marked with the prompt's tag. */
export const dryRunAnswerFor = (tag: string): string => dryRunAnswer.replace(/\.$/, ` (case ${tag}).`)

const referenceDryRunAnswer = (tag: string): string =>
  `### Analysis\n\nThe user asked twice for numbered steps.\n\n${referenceHeading}\n\nInstructions should use short numbered steps (case ${tag}).`

/**
 * Read an inference answer: the line after the authors' `### Most Likely Preference` heading;
 * else the sentence after the last "Preference:" label (also "Inferred preference", "Final
 * preference", "Final answer", in markdown headings, bold or bullets; on the same line or the
 * next), quotes and trailing commentary removed, the analysis being the text before it. A JSON
 * object with a "preference" field and a bare one-sentence answer are read too.
 */
export const parse = (answer: string, thinking: "strip" | "keep" = "strip"): ParseResult =>
  parsePreference(thinking === "strip" ? withoutThinking(answer) : answer)

/** Read an inference answer only as the authors' code reads it (`reading: reference`; see the module doc). */
export const parseReference = (answer: string, thinking: "strip" | "keep" = "strip"): ParseResult =>
  parseReferencePreference(thinking === "strip" ? withoutThinking(answer) : answer)

export const make = (
  options: Options
): Effect.Effect<Inferrer.Service, PluginError | ModelNotConfigured, Models | FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const lm = yield* (yield* Models).languageModel(options.model)
    const reference = options.prompts === "reference" && options.template === undefined
    const template = reference
      ? yield* ReferencePrompts.template("infer", { plugin: "llm", required: referencePlaceholders })
      : yield* PromptTemplate.load({
          plugin: "llm",
          file:
            options.template ??
            PromptTemplate.defaultFile(defaultTemplates[options.prompts === "reference" ? "project" : options.prompts]),
          required: placeholders
        })
    const infer = Effect.fn("LlmInferrer.infer")(function* (input: Inferrer.InferenceInput) {
      const read = (answer: string) =>
        reference && input.reading === "reference"
          ? parseReference(answer, options.thinking)
          : parse(answer, options.thinking)
      const messages = reference
        ? PromptTemplate.render(template, {
            curr_request: input.request,
            interaction_log: renderInteractionLog(input.evidence)
          })
        : PromptTemplate.render(template, { request: input.request, evidence: renderEvidence(input.evidence) })
      const { reading: parsed } = yield* ask(
        lm,
        "infer",
        "llm",
        messages,
        options,
        reference ? referenceDryRunAnswer : dryRunAnswerFor,
        read
      )
      if (!parsed.ok) return yield* new StageError({ stage: "infer", plugin: "llm", reason: parsed.reason })
      return parsed.value satisfies Inferrer.InferredPreference
    })
    return { infer }
  })

export const plugin = Plugin.inferrer({
  name: "llm",
  description:
    "Infers the preference for the request with a chat model: a short analysis, then one sentence (at most 30 words); the project's, a hinted or the authors' prompts.",
  options: Options,
  make
})
