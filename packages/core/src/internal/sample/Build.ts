/**
 * Turns checked persona sources into CUPID rows, three per persona, the way the benchmark builds its
 * instances from a 12-session history:
 * - consistent: the A sessions and the six others (A-changed and B left out); target pA.
 * - contrastive: the A and B sessions and four others (`drop_contrastive` left out); target pA.
 * - changing: the A and A-changed sessions and four others (`drop_changing` left out); target pA'.
 * Kept sessions stay in chronological order. Pure: the same sources always give the same bytes.
 *
 * @example
 * const rows = buildRows(loaded.map((l) => l.source)) // loaded: from Source.loadDirectory
 * rows.map((r) => r.instance_type) // ["consistent", "contrastive", "changing", ...]
 * const text = toJsonl(rows)
 */
import type { CupidRow, InstanceType, WirePriorInteraction } from "../../Domain.js"
import { instanceTypes } from "../../Domain.js"
import type { SampleSource, Slot, SourceSession } from "./Source.js"

const keptSlots: Readonly<Record<InstanceType, ReadonlyArray<Slot>>> = {
  consistent: ["A", "other"],
  contrastive: ["A", "B", "other"],
  changing: ["A", "A-changed", "other"]
}

const droppedOthers = (source: SampleSource, type: InstanceType): ReadonlyArray<number> => {
  switch (type) {
    case "consistent":
      return []
    case "contrastive":
      return source.drop_contrastive
    case "changing":
      return source.drop_changing
  }
}

/** Indices (into `source.sessions`) of the prior sessions an instance of `type` keeps, in order. */
export const keptSessionIndices = (source: SampleSource, type: InstanceType): ReadonlyArray<number> => {
  const dropped = droppedOthers(source, type)
  return source.sessions.flatMap((s, i) => keptSlots[type].includes(s.slot) && !dropped.includes(i) ? [i] : [])
}

const toWire = (s: SourceSession): WirePriorInteraction => ({
  context_factor: s.context_factor,
  contextual_preference: s.contextual_preference,
  dialogue: s.dialogue.map((m) => ({ role: m.role, content: m.content }))
})

/** The row of one instance type; keys in the released column order. */
export const buildRow = (source: SampleSource, type: InstanceType): CupidRow => {
  const changed = type === "changing"
  return {
    persona_id: source.persona_id,
    instance_type: type,
    current_request: source.current_request,
    current_context_factor: source.factor_a,
    current_contextual_preference: changed ? source.preference_a_changed : source.preference_a,
    current_checklist: [...(changed ? source.checklist_a_changed : source.checklist_a)],
    prior_interactions: keptSessionIndices(source, type).map((i) => toWire(source.sessions[i]!))
  }
}

/** Rows for all personas, in the given order, each as consistent, contrastive, changing. */
export const buildRows = (sources: ReadonlyArray<SampleSource>): ReadonlyArray<CupidRow> =>
  sources.flatMap((source) => instanceTypes.map((type) => buildRow(source, type)))

/** One JSON object per line, newline-terminated. */
export const toJsonl = (rows: ReadonlyArray<CupidRow>): string => rows.map((row) => JSON.stringify(row) + "\n").join("")
