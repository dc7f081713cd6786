/**
 * The domain: CUPID's released row format (snake_case, as on the wire) and the decoded, camelCase
 * domain values the rest of the framework works with. Other benchmarks (LongMemEval, LoCoMo,
 * PrefEval; see Dataset) decode into the same values: an instance is a question or request, its
 * prior sessions are the history, and the benchmark's evidence labels say which sessions are
 * relevant.
 *
 * The split between what models may see and what only oracle components and scorers may read is
 * enforced by the types: a {@link Query} carries the current request, the session dialogues and
 * their dates only; every label lives in {@link Gold}.
 *
 * @example
 * import { Domain } from "@cupid-lab/core"
 * const instance = Domain.fromRow(row) // row: Domain.CupidRow, decoded with Domain.CupidRow schema
 * instance.id // "persona_17:changing"
 */
import { Schema } from "effect"
import { dialogueHash, sha256Hex } from "./Hash.js"

/** CUPID's instance types. */
export const CupidType = Schema.Literal("consistent", "contrastive", "changing")
export type CupidType = typeof CupidType.Type
export const cupidTypes: ReadonlyArray<CupidType> = ["consistent", "contrastive", "changing"]

/**
 * An instance's type, what reports slice by: CUPID's {@link CupidType}, or another benchmark's
 * question type or category (LongMemEval's `question_type`, LoCoMo's category name, PrefEval's
 * preference form).
 */
export const InstanceType = Schema.String
export type InstanceType = typeof InstanceType.Type

export const Role = Schema.Literal("user", "assistant")
export type Role = typeof Role.Type

export const Message = Schema.Struct({
  role: Role,
  content: Schema.String,
  /** Who speaks, when the benchmark names its speakers (LoCoMo's two people); dialogue text shows it instead of the role. */
  speaker: Schema.optionalWith(Schema.String, { exact: true })
})
export type Message = typeof Message.Type

/** One element of `prior_interactions` as released. */
export const WirePriorInteraction = Schema.Struct({
  context_factor: Schema.String,
  contextual_preference: Schema.String,
  dialogue: Schema.Array(Message)
})
export type WirePriorInteraction = typeof WirePriorInteraction.Type

/** The released columns, in their order in `test.parquet`. */
export const releasedColumns = [
  "persona_id",
  "instance_type",
  "current_request",
  "current_context_factor",
  "current_contextual_preference",
  "current_checklist",
  "prior_interactions"
] as const

/** One row of `kixlab/CUPID` (`test.parquet`), exactly as released. Extra columns are ignored. */
export const CupidRow = Schema.Struct({
  persona_id: Schema.String,
  instance_type: CupidType,
  current_request: Schema.String,
  current_context_factor: Schema.String,
  current_contextual_preference: Schema.String,
  current_checklist: Schema.Array(Schema.String),
  prior_interactions: Schema.Array(WirePriorInteraction)
})
export type CupidRow = typeof CupidRow.Type

/** `relevant`: same factor and preference as the current ones; `stale`: same factor, other preference. */
export const RelevanceLabel = Schema.Literal("relevant", "stale", "other")
export type RelevanceLabel = typeof RelevanceLabel.Type

/** A prior session as a model or a non-oracle retriever sees it: its position and dialogue only. */
export interface SessionView {
  /** Stable id: `s1` ... `sN`, the 1-based chronological position. */
  readonly id: string
  /** 0-based chronological position. */
  readonly index: number
  /** Content hash of the dialogue, for caching across instances that share the session. */
  readonly hash: string
  readonly dialogue: ReadonlyArray<Message>
  /** When the session took place, `YYYY-MM-DDTHH:MM` (local time, as benchmarks give it), when the benchmark dates its sessions. */
  readonly date?: string
}

/** Everything a model or a non-oracle retriever may read about an instance. */
export interface Query {
  /**
   * Opaque and stable: `q` and 16 hex digits of a hash of the persona id, so the same for a
   * persona's three instances. It can key a plugin's caches per history owner but says nothing of
   * the instance type or the gold labels.
   */
  readonly key: string
  readonly request: string
  readonly sessions: ReadonlyArray<SessionView>
  /** When the request is made, `YYYY-MM-DDTHH:MM`, when the benchmark dates it (LongMemEval). */
  readonly date?: string
}

export interface GoldSession {
  readonly id: string
  /** CUPID's labels of the session; empty strings for benchmarks without them. */
  readonly factor: string
  readonly preference: string
  readonly label: RelevanceLabel
  /**
   * The benchmark's own id of the session (LongMemEval's haystack session id, LoCoMo's
   * `session_<n>`). Gold, because some benchmarks spell the label into it (LongMemEval's
   * `answer_...` sessions).
   */
  readonly sourceId?: string
  /** 0-based indices, in the session's dialogue, of the turns the benchmark marks as evidence (LongMemEval `has_answer`, LoCoMo evidence ids). */
  readonly evidenceTurns?: ReadonlyArray<number>
}

/**
 * Why a question has no relevant session by the benchmark's own account: `abstention` (LongMemEval
 * `_abs` questions, about things the history never mentions), `adversarial` (LoCoMo category 5,
 * a question the history cannot answer), `unlabelled` (the benchmark gives no evidence id that
 * names a turn of the history). Such questions are kept; retrieval metrics are undefined (NaN) for
 * them, and `data inspect` counts them apart.
 */
export const WithoutEvidence = Schema.Literal("abstention", "adversarial", "unlabelled")
export type WithoutEvidence = typeof WithoutEvidence.Type

/** Labels: only oracle components (which declare it) and scorers receive this. */
export interface Gold {
  /** CUPID: the current context factor; empty for benchmarks without factors. */
  readonly factor: string
  /** CUPID: the current contextual preference; PrefEval: the user's preference; empty when the benchmark has none. */
  readonly preference: string
  readonly checklist: ReadonlyArray<string>
  readonly sessions: ReadonlyArray<GoldSession>
  /** Question-answering benchmarks (LongMemEval, LoCoMo): the reference answer. */
  readonly answer?: string
  readonly withoutEvidence?: WithoutEvidence
  /** Evidence ids the benchmark gives that name no turn of the history (LoCoMo), kept so they can be reported. */
  readonly unresolvedEvidence?: ReadonlyArray<string>
}

export interface Instance {
  /** Unique in a dataset: CUPID `persona_id:instance_type`; see Dataset for the other benchmarks. */
  readonly id: string
  /** Whose history it is: CUPID's persona, LongMemEval's question, LoCoMo's conversation, PrefEval's question. */
  readonly personaId: string
  readonly type: InstanceType
  readonly query: Query
  readonly gold: Gold
}

export const instanceId = (personaId: string, type: InstanceType): string => `${personaId}:${type}`

export const sessionId = (index: number): string => `s${index + 1}`

/** The opaque {@link Query.key} of a persona's queries. */
export const queryKey = (personaId: string): string => `q${dialogueKeyHash(personaId)}`
const dialogueKeyHash = (personaId: string): string => sha256Hex(`query-key\u0000${personaId}`).slice(0, 16)

export const relevanceLabel = (
  session: { readonly factor: string; readonly preference: string },
  current: { readonly factor: string; readonly preference: string }
): RelevanceLabel =>
  session.factor !== current.factor ? "other" : session.preference === current.preference ? "relevant" : "stale"

export const fromRow = (row: CupidRow): Instance => {
  const id = instanceId(row.persona_id, row.instance_type)
  const current = { factor: row.current_context_factor, preference: row.current_contextual_preference }
  const sessions: Array<SessionView> = []
  const goldSessions: Array<GoldSession> = []
  row.prior_interactions.forEach((p, index) => {
    const sid = sessionId(index)
    sessions.push({ id: sid, index, hash: dialogueHash(p.dialogue), dialogue: p.dialogue })
    const labels = { factor: p.context_factor, preference: p.contextual_preference }
    goldSessions.push({ id: sid, ...labels, label: relevanceLabel(labels, current) })
  })
  return {
    id,
    personaId: row.persona_id,
    type: row.instance_type,
    query: { key: queryKey(row.persona_id), request: row.current_request, sessions },
    gold: { ...current, checklist: row.current_checklist, sessions: goldSessions }
  }
}

/**
 * The inverse of {@link fromRow}: the released row format, e.g. for writing datasets. Only for
 * CUPID instances: another benchmark's instance type is a defect of the caller.
 */
export const toRow = (instance: Instance): CupidRow => ({
  persona_id: instance.personaId,
  instance_type: cupidType(instance),
  current_request: instance.query.request,
  current_context_factor: instance.gold.factor,
  current_contextual_preference: instance.gold.preference,
  current_checklist: instance.gold.checklist,
  prior_interactions: instance.query.sessions.map((s, i) => ({
    context_factor: instance.gold.sessions[i]!.factor,
    contextual_preference: instance.gold.sessions[i]!.preference,
    dialogue: s.dialogue
  }))
})

export const isCupidType = (type: string): type is CupidType => (cupidTypes as ReadonlyArray<string>).includes(type)

const cupidType = (instance: Instance): CupidType => {
  if (!isCupidType(instance.type))
    throw new Error(`instance ${instance.id}: type "${instance.type}" is not a CUPID instance type`)
  return instance.type
}

/** Which text of a session a component ranks or reads. */
export const SessionRepresentation = Schema.Literal("dialogue", "user-turns", "first-user-message", "summary")
export type SessionRepresentation = typeof SessionRepresentation.Type

/** A session summary (see the Summarizer stage): context bullets and preference bullets. */
export interface SessionSummary {
  readonly sessionId: string
  readonly context: ReadonlyArray<string>
  readonly preferences: ReadonlyArray<string>
}

export const summaryText = (s: SessionSummary): string =>
  [...s.context.map((c) => `- ${c}`), ...s.preferences.map((p) => `- ${p}`)].join("\n")

/** One line per message, `User: ...` / `Assistant: ...`, or the speaker's name where the benchmark names speakers. */
export const dialogueText = (dialogue: ReadonlyArray<Message>): string =>
  dialogue.map((m) => `${m.speaker ?? (m.role === "user" ? "User" : "Assistant")}: ${m.content}`).join("\n")

/**
 * The text of a session in a given representation. `summary` needs the session's summary; without
 * one it is a defect of the caller (the pipeline runs the summarizer first when a retriever asks for it).
 */
export const sessionText = (
  session: SessionView,
  representation: SessionRepresentation,
  summary?: SessionSummary
): string => {
  switch (representation) {
    case "dialogue":
      return dialogueText(session.dialogue)
    case "user-turns":
      return session.dialogue
        .filter((m) => m.role === "user")
        .map((m) => m.content)
        .join("\n")
    case "first-user-message":
      return session.dialogue.find((m) => m.role === "user")?.content ?? ""
    case "summary":
      if (summary === undefined)
        throw new Error(`session ${session.id}: summary representation requested but no summary was computed`)
      return summaryText(summary)
  }
}
