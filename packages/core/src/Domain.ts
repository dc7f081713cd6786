/**
 * The CUPID domain: the released row format (snake_case, as on the wire) and the decoded,
 * camelCase domain values the rest of the framework works with.
 *
 * The split between what models may see and what only oracle components and scorers may read is
 * enforced by the types: a {@link Query} carries the current request and the session dialogues
 * only; every label lives in {@link Gold}.
 *
 * @example
 * import { Domain } from "@cupid-lab/core"
 * const instance = Domain.fromRow(row) // row: Domain.CupidRow, decoded with Domain.CupidRow schema
 * instance.id // "persona_17:changing"
 */
import { Schema } from "effect"
import { dialogueHash, sha256Hex } from "./Hash.js"

export const InstanceType = Schema.Literal("consistent", "contrastive", "changing")
export type InstanceType = typeof InstanceType.Type
export const instanceTypes: ReadonlyArray<InstanceType> = ["consistent", "contrastive", "changing"]

export const Role = Schema.Literal("user", "assistant")
export type Role = typeof Role.Type

export const Message = Schema.Struct({ role: Role, content: Schema.String })
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
  instance_type: InstanceType,
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
}

export interface GoldSession {
  readonly id: string
  readonly factor: string
  readonly preference: string
  readonly label: RelevanceLabel
}

/** Labels: only oracle components (which declare it) and scorers receive this. */
export interface Gold {
  readonly factor: string
  readonly preference: string
  readonly checklist: ReadonlyArray<string>
  readonly sessions: ReadonlyArray<GoldSession>
}

export interface Instance {
  /** `persona_id:instance_type`: unique in a dataset. */
  readonly id: string
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
  session.factor !== current.factor
    ? "other"
    : session.preference === current.preference
    ? "relevant"
    : "stale"

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

/** The inverse of {@link fromRow}: the released row format, e.g. for writing datasets. */
export const toRow = (instance: Instance): CupidRow => ({
  persona_id: instance.personaId,
  instance_type: instance.type,
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

export const dialogueText = (dialogue: ReadonlyArray<Message>): string =>
  dialogue.map((m) => `${m.role === "user" ? "User" : "Assistant"}: ${m.content}`).join("\n")

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
      return session.dialogue.filter((m) => m.role === "user").map((m) => m.content).join("\n")
    case "first-user-message":
      return session.dialogue.find((m) => m.role === "user")?.content ?? ""
    case "summary":
      if (summary === undefined) throw new Error(`session ${session.id}: summary representation requested but no summary was computed`)
      return summaryText(summary)
  }
}
