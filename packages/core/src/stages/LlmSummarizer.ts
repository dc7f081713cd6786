/**
 * Summarizer `llm`: one summary per session (context bullets and preference bullets), written by a
 * configured chat model from the session's dialogue.
 *
 * The prompt is built from the session's text and nothing else, and the core model cache keys on
 * the full prompt: a session shared by the three instances of a persona and by every cell of a
 * sweep is summarized once. The session id is attached after the call, so it never splits the cache.
 *
 * In a config: `summarizer: { use: llm, model: gpt4o }` (options: template, maxTokens, temperature).
 *
 * @example
 * import { LlmSummarizer } from "@cupid-lab/core"
 * const summarizer = yield* LlmSummarizer.make({ model: "gpt4o", maxTokens: 512, temperature: 0 })
 * const { context, preferences } = yield* summarizer.summarize(session)
 */
import { Effect } from "effect"
import { dialogueText, type SessionSummary, type SessionView } from "../Domain.js"
import { type ModelNotConfigured, type PluginError, StageError } from "../Errors.js"
import { ask, callOptions } from "../internal/stages/llm.js"
import { exampleSummary, type ParsedSummary, parseSummary } from "../internal/stages/summaryFormat.js"
import { Models } from "../Models.js"
import * as Plugin from "../Plugin.js"
import type * as Summarizer from "../Summarizer.js"
import * as PromptTemplate from "./PromptTemplate.js"

export const Options = callOptions(512)
export type Options = typeof Options.Type

export const defaultTemplate = "summarize.md"
export const placeholders = ["dialogue"] as const

/** A well-formed answer in the format {@link parse} reads (what dry runs return). */
export const dryRunAnswer = exampleSummary

/** The dry-run answer to one prompt: the example with a first context item naming the prompt's tag. */
export const dryRunAnswerFor = (tag: string): string => dryRunAnswer.replace(/^Context:\n/, `Context:\n- Example session ${tag}.\n`)

/**
 * Read a model's summary: a context list and a preferences list under headings. Headings may be
 * markdown, bold or plain labels ("Context", "Session context", "Preferences", "User
 * requirements", ...); items may be bullets, numbers or plain lines; a JSON object with context and
 * preferences arrays is read too. Both lists are empty when nothing was recognized.
 */
export const parse = (answer: string): ParsedSummary => parseSummary(answer)

const excerpt = (text: string): string => {
  const t = text.replace(/\s+/g, " ").trim()
  return t.length > 120 ? `${t.slice(0, 120)}...` : t
}

export const make = (options: Options): Effect.Effect<Summarizer.Service, PluginError | ModelNotConfigured, Models> =>
  Effect.gen(function*() {
    const lm = yield* (yield* Models).languageModel(options.model)
    const template = yield* PromptTemplate.load({
      plugin: "llm",
      file: options.template ?? PromptTemplate.defaultFile(defaultTemplate),
      required: placeholders
    })
    const summarize = Effect.fn("LlmSummarizer.summarize")(function*(session: SessionView) {
      const prompt = PromptTemplate.render(template, { dialogue: dialogueText(session.dialogue) })
      const answer = yield* ask(lm, "summarize", "llm", prompt, options, dryRunAnswerFor, (a) => {
        const p = parse(a)
        return p.context.length + p.preferences.length > 0
      })
      const parsed = parse(answer)
      if (parsed.context.length + parsed.preferences.length === 0) {
        return yield* new StageError({
          stage: "summarize",
          plugin: "llm",
          reason: `session ${session.id}: no list items found under a "Context:" or "Preferences:" heading; got: "${excerpt(answer)}"`
        })
      }
      return { sessionId: session.id, context: parsed.context, preferences: parsed.preferences } satisfies SessionSummary
    })
    return { summarize }
  })

export const plugin = Plugin.summarizer({
  name: "llm",
  description: "Summarizes each session with a chat model into context bullets and preference bullets (cached per session text).",
  options: Options,
  make
})
