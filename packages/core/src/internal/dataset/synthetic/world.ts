import type { CupidRow, InstanceType, Message } from "../../../Domain.js"
import { type Category, categories, type FactorKind, firstNames, kindBanks, kinds, lastNames } from "./factors.js"
import { alsos, body, closes, intros, openerExtras, openers } from "./phrases.js"
import { checklist, type Choice, leadInCount, poleOf, preferenceText } from "./preferences.js"
import * as Prng from "./prng.js"

export type RelevantPosition = "spread" | "early" | "late" | "recent"

export interface Settings {
  readonly sessionsPerHistory: number
  readonly seed: number
  readonly relevantPosition: RelevantPosition
  readonly contrastiveShare: number
  readonly staleShare: number
  readonly types: ReadonlyArray<InstanceType>
}

interface Factor {
  readonly kind: FactorKind
  readonly label: string
  readonly mentions: ReadonlyArray<string>
}

interface Preference {
  readonly choice: Choice
  readonly text: string
  readonly checklist: ReadonlyArray<string>
}

interface Session {
  readonly context_factor: string
  readonly contextual_preference: string
  readonly dialogue: ReadonlyArray<Message>
}

/** How many contrastive (B) and stale sessions a history of `n` holds: 2 at n = 8, a share of n beyond. */
export const specialCounts = (s: Pick<Settings, "sessionsPerHistory" | "contrastiveShare" | "staleShare">) => ({
  contrastive: Math.max(2, Math.round(s.contrastiveShare * s.sessionsPerHistory)),
  stale: Math.max(2, Math.round(s.staleShare * s.sessionsPerHistory))
})

/** Distinct other factors of a persona: 6 (as in CUPID) at n = 8, growing slowly with n, at most 60. */
export const otherFactorCount = (n: number): number => Math.min(n - 2, 6 + Math.floor((n - 8) / 4), 60)

export interface PositionPlan {
  readonly relevant: ReadonlyArray<number>
  readonly stale: ReadonlyArray<number>
  readonly contrastive: ReadonlyArray<number>
}

const range = (lo: number, hi: number): Array<number> => Array.from({ length: Math.max(0, hi - lo + 1) }, (_, i) => lo + i)
const ascending = (xs: Array<number>) => xs.sort((a, b) => a - b)

/**
 * 0-based slots of the special sessions in a history of `n`. The two relevant sessions fall in a
 * window set by `mode` (spread: anywhere; early: first third; late: last third; recent: the last
 * two); stale sessions always precede them (a preference changes after it was held), so the window
 * is pushed right when it leaves no room for them. Contrastive sessions take any free slot.
 */
export const planPositions = (rng: Prng.Rng, n: number, mode: RelevantPosition, stale: number, contrastive: number): PositionPlan => {
  let [lo, hi] = mode === "spread"
    ? [0, n - 1]
    : mode === "early"
    ? [0, Math.ceil(n / 3) - 1]
    : mode === "late"
    ? [Math.floor((2 * n) / 3), n - 1]
    : [n - 2, n - 1]
  lo = Math.max(lo, stale)
  if (hi - lo + 1 < 2) hi = lo + 1
  const relevant = ascending(rng.sample(range(lo, hi), 2))
  const stalePositions = ascending(rng.sample(range(0, relevant[0]! - 1), stale))
  const taken = new Set([...relevant, ...stalePositions])
  const free = range(0, n - 1).filter((i) => !taken.has(i))
  return { relevant, stale: stalePositions, contrastive: ascending(rng.sample(free, contrastive)) }
}

const fill = (template: string, values: Readonly<Record<string, string>>): string =>
  template.replace(/\{(\w+)\}/g, (_, key: string) => values[key] ?? `{${key}}`)

const lowerFirst = (s: string): string => /^I\b|^I'/.test(s) ? s : s.charAt(0).toLowerCase() + s.slice(1)

const user = (content: string): Message => ({ role: "user", content })
const assistant = (content: string): Message => ({ role: "assistant", content })

/** A persona's factors: A, the similar-sounding B, and the others (one from A's own category first). */
class FactorDraw {
  private readonly usedVariants = new Set<string>()
  private readonly usedNames = new Set<string>()
  constructor(private readonly rng: Prng.Rng) {}

  fromCategory(category: Category): Factor | undefined {
    const free = category.variants.filter((v) => !this.usedVariants.has(`${category.name}/${v}`))
    if (free.length === 0) return undefined
    const variant = this.rng.pick(free)
    this.usedVariants.add(`${category.name}/${variant}`)
    if (category.kind !== "person") return { kind: category.kind, label: variant, mentions: [variant] }
    let name: string
    do {
      const first = this.rng.pick(firstNames)
      name = category.firstNameOnly === true ? first : `${first} ${this.rng.pick(lastNames)}`
    } while (this.usedNames.has(name.split(" ")[0]!))
    // First names stay unique within a persona so that no two people could be confused by name.
    this.usedNames.add(name.split(" ")[0]!)
    // The label reads "Name, role"; in running text the role goes in parentheses so sentences stay grammatical.
    return { kind: "person", label: `${name}, ${variant}`, mentions: [`${name} (${variant})`] }
  }

  anyCategory(filter: (c: Category) => boolean = () => true): Factor {
    for (;;) {
      const factor = this.fromCategory(this.rng.pick(categories.filter(filter)))
      if (factor !== undefined) return factor
    }
  }
}

const randomChoice = (rng: Prng.Rng): Choice =>
  rng.sample(range(0, 11), 3).map((axis) => [axis, rng.int(2) as 0 | 1] as const)

const flip = (choice: Choice, which: ReadonlyArray<number>): Choice =>
  choice.map(([axis, side], i) => [axis, which.includes(i) ? (1 - side) as 0 | 1 : side] as const)

const preference = (rng: Prng.Rng, choice: Choice): Preference => ({
  choice,
  text: preferenceText(choice, rng.int(leadInCount)),
  checklist: checklist(choice)
})

const taskFor = (rng: Prng.Rng, factor: Factor): { task: string; topic: string } => {
  const bank = kindBanks[factor.kind]
  const topic = rng.pick(bank.topics)
  return { topic, task: fill(rng.pick(bank.tasks), { f: rng.pick(factor.mentions), t: topic }) }
}

const bodyText = (rng: Prng.Rng, topic: string, k: number): string =>
  rng.sample(body, k).map((s) => fill(s, { t: topic })).join(" ")

/**
 * One task-oriented session: the first user message names the factor and the task, the assistant's
 * first answer misses the preference, each following user turn hints at one or two checklist items
 * indirectly, and the last user turn is a short positive close.
 */
const session = (rng: Prng.Rng, factor: Factor, pref: Preference): Session => {
  const { task, topic } = taskFor(rng, factor)
  let first = fill(rng.pick(openers), { task })
  if (rng.chance(0.5)) first = `${first} ${rng.pick(openerExtras)}`
  const dialogue: Array<Message> = [user(first), assistant(`${rng.pick(intros)} ${bodyText(rng, topic, 5)}`)]
  const order = rng.shuffle(pref.choice)
  const groups = order.length === 3 && rng.chance(0.4) ? [order.slice(0, 2), order.slice(2)] : order.map((c) => [c])
  for (const group of groups) {
    const complaints = group.map((c, i) => {
      const text = rng.pick(poleOf(c).complaints)
      return i === 0 ? text : `${rng.pick(alsos)} ${lowerFirst(text)}`
    })
    const acks = group.map((c) => rng.pick(poleOf(c).acks))
    dialogue.push(user(complaints.join(" ")), assistant(`${acks.join(" ")} ${bodyText(rng, topic, 4)}`))
  }
  dialogue.push(user(rng.pick(closes)))
  return { context_factor: factor.label, contextual_preference: pref.text, dialogue }
}

/** The three instances (or those of `types`) of persona `index`, built on CUPID's template. */
export function* personaRows(settings: Settings, index: number): Generator<CupidRow> {
  const n = settings.sessionsPerHistory
  const counts = specialCounts(settings)
  const rng = Prng.make(settings.seed, index)
  const draw = new FactorDraw(rng)

  const kindA = rng.pick(kinds)
  const categoryA = rng.pick(categories.filter((c) => c.kind === kindA))
  const a = draw.fromCategory(categoryA)!
  const b = draw.fromCategory(categoryA)!
  const others: Array<Factor> = [draw.fromCategory(categoryA)!]
  if (rng.chance(0.5)) others.push(draw.anyCategory((c) => c.kind === kindA && c !== categoryA))
  while (others.length < otherFactorCount(n)) others.push(draw.anyCategory())

  const pA = preference(rng, randomChoice(rng))
  const changedAxes = rng.sample([0, 1, 2], 2)
  const pAChanged = preference(rng, flip(pA.choice, changedAxes))
  const contrastAxes = rng.chance(0.5) ? [0, 1, 2] : rng.sample([0, 1, 2], 2)
  const sameFlip = contrastAxes.length === 2 && contrastAxes.every((i) => changedAxes.includes(i))
  const pB = preference(rng, flip(pA.choice, sameFlip ? [0, 1, 2] : contrastAxes))
  const otherPrefs = others.map(() => preference(rng, randomChoice(rng)))

  const request = fill(rng.pick(openers), { task: taskFor(rng, a).task })
  const earlierA = Array.from({ length: Math.max(2, counts.stale) }, () => session(rng, a, pA))
  const laterA = Array.from({ length: 2 }, () => session(rng, a, pAChanged))
  const contrastSessions = Array.from({ length: counts.contrastive }, () => session(rng, b, pB))
  const order = rng.shuffle(range(0, others.length - 1))
  const otherSessions = Array.from({ length: n - 2 }, (_, i) => {
    const which = i < order.length ? order[i]! : rng.int(others.length)
    return session(rng, others[which]!, otherPrefs[which]!)
  })

  const personaId = `synthetic-s${settings.seed}-p${String(index + 1).padStart(5, "0")}`
  for (const type of (["consistent", "contrastive", "changing"] as const)) {
    if (!settings.types.includes(type)) continue
    const stale = type === "changing" ? counts.stale : 0
    const contrastive = type === "contrastive" ? counts.contrastive : 0
    const plan = planPositions(Prng.make(settings.seed, index, type === "consistent" ? 1 : type === "contrastive" ? 2 : 3), n, settings.relevantPosition, stale, contrastive)
    const slots: Array<Session | undefined> = new Array(n).fill(undefined)
    const relevant = type === "changing" ? laterA : earlierA.slice(0, 2)
    plan.relevant.forEach((slot, i) => (slots[slot] = relevant[i]))
    plan.stale.forEach((slot, i) => (slots[slot] = earlierA[i]))
    plan.contrastive.forEach((slot, i) => (slots[slot] = contrastSessions[i]))
    let next = 0
    const history = slots.map((s) => s ?? otherSessions[next++]!)
    const target = type === "changing" ? pAChanged : pA
    yield {
      persona_id: personaId,
      instance_type: type,
      current_request: request,
      current_context_factor: a.label,
      current_contextual_preference: target.text,
      current_checklist: target.checklist,
      prior_interactions: history
    }
  }
}
