/**
 * Generator `llm`: answers the current request with a configured chat model, from the evidence and
 * a preference chosen by the `preference` option:
 * - `inferred` (default): the preference the inferrer of the same pipeline produced;
 * - `gold`: the instance's gold preference (the paper's oracle-preference setting; the pipeline
 *   passes it because the service declares `usesGoldPreference`, and reports mark the cell);
 * - `none`: no preference; the default template for this mode has no preference slot.
 *
 * Prompt packs (`prompts`): `project` (default), or `reference`: the authors' generation prompt
 * (system and user, the evidence as their interaction log). The authors published no prompt that
 * takes a preference, so `reference` works with `preference: none` only.
 *
 * In a config: `generator: { use: llm, model: gpt4o, preference: gold }` (options: prompts,
 * template, maxTokens, temperature, thinking).
 *
 * @example
 * import { LlmGenerator } from "@cupid-lab/core"
 * const generator = yield* LlmGenerator.make({ model: "gpt4o", preference: "none", maxTokens: 2048, temperature: 0 })
 */
import type { FileSystem } from "@effect/platform"
import { Effect, Schema } from "effect"
import { type ModelNotConfigured, PluginError, StageError } from "./Errors.js"
import type * as Generator from "./Generator.js"
import { renderEvidence, renderInteractionLog } from "./internal/stages/evidence.js"
import { ask, referenceMaxTokens, stageFields, withoutThinking } from "./internal/stages/llm.js"
import { Models } from "./Models.js"
import * as Plugin from "./Plugin.js"
import * as ReferencePrompts from "./ReferencePrompts.js"
import * as PromptTemplate from "./PromptTemplate.js"

export const PreferenceSource = Schema.Literal("inferred", "gold", "none")
export type PreferenceSource = typeof PreferenceSource.Type

export const Options = Schema.Struct({
  ...stageFields(referenceMaxTokens),
  preference: Schema.optionalWith(
    PreferenceSource.annotations({
      description: "Which preference the answer should satisfy: inferred, gold (oracle) or none."
    }),
    { default: () => "inferred" as const }
  ),
  prompts: Schema.optionalWith(
    Schema.Literal("project", "reference").annotations({
      description: "project (default) or reference (the authors' generation prompt; preference: none only)."
    }),
    { default: () => "project" as const }
  )
})
export type Options = typeof Options.Type

export const defaultTemplates: Readonly<Record<PreferenceSource, string>> = {
  inferred: "generate.md",
  gold: "generate.md",
  none: "generate-without-preference.md"
}

/** What dry runs return; any non-empty text is a valid answer. */
export const dryRunAnswer = "Here is a draft reply to your request, shaped by what you asked for in earlier sessions."

/** The dry-run answer to one prompt: the example marked with the prompt's tag. */
export const dryRunAnswerFor = (tag: string): string => dryRunAnswer.replace(/\.$/, ` (case ${tag}).`)

/** The reply text: reasoning blocks (`<think>...</think>`, unless `thinking: keep`) and surrounding whitespace removed; undefined when empty. */
export const parse = (answer: string, thinking: "strip" | "keep" = "strip"): string | undefined => {
  const text = (thinking === "strip" ? withoutThinking(answer) : answer).trim()
  return text === "" ? undefined : text
}

const templateSpec = (options: Options, file: string): PromptTemplate.Spec =>
  options.preference === "none"
    ? {
        plugin: "llm",
        file,
        required: ["request"],
        optional: ["evidence"],
        unavailable: { preference: "the generator runs with preference: none" }
      }
    : { plugin: "llm", file, required: ["request", "preference"], optional: ["evidence"] }

export const make = (
  options: Options
): Effect.Effect<Generator.Service, PluginError | ModelNotConfigured, Models | FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const lm = yield* (yield* Models).languageModel(options.model)
    const reference = options.prompts === "reference" && options.template === undefined
    if (reference && options.preference !== "none") {
      return yield* new PluginError({
        plugin: "llm",
        reason: `prompts: reference has no prompt for preference: ${options.preference} (the authors published a generation prompt without a preference); use prompts: project`
      })
    }
    const template = reference
      ? yield* ReferencePrompts.template("generate", { plugin: "llm", required: ["curr_request", "interaction_log"] })
      : yield* PromptTemplate.load(
          templateSpec(options, options.template ?? PromptTemplate.defaultFile(defaultTemplates[options.preference]))
        )
    const fail = (reason: string) => new StageError({ stage: "generate", plugin: "llm", reason })
    const generate = Effect.fn("LlmGenerator.generate")(function* (input: Generator.GenerationInput) {
      const values: Record<string, string> = reference
        ? { curr_request: input.request, interaction_log: renderInteractionLog(input.evidence) }
        : { request: input.request, evidence: renderEvidence(input.evidence) }
      if (options.preference !== "none") {
        if (input.preference === undefined || input.preference.trim() === "") {
          return yield* fail(
            options.preference === "gold"
              ? "preference: gold, but no gold preference was passed"
              : "preference: inferred, but no inferred preference was passed (configure an inferrer, or use preference: gold or none)"
          )
        }
        values.preference = input.preference
      }
      const messages = PromptTemplate.render(template, values)
      const { reading } = yield* ask(lm, "generate", "llm", messages, options, dryRunAnswerFor, (a) => {
        const text = parse(a, options.thinking)
        return text === undefined
          ? ({ ok: false, reason: "the model returned an empty reply" } as const)
          : ({ ok: true, value: text } as const)
      })
      if (!reading.ok) return yield* fail(reading.reason)
      const text = reading.value
      return { text } satisfies Generator.GeneratedResponse
    })
    return { usesGoldPreference: options.preference === "gold", generate }
  })

export const plugin = Plugin.generator({
  name: "llm",
  description:
    "Answers the request with a chat model, given the evidence and the inferred, gold (oracle) or no preference.",
  options: Options,
  make
})
