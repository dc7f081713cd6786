/**
 * CUPID instances from one persona's sessions, built the way the benchmark builds them, and the
 * automatic validation every instance passes before it is written.
 *
 * From the prior sessions (all but the last, whose request is the current request):
 * - consistent: the changed-preference and the contrastive sessions removed; target: A's original preference.
 * - contrastive: the changed-preference sessions and `contrastive` random other sessions removed; target: the original.
 * - changing: the contrastive sessions and `changed` random sessions not about A removed; target: the changed preference.
 * With the default template (13 sessions, 2 + 2 of A, 2 of B) each instance keeps 8 prior sessions.
 *
 * Validation (a failing instance is excluded, with its reasons, never silently):
 * - no 6-word run of a session's preference in its user turns, and none of A's original or
 *   changed preference in the current request;
 * - the session's factor named in every first user message (and A in the current request);
 * - every checklist item hinted at in its dialogue (as the user simulator reported it, and as the
 *   validator model judged it when `validation.modelCheck` is on);
 * - the instance type's composition: how many sessions of A (original, changed), of B and of other
 *   factors it keeps, in chronological order.
 *
 * @example
 * import { Instances } from "@cupid-lab/synthesis"
 * const built = Instances.build(persona, counts, seed) // three rows and their problems
 */
import { Domain } from "@cupid-lab/core"
import * as Records from "./Records.js"
import { fillResource, leakRun } from "./Stages.js"
import * as Template from "./Template.js"
import { names, sharedRun } from "./internal/text.js"

/** Everything a persona's instances are built from (what the raw file holds for it). */
export interface PersonaData {
  readonly index: number
  readonly id: string
  readonly persona: Records.Persona
  readonly factors: ReadonlyArray<Records.Factor>
  readonly plan: Template.SessionPlan
  /** One per session of the template (the last is the current request's). */
  readonly sessions: ReadonlyArray<Records.SessionText>
  /** Checklist of each preference used. */
  readonly checklists: ReadonlyMap<string, ReadonlyArray<string>>
  /** One per prior session. */
  readonly dialogues: ReadonlyArray<Records.Dialogue>
}

export interface Built {
  readonly row: Domain.CupidRow
  /** Prior-session positions (0-based) the instance keeps. */
  readonly kept: ReadonlyArray<number>
  /** Empty when the instance is valid. */
  readonly problems: ReadonlyArray<string>
}

/** `persona_001`, ...: the same for a persona's three instances. */
export const personaId = (index: number): string => `persona_${String(index + 1).padStart(3, "0")}`

/** A session's preference text, by its slot. */
export const preferenceOf = (data: PersonaData, slot: Template.SessionSlot): string => {
  const f = data.factors[slot.factor]!
  return slot.preference === "changed" ? (f.changed_preference ?? f.preference) : f.preference
}

const removed: Readonly<Record<Domain.CupidType, ReadonlyArray<Template.Slot>>> = {
  consistent: ["A-changed", "B"],
  contrastive: ["A-changed"],
  changing: ["B"]
}

const expectedComposition = (
  type: Domain.CupidType,
  c: Template.SessionCounts
): Readonly<Record<Exclude<Template.Slot, "current">, number>> => {
  const others = c.length - 1 - c.original - c.changed - c.contrastive
  switch (type) {
    case "consistent":
      return { A: c.original, "A-changed": 0, B: 0, other: others }
    case "contrastive":
      return { A: c.original, "A-changed": 0, B: c.contrastive, other: others - c.contrastive }
    case "changing":
      return { A: c.original, "A-changed": c.changed, B: 0, other: others - c.changed }
  }
}

/** Prior-session positions an instance of `type` keeps, ascending. */
export const kept = (
  data: PersonaData,
  type: Domain.CupidType,
  counts: Template.SessionCounts,
  seed: number
): ReadonlyArray<number> => {
  const prior = data.plan.slots.slice(0, -1)
  const candidates = prior.flatMap((s, i) => (!removed[type].includes(s.slot) && s.slot === "other" ? [i] : []))
  const n = type === "contrastive" ? counts.contrastive : type === "changing" ? counts.changed : 0
  const dropped = Template.drop(seed, data.index, Domain.cupidTypes.indexOf(type), candidates, n)
  return prior.flatMap((s, i) => (!removed[type].includes(s.slot) && !dropped.includes(i) ? [i] : []))
}

const validate = (
  data: PersonaData,
  type: Domain.CupidType,
  positions: ReadonlyArray<number>,
  row: Domain.CupidRow,
  counts: Template.SessionCounts
): ReadonlyArray<string> => {
  const problems: Array<string> = []
  const a = data.factors[data.plan.current]!
  const found: Record<string, number> = { A: 0, "A-changed": 0, B: 0, other: 0 }
  for (const i of positions) found[data.plan.slots[i]!.slot] = (found[data.plan.slots[i]!.slot] ?? 0) + 1
  const want = expectedComposition(type, counts)
  for (const [slot, n] of Object.entries(want)) {
    if (found[slot] !== n)
      problems.push(`composition: expected ${n} "${slot}" sessions for a ${type} instance, found ${found[slot]}`)
  }
  if (positions.some((p, k) => k > 0 && p <= positions[k - 1]!))
    problems.push("composition: prior sessions are not in chronological order")
  positions.forEach((i, k) => {
    const at = `prior_interactions[${k}] (session ${i + 1})`
    const slot = data.plan.slots[i]!
    const factor = data.factors[slot.factor]!
    const preference = preferenceOf(data, slot)
    const dialogue = row.prior_interactions[k]!.dialogue
    const first = dialogue[0]
    if (first === undefined || first.role !== "user")
      problems.push(`${at}: the dialogue does not start with a user message`)
    else if (!names(first.content, factor.name))
      problems.push(`${at}: the first user message does not name its factor "${factor.name}"`)
    dialogue.forEach((m, t) => {
      if (m.role !== "user") return
      const leaked = sharedRun(m.content, preference, leakRun)
      if (leaked !== undefined)
        problems.push(
          `${at}: dialogue message ${t + 1} (user) contains the ${leakRun}-word run "${leaked}" of the session's preference`
        )
    })
    const items = data.checklists.get(preference)?.length ?? 0
    const hinted = new Set(data.dialogues[i]!.hinted)
    const missed = Array.from({ length: items }, (_, j) => j + 1).filter((j) => !hinted.has(j))
    if (missed.length > 0)
      problems.push(
        `${at}: checklist item${missed.length === 1 ? "" : "s"} ${missed.join(", ")} never hinted at in the dialogue`
      )
    const checked = data.dialogues[i]!.modelHinted
    if (checked !== undefined) {
      const set = new Set(checked)
      const unseen = Array.from({ length: items }, (_, j) => j + 1).filter((j) => !set.has(j))
      if (unseen.length > 0)
        problems.push(
          `${at}: the validator model finds checklist item${unseen.length === 1 ? "" : "s"} ${unseen.join(", ")} not hinted at`
        )
    }
  })
  if (!names(row.current_request, a.name))
    problems.push(`current_request: does not name the current factor "${a.name}"`)
  for (const [label, p] of [
    ["original", a.preference],
    ["changed", a.changed_preference]
  ] as const) {
    if (p === undefined) continue
    const leaked = sharedRun(row.current_request, p, leakRun)
    if (leaked !== undefined)
      problems.push(`current_request: contains the ${leakRun}-word run "${leaked}" of the ${label} preference`)
  }
  return problems
}

/** The three instances of a persona (consistent, contrastive, changing), each with its validation problems. */
export const build = (data: PersonaData, counts: Template.SessionCounts, seed: number): ReadonlyArray<Built> =>
  Domain.cupidTypes.map((type) => {
    const positions = kept(data, type, counts, seed)
    const a = data.factors[data.plan.current]!
    const target = type === "changing" ? (a.changed_preference ?? a.preference) : a.preference
    const row: Domain.CupidRow = {
      persona_id: data.id,
      instance_type: type,
      current_request: fillResource(data.sessions[data.sessions.length - 1]!),
      current_context_factor: a.name,
      current_contextual_preference: target,
      current_checklist: [...(data.checklists.get(target) ?? [])],
      prior_interactions: positions.map((i) => {
        const slot = data.plan.slots[i]!
        return {
          context_factor: data.factors[slot.factor]!.name,
          contextual_preference: preferenceOf(data, slot),
          dialogue: data.dialogues[i]!.messages.map((m) => ({ role: m.role, content: m.content }))
        }
      })
    }
    return { row, kept: positions, problems: validate(data, type, positions, row, counts) }
  })
