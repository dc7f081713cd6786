/**
 * LoCoMo (Maharana et al., ACL 2024) in its published format: `locomo10.json`, a JSON array of
 * conversations between two people, each with dated sessions and question-answer pairs. See
 * docs/locomo.md.
 *
 * A question is an instance (`<sample_id>:q<n>`, n its 1-based place in `qa`; history owner: the
 * conversation; type: its category's name). The conversation's sessions are the history, in
 * session-number order, with their dates; `speaker_a` speaks as `user`, `speaker_b` as
 * `assistant`, each message keeping its speaker's name, and a shared image is its BLIP caption
 * appended to the text. Evidence ids (`D<session>:<turn>`) name the relevant sessions and their
 * evidence turns; ids that name no turn are kept as unresolved evidence. Adversarial questions
 * (category 5) keep no relevant session.
 *
 * @example
 * conversationInstances(sample) // one Either of an Instance or a problem per question
 */
import { Either, Schema } from "effect"
import { Domain, Hash } from "@cupid-lab/core"

import { decodeWith, describeValue, type Problem, type RowProblem, under } from "../rowDecoder.js"
import { locomoDate } from "./dates.js"

/**
 * Category numbers as the published file uses them. They do not follow the order in which the
 * paper lists the question kinds; this is the mapping of the authors' evaluation code (its
 * per-category handling and result order), see snap-research/locomo issue #29.
 */
export const categories: Readonly<Record<number, string>> = {
  1: "multi-hop",
  2: "temporal",
  3: "open-domain",
  4: "single-hop",
  5: "adversarial"
}
export const types = [categories[1]!, categories[2]!, categories[3]!, categories[4]!, categories[5]!]

const Turn = Schema.Struct({
  speaker: Schema.String,
  dia_id: Schema.String,
  text: Schema.String,
  blip_caption: Schema.optionalWith(Schema.String, { exact: true })
})

const Qa = Schema.Struct({
  question: Schema.String,
  answer: Schema.optionalWith(Schema.Union(Schema.String, Schema.Number), { exact: true }),
  evidence: Schema.Array(Schema.String),
  category: Schema.Literal(1, 2, 3, 4, 5)
})

/** A conversation: the questions are decoded one by one, so one bad question does not take the others with it. */
const Sample = Schema.Struct({
  sample_id: Schema.String,
  conversation: Schema.Record({ key: Schema.String, value: Schema.Unknown }),
  qa: Schema.Array(Schema.Unknown)
})

const Speakers = Schema.Struct({ speaker_a: Schema.String, speaker_b: Schema.String })

const decodeSample = decodeWith(Sample)
const decodeSpeakers = decodeWith(Speakers)
const decodeTurns = decodeWith(Schema.Array(Turn))
const decodeQa = decodeWith(Qa)

/** The sample id of a value, for naming a row that does not decode. */
export const keyOf = (value: unknown): string | undefined => {
  const id = value !== null && typeof value === "object" ? (value as Record<string, unknown>)["sample_id"] : undefined
  return typeof id === "string" ? id : undefined
}

const evidencePattern = /D\s*(\d+)\s*:\s*(\d+)/g
const normalDiaId = (session: string, turn: string) => `D${Number(session)}:${Number(turn)}`

interface History {
  readonly sessions: ReadonlyArray<Domain.SessionView>
  /** `session_<n>` of each session. */
  readonly sourceIds: ReadonlyArray<string>
  /** `D<n>:<m>` (numbers without leading zeros) -> session index and turn index. */
  readonly turns: ReadonlyMap<string, { readonly session: number; readonly turn: number }>
}

const history = (conversation: Readonly<Record<string, unknown>>): Either.Either<History, RowProblem> => {
  const speakers = decodeSpeakers(conversation)
  if (Either.isLeft(speakers)) return Either.left(under("conversation", speakers.left))
  const { speaker_a, speaker_b } = speakers.right
  const numbers = Object.keys(conversation)
    .flatMap((k) => {
      const m = /^session_(\d+)$/.exec(k)
      return m === null ? [] : [Number(m[1])]
    })
    .sort((a, b) => a - b)
  if (numbers.length === 0)
    return Either.left({ field: "conversation", reason: "expected session_1, session_2, ... keys, found none" })
  const sessions: Array<Domain.SessionView> = []
  const sourceIds: Array<string> = []
  const turns = new Map<string, { session: number; turn: number }>()
  for (const [index, n] of numbers.entries()) {
    const key = `session_${n}`
    const decoded = decodeTurns(conversation[key])
    if (Either.isLeft(decoded)) return Either.left(under(`conversation.${key}`, decoded.left))
    const dateKey = `${key}_date_time`
    const rawDate = conversation[dateKey]
    const date = typeof rawDate === "string" ? locomoDate(rawDate) : undefined
    if (date === undefined) {
      return Either.left({
        field: `conversation.${dateKey}`,
        reason: `expected a date like "1:56 pm on 8 May, 2023", found ${describeValue(rawDate)}${rawDate === undefined ? " (missing field)" : ""}`
      })
    }
    const dialogue: Array<Domain.Message> = []
    for (const [t, turn] of decoded.right.entries()) {
      if (turn.speaker !== speaker_a && turn.speaker !== speaker_b) {
        return Either.left({
          field: `conversation.${key}[${t}].speaker`,
          reason: `expected ${JSON.stringify(speaker_a)} or ${JSON.stringify(speaker_b)} (speaker_a, speaker_b), found ${describeValue(turn.speaker)}`
        })
      }
      const id = /^D\s*(\d+)\s*:\s*(\d+)$/.exec(turn.dia_id.trim())
      if (id === null)
        return Either.left({
          field: `conversation.${key}[${t}].dia_id`,
          reason: `expected an id like "D1:3", found ${describeValue(turn.dia_id)}`
        })
      turns.set(normalDiaId(id[1]!, id[2]!), { session: index, turn: t })
      const content = turn.blip_caption === undefined ? turn.text : `${turn.text} [image: ${turn.blip_caption}]`
      dialogue.push({ role: turn.speaker === speaker_a ? "user" : "assistant", content, speaker: turn.speaker })
    }
    const id = Domain.sessionId(index)
    sessions.push({ id, index, hash: Hash.dialogueHash(dialogue), dialogue, date })
    sourceIds.push(key)
  }
  return Either.right({ sessions, sourceIds, turns })
}

const questionInstance = (
  sampleId: string,
  h: History,
  value: unknown,
  i: number
): Either.Either<Domain.Instance, Problem> => {
  const id = `${sampleId}:q${i + 1}`
  const decoded = decodeQa(value)
  if (Either.isLeft(decoded)) return Either.left({ ...under(`qa[${i}]`, decoded.left), id })
  const qa = decoded.right
  const evidence = new Map<number, Set<number>>()
  const unresolved: Array<string> = []
  for (const raw of qa.evidence) {
    const ids = [...raw.matchAll(evidencePattern)].map((m) => normalDiaId(m[1]!, m[2]!))
    const found = ids.map((d) => h.turns.get(d))
    if (ids.length === 0 || found.some((f) => f === undefined)) unresolved.push(raw)
    for (const f of found)
      if (f !== undefined) evidence.set(f.session, (evidence.get(f.session) ?? new Set()).add(f.turn))
  }
  const adversarial = qa.category === 5
  const gold = h.sessions.map((s, index): Domain.GoldSession => {
    const turns = adversarial ? undefined : evidence.get(index)
    return {
      id: s.id,
      factor: "",
      preference: "",
      label: turns === undefined ? "other" : "relevant",
      sourceId: h.sourceIds[index]!,
      ...(turns === undefined ? {} : { evidenceTurns: [...turns].sort((a, b) => a - b) })
    }
  })
  const withoutEvidence = adversarial
    ? ("adversarial" as const)
    : evidence.size === 0
      ? ("unlabelled" as const)
      : undefined
  return Either.right({
    id,
    personaId: sampleId,
    type: categories[qa.category]!,
    query: { key: Domain.queryKey(sampleId), request: qa.question, sessions: h.sessions },
    gold: {
      factor: "",
      preference: "",
      checklist: [],
      sessions: gold,
      ...(qa.answer === undefined ? {} : { answer: String(qa.answer) }),
      ...(withoutEvidence === undefined ? {} : { withoutEvidence }),
      ...(unresolved.length > 0 && !adversarial ? { unresolvedEvidence: unresolved } : {})
    }
  })
}

/** A published conversation as one instance per question, or the problem with the whole conversation. */
export const conversationInstances = (
  value: unknown
): Either.Either<ReadonlyArray<Either.Either<Domain.Instance, Problem>>, Problem> => {
  const sample = decodeSample(value)
  if (Either.isLeft(sample)) return Either.left(sample.left)
  const h = history(sample.right.conversation)
  if (Either.isLeft(h)) return Either.left({ ...h.left, id: sample.right.sample_id })
  return Either.right(sample.right.qa.map((qa, i) => questionInstance(sample.right.sample_id, h.right, qa, i)))
}
