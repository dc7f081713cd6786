/**
 * PrefEval (Zhao et al., ICLR 2025) in its published layout: the repository's `benchmark_dataset/`
 * folder, with one JSON array of entries per topic and preference form, and the distractor
 * conversations of `filtered_inter_turns.json`. See docs/prefeval.md.
 *
 * An entry is an instance (`<form>/<topic>:<n>`, n its 1-based place in its topic file; type: its
 * form, `explicit`, `implicit-choice` or `implicit-persona`). Its history is the conversation that
 * reveals the preference (explicit: the user's statement alone; the benchmark has the evaluated
 * model answer it), always first and relevant, then the distractor conversations as sessions, cut
 * after the first `turns` user-assistant pairs as the benchmark's inter-turns are. The preference
 * is gold.
 *
 * @example
 * entryInstance("explicit", "travel_hotel", 0, { preference: "...", question: "..." }, distractors)
 */
import { Either, Schema } from "effect"
import { Domain, Hash } from "@cupid-lab/core"

import { decodeWith, type Problem, type RowProblem } from "../rowDecoder.js"

export const forms = [
  { type: "explicit", folder: "explicit_preference" },
  { type: "implicit-choice", folder: "implicit_preference/choice-based" },
  { type: "implicit-persona", folder: "implicit_preference/persona-driven" }
] as const
export type Form = (typeof forms)[number]["type"]
export const types: ReadonlyArray<string> = forms.map((f) => f.type)

export const distractorFile = "filtered_inter_turns.json"

const Explicit = Schema.Struct({ preference: Schema.String, question: Schema.String })
const Choice = Schema.Struct({
  preference: Schema.String,
  question: Schema.String,
  conversation: Schema.Struct({
    query: Schema.String,
    assistant_options: Schema.String,
    user_selection: Schema.String,
    assistant_acknowledgment: Schema.String
  })
})
const Persona = Schema.Struct({
  preference: Schema.String,
  question: Schema.String,
  conversation: Schema.Record({
    key: Schema.String,
    value: Schema.Struct({ user: Schema.String, assistant: Schema.String })
  })
})
const Distractor = Schema.Struct({
  conversation: Schema.Array(Schema.Struct({ role: Domain.Role, content: Schema.String }))
})

const decodeExplicit = decodeWith(Explicit)
const decodeChoice = decodeWith(Choice)
const decodePersona = decodeWith(Persona)
const decodeDistractor = decodeWith(Distractor)

/**
 * The distractor sessions, after the preference session (positions 2, 3, ...): each conversation
 * of `filtered_inter_turns.json` in order, keeping user-assistant pairs until `turns` pairs are
 * kept (all when undefined); conversations past the cut are left out. Built once, shared by every
 * instance.
 */
export const distractors = (
  values: ReadonlyArray<unknown>,
  turns: number | undefined
): Either.Either<ReadonlyArray<Domain.SessionView>, RowProblem & { readonly row: number }> => {
  const out: Array<Domain.SessionView> = []
  let budget = turns === undefined ? Infinity : 2 * turns
  for (const [i, value] of values.entries()) {
    if (budget <= 0) break
    const decoded = decodeDistractor(value)
    if (Either.isLeft(decoded)) return Either.left({ ...decoded.left, row: i + 1 })
    const kept = decoded.right.conversation.slice(0, budget).map((m) => ({ role: m.role, content: m.content }))
    budget -= kept.length
    const index = out.length + 1
    if (kept.length > 0) out.push({ id: Domain.sessionId(index), index, hash: Hash.dialogueHash(kept), dialogue: kept })
  }
  return Either.right(out)
}

const preferenceDialogue = (
  form: Form,
  value: unknown
): Either.Either<
  { readonly preference: string; readonly question: string; readonly dialogue: ReadonlyArray<Domain.Message> },
  RowProblem
> => {
  switch (form) {
    case "explicit":
      return Either.map(decodeExplicit(value), (e) => ({
        ...e,
        dialogue: [{ role: "user" as const, content: e.preference }]
      }))
    case "implicit-choice":
      return Either.map(decodeChoice(value), (e) => ({
        preference: e.preference,
        question: e.question,
        dialogue: [
          { role: "user" as const, content: e.conversation.query },
          { role: "assistant" as const, content: e.conversation.assistant_options },
          { role: "user" as const, content: e.conversation.user_selection },
          { role: "assistant" as const, content: e.conversation.assistant_acknowledgment }
        ]
      }))
    case "implicit-persona":
      return Either.map(decodePersona(value), (e) => ({
        preference: e.preference,
        question: e.question,
        dialogue: Object.values(e.conversation).flatMap((t) => [
          { role: "user" as const, content: t.user },
          { role: "assistant" as const, content: t.assistant }
        ])
      }))
  }
}

/** One entry of a topic file as an instance; `index` is its 0-based place in the file. */
export const entryInstance = (
  form: Form,
  topic: string,
  index: number,
  value: unknown,
  others: ReadonlyArray<Domain.SessionView>
): Either.Either<Domain.Instance, Problem> => {
  const id = `${form}/${topic}:${index + 1}`
  const entry = preferenceDialogue(form, value)
  if (Either.isLeft(entry)) return Either.left({ ...entry.left, id })
  const dialogue = entry.right.dialogue
  const sessions = [{ id: Domain.sessionId(0), index: 0, hash: Hash.dialogueHash(dialogue), dialogue }, ...others]
  const gold = sessions.map((s, i): Domain.GoldSession => ({
    id: s.id,
    factor: "",
    preference: i === 0 ? entry.right.preference : "",
    label: i === 0 ? "relevant" : "other"
  }))
  return Either.right({
    id,
    personaId: id,
    type: form,
    query: { key: Domain.queryKey(id), request: entry.right.question, sessions },
    gold: { factor: "", preference: entry.right.preference, checklist: [], sessions: gold }
  })
}
