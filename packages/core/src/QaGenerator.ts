/**
 * Generator `qa`: answers a question-answering benchmark's question (LoCoMo, LongMemEval) with a
 * configured chat model, from the sessions the retriever selected (or their summaries, when a
 * summarizer is configured). Each session is shown oldest first with its date, when the benchmark
 * dates its sessions, and every turn with its speaker. The answer is the model's reply, trimmed,
 * `<think>` blocks removed; scorers such as `locomo-f1` compare it with the gold answer, which this
 * stage never sees (a generator receives the question and the evidence only).
 *
 * The prompt (`answer-question.md`) is the project's own: it asks for a short phrase in the
 * conversations' words, or "No information available" when they do not hold the answer (the
 * phrase LoCoMo's adversarial category accepts). It is not the LoCoMo authors' prompt, which adds
 * a date hint to temporal questions and turns adversarial ones into a two-way choice, both read
 * from the question's category (gold here).
 *
 * In a config: `generator: { use: qa, model: gpt4o }` (options: template, maxTokens, temperature,
 * thinking).
 *
 * @example
 * import { QaGenerator } from "@cupid-lab/core"
 * const generator = yield* QaGenerator.make({ model: "gpt4o", maxTokens: 200, temperature: 0, thinking: "strip" })
 * const { text } = yield* generator.generate({ request: "Where did Mira move in 2022?", evidence })
 */
import type { FileSystem } from "@effect/platform"
import { Effect, Schema } from "effect"
import { dialogueText } from "./Domain.js"
import { type ModelNotConfigured, type PluginError, StageError } from "./Errors.js"
import type { Evidence } from "./Evidence.js"
import type * as Generator from "./Generator.js"
import { noEvidence, renderEvidence } from "./internal/stages/evidence.js"
import { ask, stageFields, withoutThinking } from "./internal/stages/llm.js"
import { Models } from "./Models.js"
import * as Plugin from "./Plugin.js"
import * as PromptTemplate from "./PromptTemplate.js"

export const name = "qa"

export const Options = Schema.Struct(stageFields(200))
export type Options = typeof Options.Type

export const defaultTemplate = "answer-question.md"

/** What dry runs answer. */
export const dryRunAnswer = "No information available"

/** `YYYY-MM-DDTHH:MM` as `YYYY-MM-DD HH:MM`. */
const shownDate = (date: string): string => date.replace("T", " ")

/** The evidence block: summaries when a summarizer ran, else each session's dialogue under its number and date. */
export const renderSessions = (evidence: Evidence): string => {
  if (evidence.summaries !== undefined) return renderEvidence(evidence)
  const sessions = [...evidence.sessions].sort((a, b) => a.index - b.index)
  if (sessions.length === 0) return noEvidence
  return sessions
    .map(
      (s, i) =>
        `### Session ${i + 1}${s.date === undefined ? "" : ` (${shownDate(s.date)})`}\n${dialogueText(s.dialogue)}`
    )
    .join("\n\n")
}

export const make = (
  options: Options
): Effect.Effect<Generator.Service, PluginError | ModelNotConfigured, Models | FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const lm = yield* (yield* Models).languageModel(options.model)
    const template = yield* PromptTemplate.load({
      plugin: name,
      file: options.template ?? PromptTemplate.defaultFile(defaultTemplate),
      required: ["question"],
      optional: ["evidence"]
    })
    const generate = Effect.fn("QaGenerator.generate")(function* (input: Generator.GenerationInput) {
      const messages = PromptTemplate.render(template, {
        question: input.request,
        evidence: renderSessions(input.evidence)
      })
      const { reading } = yield* ask(lm, "generate", name, messages, options, dryRunAnswer, (a) => {
        const text = (options.thinking === "strip" ? withoutThinking(a) : a).trim()
        return text === ""
          ? ({ ok: false, reason: "the model returned an empty answer" } as const)
          : ({ ok: true, value: text } as const)
      })
      if (!reading.ok) return yield* new StageError({ stage: "generate", plugin: name, reason: reading.reason })
      return { text: reading.value } satisfies Generator.GeneratedResponse
    })
    return { usesGoldPreference: false, generate }
  })

export const plugin = Plugin.generator({
  name,
  description:
    "Answers a question-answering benchmark's question (LoCoMo, LongMemEval) with a chat model from the selected sessions, in a short phrase.",
  options: Options,
  make
})
