/**
 * Summarizer `llm`: a summary of each session (context bullets and preference bullets) written by a
 * configured chat model.
 * - `scope: log` (default, the paper's procedure): one call over every session to summarize, which
 *   answers with JSON holding, per session, an analysis, context bullets and preference bullets
 *   (the paper's Fig. 23 shape; see {@link parseLog}).
 * - `scope: session`: one call per session whose prompt holds that session's text only, so a
 *   session shared by the three instances of a persona and by every cell is summarized once (the
 *   model cache keys on the full prompt). No summary then sees the other sessions.
 *
 * In a config: `summarizer: { use: llm, model: gpt4o }` (options: scope, template, maxTokens,
 * temperature, thinking).
 *
 * @example
 * import { LlmSummarizer } from "@cupid-lab/core"
 * const summarizer = yield* LlmSummarizer.make({ model: "gpt4o", scope: "log", maxTokens: 4096, temperature: 0, thinking: "strip" })
 * const summaries = yield* summarizer.summarize(sessions)
 */
import { Effect, Schema } from "effect"
import { dialogueText, type SessionSummary, type SessionView } from "./Domain.js"
import { type ModelNotConfigured, type PluginError, StageError } from "./Errors.js"
import { ask, stageFields, withoutThinking } from "./internal/stages/llm.js"
import { prefixExcerpt } from "./internal/stages/text.js"
import { exampleSummary, type ParsedSummary, parseSummary } from "./internal/stages/summaryFormat.js"
import { Models } from "./Models.js"
import * as Plugin from "./Plugin.js"
import type * as Summarizer from "./Summarizer.js"
import * as PromptTemplate from "./PromptTemplate.js"

export const Options = Schema.Struct({
  ...stageFields(4096),
  scope: Schema.optionalWith(
    Schema.Literal("log", "session").annotations({
      description: "log: one call over all sessions (the paper's); session: one call per session."
    }),
    { default: () => "log" as const }
  )
})
export type Options = typeof Options.Type

export const defaultTemplates = { log: "summarize-log.md", session: "summarize.md" } as const
export const placeholders = { log: ["log"], session: ["dialogue"] } as const

/** A well-formed per-session answer in the format {@link parse} reads (what dry runs return). */
export const dryRunAnswer = exampleSummary

/** The dry-run answer to one prompt: the example with a first context item naming the prompt's tag. */
export const dryRunAnswerFor = (tag: string): string =>
  dryRunAnswer.replace(/^Context:\n/, `Context:\n- Example session ${tag}.\n`)

const dryRunLogAnswer =
  (n: number) =>
  (tag: string): string =>
    JSON.stringify({
      summaries: Array.from({ length: n }, (_, i) => ({
        session_id: i + 1,
        analysis: "The user corrected the format twice.",
        context: [`Example session ${i + 1} (${tag}).`],
        preferences: ["Use short numbered steps."]
      }))
    })

/**
 * Read a model's per-session summary: a context list and a preferences list under headings.
 * Headings may be markdown, bold or plain labels ("Context", "Session context", "Preferences",
 * "User requirements", ...); items may be bullets, numbers or plain lines; a JSON object with
 * context and preferences arrays is read too. Both lists are empty when nothing was recognized.
 */
export const parse = (answer: string): ParsedSummary => parseSummary(answer)

const strings = (v: unknown): ReadonlyArray<string> | undefined =>
  Array.isArray(v) && v.every((x) => typeof x === "string")
    ? v.map((x: string) => x.trim()).filter((x) => x !== "")
    : undefined

/** A log summary entry's session number: `session_id` (the paper's Fig. 23) or `session`, as 3, "3" or "Session 3". */
const sessionNumber = (entry: Record<string, unknown>): number | undefined => {
  const raw = entry["session_id"] ?? entry["session"]
  if (typeof raw === "number") return raw
  const digits = typeof raw === "string" ? /^\s*(?:session\s*)?(\d+)\s*$/i.exec(raw) : null
  return digits === null ? undefined : Number(digits[1])
}

/**
 * Read a log summary for `n` sessions: `{"summaries": [{session_id, analysis, context,
 * preferences}]}` (the paper's Fig. 23 shape, which the prompt asks for), `{"sessions": [{session,
 * ...}]}` (the shape an earlier prompt asked for) or a bare list; one entry per session, numbered
 * 1..n or in order.
 */
export const parseLog = (
  answer: string,
  n: number
):
  | { readonly ok: true; readonly value: ReadonlyArray<ParsedSummary> }
  | { readonly ok: false; readonly reason: string } => {
  // The JSON of the first code fence, else the whole answer.
  const text = /```(?:json)?\s*([\s\S]*?)```/.exec(answer)?.[1] ?? answer
  let value: unknown
  try {
    value = JSON.parse(text.trim())
  } catch {
    value = undefined
  }
  const object = value !== null && typeof value === "object" ? (value as Record<string, unknown>) : undefined
  const list = Array.isArray(value) ? value : (object?.["summaries"] ?? object?.["sessions"])
  if (!Array.isArray(list))
    return { ok: false, reason: `expected {"summaries": [...]} with ${n} entries; got: "${excerpt(answer)}"` }
  if (list.length !== n) return { ok: false, reason: `expected ${n} session summaries, got ${list.length}` }
  const out: Array<ParsedSummary | undefined> = new Array(n)
  for (const [i, e] of list.entries()) {
    const o = (e ?? {}) as Record<string, unknown>
    const context = strings(o["context"]),
      preferences = strings(o["preferences"])
    if (context === undefined || preferences === undefined) {
      return { ok: false, reason: `session entry ${i + 1}: expected "context" and "preferences" lists of strings` }
    }
    const at = (sessionNumber(o) ?? i + 1) - 1
    if (!Number.isInteger(at) || at < 0 || at >= n || out[at] !== undefined)
      return {
        ok: false,
        reason: `session entry ${i + 1}: session number ${String(o["session_id"] ?? o["session"])} is not one of 1..${n} or repeats`
      }
    out[at] = { context, preferences }
  }
  return { ok: true, value: out as Array<ParsedSummary> }
}

const excerpt = (text: string): string => prefixExcerpt(text, 120, (t) => t.replace(/\s+/g, " ").trim())

const logOf = (sessions: ReadonlyArray<SessionView>): string =>
  sessions.map((s, i) => `### Session ${i + 1}\n${dialogueText(s.dialogue)}`).join("\n\n")

export const make = (options: Options): Effect.Effect<Summarizer.Service, PluginError | ModelNotConfigured, Models> =>
  Effect.gen(function* () {
    const lm = yield* (yield* Models).languageModel(options.model)
    const template = yield* PromptTemplate.load({
      plugin: "llm",
      file: options.template ?? PromptTemplate.defaultFile(defaultTemplates[options.scope]),
      required: placeholders[options.scope],
      ...(options.scope === "log" ? { optional: ["count"] } : {})
    })
    const text = (answer: string) => (options.thinking === "strip" ? withoutThinking(answer) : answer)
    const fail = (reason: string) => new StageError({ stage: "summarize", plugin: "llm", reason })

    const one = (session: SessionView) =>
      Effect.gen(function* () {
        const messages = PromptTemplate.render(template, { dialogue: dialogueText(session.dialogue) })
        const read = (a: string) => {
          const p = parse(text(a))
          return p.context.length + p.preferences.length > 0
            ? ({ ok: true, value: p } as const)
            : ({ ok: false, reason: `no list items found under a "Context:" or "Preferences:" heading` } as const)
        }
        const { text: answer, reading } = yield* ask(lm, "summarize", "llm", messages, options, dryRunAnswerFor, read)
        if (!reading.ok) return yield* fail(`session ${session.id}: ${reading.reason}; got: "${excerpt(answer)}"`)
        const parsed = reading.value
        return {
          sessionId: session.id,
          context: parsed.context,
          preferences: parsed.preferences
        } satisfies SessionSummary
      })

    const log = (sessions: ReadonlyArray<SessionView>) =>
      Effect.gen(function* () {
        const ordered = [...sessions].sort((a, b) => a.index - b.index)
        const messages = PromptTemplate.render(template, { log: logOf(ordered), count: String(ordered.length) })
        const read = (a: string) => parseLog(text(a), ordered.length)
        const { reading: parsed } = yield* ask(
          lm,
          "summarize",
          "llm",
          messages,
          options,
          dryRunLogAnswer(ordered.length),
          read
        )
        if (!parsed.ok) return yield* fail(`log of ${ordered.length} sessions: ${parsed.reason}`)
        const byId = new Map(ordered.map((s, i) => [s.id, parsed.value[i]!]))
        return sessions.map((s) => ({ sessionId: s.id, ...byId.get(s.id)! }) satisfies SessionSummary)
      })

    const summarize = Effect.fn("LlmSummarizer.summarize")(function* (sessions: ReadonlyArray<SessionView>) {
      if (sessions.length === 0) return []
      return options.scope === "log" ? yield* log(sessions) : yield* Effect.forEach(sessions, one, { concurrency: 4 })
    })
    return { summarize }
  })

export const plugin = Plugin.summarizer({
  name: "llm",
  description:
    "Summarizes sessions with a chat model into context and preference bullets: the whole log in one call (default) or one call per session.",
  options: Options,
  make
})
