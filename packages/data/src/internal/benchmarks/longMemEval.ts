/**
 * LongMemEval (Wu et al., ICLR 2025) in its published format: `longmemeval_s.json`,
 * `longmemeval_m.json` and `longmemeval_oracle.json` (and their `_cleaned` versions), each a JSON
 * array of questions with their own haystack of dated sessions. See docs/longmemeval.md.
 *
 * A question is an instance (id and history owner: `question_id`; type: `question_type`). Its
 * haystack sessions are the history, in date order (the oracle file lists them unsorted); the
 * question date and session dates are visible, the haystack session ids are gold (they spell
 * `answer_` into evidence sessions). Sessions named in `answer_session_ids` are relevant and their
 * `has_answer` turns are evidence turns. Abstention questions (`_abs` ids) keep no relevant session.
 *
 * @example
 * questionInstance({ question_id: "q1", question_type: "multi-session", ... }) // Either of an Instance or a problem
 */
import { Either, Schema } from "effect"
import { Domain, Hash } from "@cupid-lab/core"

import { decodeWith, type Problem } from "../rowDecoder.js"
import { longMemEvalDate } from "./dates.js"

export const types = [
  "single-session-user",
  "single-session-assistant",
  "single-session-preference",
  "temporal-reasoning",
  "knowledge-update",
  "multi-session"
] as const

const Turn = Schema.Struct({
  role: Domain.Role,
  content: Schema.String,
  has_answer: Schema.optionalWith(Schema.Boolean, { exact: true })
})

/** One question as published. Other keys are ignored. */
export const Question = Schema.Struct({
  question_id: Schema.String,
  question_type: Schema.Literal(...types),
  question: Schema.String,
  answer: Schema.Union(Schema.String, Schema.Number),
  question_date: Schema.String,
  haystack_session_ids: Schema.Array(Schema.String),
  haystack_dates: Schema.Array(Schema.String),
  haystack_sessions: Schema.Array(Schema.Array(Turn)),
  answer_session_ids: Schema.Array(Schema.String)
})
export type Question = typeof Question.Type

const decodeQuestion = decodeWith(Question)

const dateProblem = (field: string, text: string): Problem => ({
  field,
  reason: `expected a date like "2023/05/20 (Sat) 02:21", found ${JSON.stringify(text)}`
})

/** The question id of a value, for naming a row that does not decode. */
export const keyOf = (value: unknown): string | undefined => {
  const id = value !== null && typeof value === "object" ? (value as Record<string, unknown>)["question_id"] : undefined
  return typeof id === "string" ? id : undefined
}

/** One published question as an instance, or the problem that stops it (naming the field). */
export const questionInstance = (value: unknown): Either.Either<Domain.Instance, Problem> => {
  const key = keyOf(value)
  const withId = (p: Problem): Problem => (key === undefined ? p : { ...p, id: key })
  const decoded = decodeQuestion(value)
  if (Either.isLeft(decoded)) return Either.left(withId(decoded.left))
  const q = decoded.right
  const n = q.haystack_sessions.length
  for (const [field, length] of [
    ["haystack_session_ids", q.haystack_session_ids.length],
    ["haystack_dates", q.haystack_dates.length]
  ] as const) {
    if (length !== n)
      return Either.left(
        withId({ field, reason: `expected ${n} entries, one per session of haystack_sessions, found ${length}` })
      )
  }
  const questionDate = longMemEvalDate(q.question_date)
  if (questionDate === undefined) return Either.left(withId(dateProblem("question_date", q.question_date)))
  const dated: Array<{ readonly at: number; readonly date: string }> = []
  for (let i = 0; i < n; i++) {
    const date = longMemEvalDate(q.haystack_dates[i]!)
    if (date === undefined) return Either.left(withId(dateProblem(`haystack_dates[${i}]`, q.haystack_dates[i]!)))
    dated.push({ at: i, date })
  }
  // Chronological, as the domain's positions are; ties keep the file's order.
  const order = [...dated].sort((a, b) => (a.date < b.date ? -1 : a.date > b.date ? 1 : a.at - b.at))
  const abstention = q.question_id.endsWith("_abs")
  const answerIds = new Set(q.answer_session_ids)
  const sessions: Array<Domain.SessionView> = []
  const gold: Array<Domain.GoldSession> = []
  order.forEach(({ at, date }, index) => {
    const turns = q.haystack_sessions[at]!
    const dialogue = turns.map((t) => ({ role: t.role, content: t.content }))
    const id = Domain.sessionId(index)
    sessions.push({ id, index, hash: Hash.dialogueHash(dialogue), dialogue, date })
    const relevant = !abstention && answerIds.has(q.haystack_session_ids[at]!)
    const evidenceTurns = turns.flatMap((t, i) => (t.has_answer === true ? [i] : []))
    gold.push({
      id,
      factor: "",
      preference: "",
      label: relevant ? "relevant" : "other",
      sourceId: q.haystack_session_ids[at]!,
      ...(relevant && evidenceTurns.length > 0 ? { evidenceTurns } : {})
    })
  })
  const haystack = new Set(q.haystack_session_ids)
  const unresolved = q.answer_session_ids.filter((id) => !haystack.has(id))
  const hasRelevant = gold.some((g) => g.label === "relevant")
  return Either.right({
    id: q.question_id,
    personaId: q.question_id,
    type: q.question_type,
    query: { key: Domain.queryKey(q.question_id), request: q.question, sessions, date: questionDate },
    gold: {
      factor: "",
      preference: "",
      checklist: [],
      sessions: gold,
      answer: String(q.answer),
      ...(abstention
        ? { withoutEvidence: "abstention" as const }
        : hasRelevant
          ? {}
          : { withoutEvidence: "unlabelled" as const }),
      ...(unresolved.length > 0 && !abstention ? { unresolvedEvidence: unresolved } : {})
    }
  })
}
