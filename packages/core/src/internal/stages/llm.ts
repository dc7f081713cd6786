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
    description: "Path of a prompt template to use instead of the prompt pack's (relative to the working directory)."
  })
)

export const temperatureOption = Schema.optionalWith(
  Schema.NullOr(Schema.Number.pipe(Schema.between(0, 2))).annotations({
    description:
      "Sampling temperature sent with every call; null sends none (reasoning models such as o3-mini reject it)."
  }),
  { default: () => 0 }
)

export const maxTokensOption = (fallback: number) =>
  Schema.optionalWith(
    Schema.Int.pipe(Schema.positive()).annotations({
      description: "Upper bound on the tokens of each answer; an answer cut off there is a failure (truncated)."
    }),
    { default: () => fallback }
  )

/** `strip` removes `<think>` blocks before an answer is read or passed on; `keep` passes the text as the model returned it. */
export const thinkingOption = Schema.optionalWith(
  Schema.Literal("strip", "keep").annotations({
    description:
      "strip: <think>...</think> blocks are removed from answers before they are read or passed on; keep: the answer as returned."
  }),
  { default: () => "strip" as const }
)

/** The reference's token limit for the model under test (its example subject model wrapper). */
export const referenceMaxTokens = 8192

/** The option fields every LLM stage shares; a stage adds its own (prompt pack, scope, preference). */
export const stageFields = (defaultMaxTokens: number) => ({
  model: modelOption,
  template: templateOption,
  maxTokens: maxTokensOption(defaultMaxTokens),
  temperature: temperatureOption,
  thinking: thinkingOption
})

export interface CallSettings {
  readonly temperature: number | null
  readonly maxTokens: number
  /** Read an answer cut at the token limit as it is (a benchmark's authors' code does), instead of failing it. */
  readonly acceptTruncated?: boolean
}

/** A short digest of a prompt, for dry-run answers that must differ when their prompts do. */
export const promptTag = (messages: ReadonlyArray<LanguageModel.ChatMessage>): string =>
  sha256Hex(messages.map((m) => `${m.role}\n${m.content}`).join("\n\n")).slice(0, 8)

/** `<think>` blocks removed, also a leading one whose opening tag was in the prompt (some servers send only the close). */
export const withoutThinking = (answer: string): string =>
  answer.replace(/<think>[\s\S]*?<\/think>/gi, "").replace(/^[\s\S]*?<\/think>/i, "")

/**
 * One call; model failures become the stage's error. A dry-run answer given as a function receives
 * {@link promptTag} of the messages: answers that later prompts quote must differ per prompt, or a
 * dry run would count those later calls as shared by the cache when a real run would not share them.
 * Gives the answer and what `read` made of it: an answer is read once (one of MB is slow to read).
 */
export const ask = <R extends LanguageModel.Reading>(
  lm: LanguageModel.Service,
  stage: string,
  plugin: string,
  messages: ReadonlyArray<LanguageModel.ChatMessage>,
  settings: CallSettings,
  dryRunAnswer: string | ((tag: string) => string),
  /** How the caller reads an answer: recorded in the call's transcript; answers it cannot read are not cached. */
  read: (text: string) => R
): Effect.Effect<{ readonly text: string; readonly reading: R }, StageError> => {
  // `accept`, the transcript and the caller read the same answer.
  let last: { readonly text: string; readonly reading: R } | undefined
  const readOnce = (text: string) => (last?.text === text ? last : (last = { text, reading: read(text) }))
  return lm
    .complete({
      messages,
      ...(settings.temperature === null ? {} : { temperature: settings.temperature }),
      maxTokens: settings.maxTokens,
      ...(settings.acceptTruncated === true ? { acceptTruncated: true } : {}),
      dryRunAnswer: typeof dryRunAnswer === "string" ? dryRunAnswer : () => dryRunAnswer(promptTag(messages)),
      accept: (text) => readOnce(text).reading.ok,
      read: (text) => readOnce(text).reading
    })
    .pipe(
      Effect.map((c) => readOnce(c.text)),
      Effect.mapError(stageErrorFromModel(stage, plugin))
    )
}
