/**
 * Turns checked persona sources into CUPID rows, three per persona, the way the benchmark derives its
 * instances from a 12-session history (docs/sample-data.md), each keeping 8 sessions:
 * - consistent: every A-changed and B session left out, and 2 - #A-changed random others; target pA.
 * - contrastive: every A-changed session left out, and 4 - #A-changed random others; target pA.
 * - changing: both B sessions and 2 random others left out; target pA'.
 * "Random" is a PRNG seeded by the persona id and instance type, so the same sources always give the
 * same bytes. Kept sessions stay in chronological order.
 *
 * @example
 * const rows = buildRows(loaded.map((l) => l.source))
 * rows.map((r) => r.instance_type) // ["consistent", "contrastive", "changing", ...]
 * const text = toJsonl(rows)
 */
import { Domain, Hash, Random } from "@cupid-lab/core"

import type { SampleSource, Slot, SourceSession } from "./Source.js"

export const historyLength = 8

const removedSlots: Readonly<Record<Domain.CupidType, ReadonlyArray<Slot>>> = {
  consistent: ["A-changed", "B"],
  contrastive: ["A-changed"],
  changing: ["B"]
}

/** How many "other" sessions an instance of `type` leaves out, so that it keeps {@link historyLength}. */
export const othersToDrop = (source: SampleSource, type: Domain.CupidType): number =>
  source.sessions.filter((s) => !removedSlots[type].includes(s.slot)).length - historyLength

/** Indices (into `source.sessions`) of the "other" sessions an instance of `type` leaves out, ascending. */
export const droppedOthers = (source: SampleSource, type: Domain.CupidType): ReadonlyArray<number> => {
  const pool = source.sessions.flatMap((s, i) => (s.slot === "other" ? [i] : []))
  const n = Math.max(0, Math.min(pool.length, othersToDrop(source, type)))
  const next = Random.mulberry32(Number.parseInt(Hash.sha256Hex(`${source.persona_id}:${type}`).slice(0, 8), 16))
  for (let i = 0; i < n; i++) {
    const j = i + Math.floor(next() * (pool.length - i))
    ;[pool[i], pool[j]] = [pool[j]!, pool[i]!]
  }
  return pool.slice(0, n).sort((a, b) => a - b)
}

/** Indices (into `source.sessions`) of the prior sessions an instance of `type` keeps, in order. */
export const keptSessionIndices = (source: SampleSource, type: Domain.CupidType): ReadonlyArray<number> => {
  const dropped = droppedOthers(source, type)
  return source.sessions.flatMap((s, i) => (!removedSlots[type].includes(s.slot) && !dropped.includes(i) ? [i] : []))
}

const toWire = (s: SourceSession): Domain.WirePriorInteraction => ({
  context_factor: s.context_factor,
  contextual_preference: s.contextual_preference,
  dialogue: s.dialogue.map((m) => ({ role: m.role, content: m.content }))
})

/** The row of one instance type; keys in the released column order. */
export const buildRow = (source: SampleSource, type: Domain.CupidType): Domain.CupidRow => {
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
export const buildRows = (sources: ReadonlyArray<SampleSource>): ReadonlyArray<Domain.CupidRow> =>
  sources.flatMap((source) => Domain.cupidTypes.map((type) => buildRow(source, type)))

/** One JSON object per line, newline-terminated. */
export const toJsonl = (rows: ReadonlyArray<Domain.CupidRow>): string =>
  rows.map((row) => JSON.stringify(row) + "\n").join("")
