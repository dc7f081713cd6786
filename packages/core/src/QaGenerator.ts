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
 * With `prompt: longmemeval` it is LongMemEval's authors' reader instead
 * (`generator: { use: qa, model: gpt4o, prompt: longmemeval, reading: con, historyFormat: json }`):
 * one user message holding the prompt their `run_generation.py` builds from the whole history
 * (loaded at run time from their repository, `LongMemEvalReader`), with the question's date, their
 * token limit (800 for either reading, as their script sends, unless `maxTokens` is given) and
 * temperature 0; an answer cut at that limit, or empty, is kept as their script keeps it.
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
import {
  ask,
  modelOption,
  stageFields,
  temperatureOption,
  thinkingOption,
  withoutThinking
} from "./internal/stages/llm.js"
import * as LongMemEvalReader from "./LongMemEvalReader.js"
import type { ModelCache } from "./ModelCache.js"
import { Models } from "./Models.js"
import * as Plugin from "./Plugin.js"
import * as Python from "./Python.js"
import * as PromptTemplate from "./PromptTemplate.js"

export const name = "qa"

/** The project's prompt (`answer-question.md`), the default: `prompt` absent or `project`. */
export const ProjectOptions = Schema.Struct({ prompt: Schema.optional(Schema.Literal("project")), ...stageFields(200) })

/** LongMemEval's authors' reader: `prompt: longmemeval`, the prompt their run_generation.py builds, loaded from their repository. */
export const LongMemEvalOptions = Schema.Struct({
  prompt: Schema.Literal("longmemeval"),
  model: modelOption,
  reading: Schema.optionalWith(
    Schema.Literal(...LongMemEvalReader.readings).annotations({
      description: "direct: answer at once (their --cot false); con: extract, then reason (--cot true, their default)."
    }),
    { default: () => "con" as const }
  ),
  historyFormat: Schema.optionalWith(
    Schema.Literal(...LongMemEvalReader.historyFormats).annotations({
      description: "json: each session's turns as JSON (their default); nl: one line per turn."
    }),
    { default: () => "json" as const }
  ),
  maxTokens: Schema.optional(
    Schema.Int.pipe(Schema.positive()).annotations({
      description: "Upper bound on each answer's tokens; default theirs, 800."
    })
  ),
  temperature: temperatureOption,
  thinking: thinkingOption
})

export const Options = Schema.Union(ProjectOptions, LongMemEvalOptions)
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

const makeProject = (
  options: typeof ProjectOptions.Type
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

/** What the authors' reader needs of the input: the sessions (dated, chronological) and the question's date. */
export const longMemEvalQuestion = (
  input: Generator.GenerationInput,
  options: Pick<typeof LongMemEvalOptions.Type, "reading" | "historyFormat">
): LongMemEvalReader.Question | string => {
  if (input.evidence.summaries !== undefined)
    return "the LongMemEval authors' reader shows the sessions themselves: configure no summarizer with prompt: longmemeval"
  if (input.date === undefined)
    return "the question has no date: the LongMemEval authors' reader shows it (question_date)"
  const sessions = [...input.evidence.sessions].sort((a, b) => a.index - b.index)
  // Their prepare_prompt asserts a non-empty history.
  if (sessions.length === 0) return "no session to show: the LongMemEval authors' reader needs a non-empty history"
  const undated = sessions.find((s) => s.date === undefined)
  if (undated !== undefined)
    return `session ${undated.id} has no date: the LongMemEval authors' reader shows each session's date`
  return {
    sessions: sessions.map((s) => ({ date: s.date!, dialogue: s.dialogue })),
    question: input.request,
    date: input.date,
    reading: options.reading,
    historyFormat: options.historyFormat
  }
}

const makeLongMemEval = (
  options: typeof LongMemEvalOptions.Type
): Effect.Effect<Generator.Service, PluginError | ModelNotConfigured, Models | ModelCache> =>
  Effect.gen(function* () {
    const models = yield* Models
    const lm = yield* models.languageModel(options.model)
    const dryRun = models.dryRun === true
    const templates = yield* LongMemEvalReader.templates({ ...LongMemEvalReader.fromEnvironment(), dryRun })
    if (templates.standIn)
      yield* Effect.logWarning(
        `${name}: ${templates.source}; this dry run prices the reader's calls with stand-ins of the same size (${LongMemEvalReader.howToGet})`
      )
    const settings = {
      temperature: options.temperature,
      maxTokens: options.maxTokens ?? LongMemEvalReader.maxTokens,
      acceptTruncated: true
    }
    const generate = Effect.fn("QaGenerator.generateLongMemEval")(function* (input: Generator.GenerationInput) {
      const question = longMemEvalQuestion(input, options)
      if (typeof question === "string")
        return yield* new StageError({ stage: "generate", plugin: name, reason: question })
      const content = LongMemEvalReader.prompt(templates, question)
      // Their script keeps `completion.choices[0].message.content.strip()`, empty or not.
      const { reading } = yield* ask(
        lm,
        "generate",
        name,
        [{ role: "user", content }],
        settings,
        dryRunAnswer,
        (a) => ({ ok: true, value: Python.strip(options.thinking === "strip" ? withoutThinking(a) : a) }) as const
      )
      return { text: reading.value } satisfies Generator.GeneratedResponse
    })
    return { usesGoldPreference: false, generate }
  })

export const make = (
  options: Options
): Effect.Effect<Generator.Service, PluginError | ModelNotConfigured, Models | ModelCache | FileSystem.FileSystem> =>
  options.prompt === "longmemeval" ? makeLongMemEval(options) : makeProject(options)

export const plugin = Plugin.generator({
  name,
  description:
    "Answers a question-answering benchmark's question (LoCoMo, LongMemEval) with a chat model from the selected sessions, in a short phrase; prompt: longmemeval sends LongMemEval's authors' reader prompt instead.",
  options: Options,
  make
})
