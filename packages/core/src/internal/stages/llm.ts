// What the LLM-backed stage plugins share: their common options and the one way they call a model.
import { Effect, Schema } from "effect"
import { stageErrorFromModel, type StageError } from "../../Errors.js"
import { sha256Hex } from "../../Hash.js"
import type * as LanguageModel from "../../LanguageModel.js"

export const modelOption = Schema.NonEmptyString.annotations({
  description: "Name of an entry of the config's `models:` section (a chat model)."
})

export const templateOption = Schema.optional(
  Schema.NonEmptyString.annotations({
    description: "Path of a prompt template to use instead of the default (relative to the working directory)."
  })
)

export const temperatureOption = Schema.optionalWith(
  Schema.Number.pipe(Schema.between(0, 2)).annotations({ description: "Sampling temperature sent with every call." }),
  { default: () => 0 }
)

export const maxTokensOption = (fallback: number) =>
  Schema.optionalWith(
    Schema.Int.pipe(Schema.positive()).annotations({ description: "Upper bound on the tokens of each answer." }),
    { default: () => fallback }
  )

/** The options of a stage that makes one kind of call to one model. */
export const callOptions = (defaultMaxTokens: number) =>
  Schema.Struct({
    model: modelOption,
    template: templateOption,
    maxTokens: maxTokensOption(defaultMaxTokens),
    temperature: temperatureOption
  })

export interface CallSettings {
  readonly temperature: number
  readonly maxTokens: number
}

/** A short digest of a prompt, for dry-run answers that must differ when their prompts do. */
export const promptTag = (prompt: string): string => sha256Hex(prompt).slice(0, 8)

/**
 * One single-message call; model failures become the stage's error. A dry-run answer given as a
 * function receives {@link promptTag} of the prompt: answers that later prompts quote must differ
 * per prompt, or a dry run would count those later calls as shared by the cache when a real run
 * would not share them.
 */
export const ask = (
  lm: LanguageModel.Service,
  stage: string,
  plugin: string,
  prompt: string,
  settings: CallSettings,
  dryRunAnswer: string | ((tag: string) => string),
  /** Whether the caller's parser can use an answer; rejected answers are not cached. */
  accept?: (text: string) => boolean
): Effect.Effect<string, StageError> =>
  lm.complete({
    messages: [{ role: "user", content: prompt }],
    temperature: settings.temperature,
    maxTokens: settings.maxTokens,
    dryRunAnswer: typeof dryRunAnswer === "string" ? dryRunAnswer : dryRunAnswer(promptTag(prompt)),
    ...(accept === undefined ? {} : { accept })
  }).pipe(
    Effect.map((c) => c.text),
    Effect.mapError(stageErrorFromModel(stage, plugin))
  )
