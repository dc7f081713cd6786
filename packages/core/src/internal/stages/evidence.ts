// How the evidence appears in prompts: numbered sessions, oldest first, as dialogues or as summaries;
// in the project's layout or as the authors' interaction log.
import { dialogueText, type SessionSummary } from "../../Domain.js"
import type { Evidence } from "../../Evidence.js"
import { interactionLog } from "../../ReferencePrompts.js"
import { strip } from "../../Python.js"

export const noEvidence = "(No earlier sessions were selected for this request.)"

export const summaryBlock = (s: SessionSummary): string =>
  [
    "Context:",
    ...(s.context.length > 0 ? s.context.map((c) => `- ${c}`) : ["- (none)"]),
    "Preferences:",
    ...(s.preferences.length > 0 ? s.preferences.map((p) => `- ${p}`) : ["- (none)"])
  ].join("\n")

/** Summaries in the sessions' chronological order (summaries of unknown sessions keep their place at the end). */
export const orderedSummaries = (evidence: Evidence): ReadonlyArray<SessionSummary> => {
  const position = new Map(evidence.sessions.map((s) => [s.id, s.index]))
  return [...(evidence.summaries ?? [])]
    .map((s, i) => ({ s, key: position.get(s.sessionId) ?? Number.MAX_SAFE_INTEGER, i }))
    .sort((a, b) => a.key - b.key || a.i - b.i)
    .map(({ s }) => s)
}

/** The evidence block of a project prompt: summaries when present, else the dialogues. */
export const renderEvidence = (evidence: Evidence): string => {
  if (evidence.summaries !== undefined) {
    const summaries = orderedSummaries(evidence)
    if (summaries.length === 0) return noEvidence
    return summaries.map((s, i) => `### Session ${i + 1} (summary)\n${summaryBlock(s)}`).join("\n\n")
  }
  const sessions = [...evidence.sessions].sort((a, b) => a.index - b.index)
  if (sessions.length === 0) return noEvidence
  return sessions.map((s, i) => `### Session ${i + 1}\n${dialogueText(s.dialogue)}`).join("\n\n")
}

/**
 * The evidence as the authors' interaction log: the selected sessions rendered as their
 * `format_interaction_log` renders a history, numbered from 1. Summaries (which the authors' code
 * does not make) take each session's place, laid out the same way.
 */
export const renderInteractionLog = (evidence: Evidence): string => {
  if (evidence.summaries !== undefined) {
    return strip(
      orderedSummaries(evidence)
        .map((s, i) => `### Session ${i + 1}\n\n${summaryBlock(s)}\n\n---\n\n`)
        .join("")
    )
  }
  return interactionLog([...evidence.sessions].sort((a, b) => a.index - b.index))
}
