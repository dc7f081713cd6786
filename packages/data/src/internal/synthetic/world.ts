import type { Domain } from "@cupid-lab/core"
import { type Category, categories, type FactorKind, kinds } from "./factors.js"
import { firstNames, kindBanks, lastNames } from "./names.js"
import { alsos, body, closes, intros, openerExtras, openers } from "./phrases.js"
import { checklist, type Choice, leadInCount, poleOf, preferenceText } from "./preferences.js"
import * as Hard from "./hard.js"
import * as Prng from "./prng.js"

export type RelevantPosition = "spread" | "early" | "late" | "recent"

export interface Settings {
  readonly sessionsPerHistory: number
  readonly seed: number
  readonly relevantPosition: RelevantPosition
  readonly contrastiveShare: number
  readonly staleShare: number
  readonly types: ReadonlyArray<Domain.CupidType>
  readonly knobs: Knobs
}

/** The difficulty knobs, resolved (docs/data.md, "Difficulty"); easy values reproduce version-1 text exactly. */
export interface Knobs {
  /** `exact`: the factor's label in every opening message; `varied`: its surface forms, often mid-message. */
  readonly mentions: "exact" | "varied"
  /** Share of sessions (besides one about A, always) that mention the persona's topic phrase; 0: no topic. */
  readonly topicShare: number
  /** `fixed`: a pole's complaint strings as written; `composed`: lead-in + paraphrased core + follow-up. */
  readonly feedback: "fixed" | "composed"
  /** Relevant sessions per instance, drawn per persona in this range. */
  readonly relevant: readonly [number, number]
  /** Probability that B comes from A's own category (the most similar factors); else from another category of A's kind. */
  readonly similarity: number
}

interface Factor {
  readonly kind: FactorKind
  readonly label: string
  readonly mentions: ReadonlyArray<string>
  /** Surface forms for `mentions: varied`. */
  readonly aliases: ReadonlyArray<string>
}

interface Preference {
  readonly choice: Choice
  readonly text: string
  readonly checklist: ReadonlyArray<string>
}

interface Session {
  readonly context_factor: string
  readonly contextual_preference: string
  readonly dialogue: ReadonlyArray<Domain.Message>
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

const range = (lo: number, hi: number): Array<number> =>
  Array.from({ length: Math.max(0, hi - lo + 1) }, (_, i) => lo + i)
const ascending = (xs: Array<number>) => xs.sort((a, b) => a - b)

/**
 * 0-based slots of the special sessions in a history of `n`. The two relevant sessions fall in a
 * window set by `mode` (spread = anywhere; early = first third; late = last third; recent = the last
 * two); stale sessions always precede them (a preference changes after it was held), so the window
 * is pushed right when it leaves no room for them. Contrastive sessions take any free slot.
 */
export const planPositions = (
  rng: Prng.Rng,
  n: number,
  mode: RelevantPosition,
  stale: number,
  contrastive: number,
  relevantCount = 2
): PositionPlan => {
  let [lo, hi] =
    mode === "spread"
      ? [0, n - 1]
      : mode === "early"
        ? [0, Math.ceil(n / 3) - 1]
        : mode === "late"
          ? [Math.floor((2 * n) / 3), n - 1]
          : [n - relevantCount, n - 1]
  lo = Math.max(lo, stale)
  if (hi - lo + 1 < relevantCount) hi = lo + relevantCount - 1
  const relevant = ascending(rng.sample(range(lo, hi), relevantCount))
  const stalePositions = ascending(rng.sample(range(0, relevant[0]! - 1), stale))
  const taken = new Set([...relevant, ...stalePositions])
  const free = range(0, n - 1).filter((i) => !taken.has(i))
  return { relevant, stale: stalePositions, contrastive: ascending(rng.sample(free, contrastive)) }
}

const fill = (template: string, values: Readonly<Record<string, string>>): string =>
  template.replace(/\{(\w+)\}/g, (_, key: string) => values[key] ?? `{${key}}`)

const lowerFirst = (s: string): string => (/^I\b|^I'/.test(s) ? s : s.charAt(0).toLowerCase() + s.slice(1))

const user = (content: string): Domain.Message => ({ role: "user", content })
const assistant = (content: string): Domain.Message => ({ role: "assistant", content })

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
    if (category.kind !== "person")
      return { kind: category.kind, label: variant, mentions: [variant], aliases: Hard.aliases(variant) }
    let name: string
    do {
      const first = this.rng.pick(firstNames)
      name = category.firstNameOnly === true ? first : `${first} ${this.rng.pick(lastNames)}`
    } while (this.usedNames.has(name.split(" ")[0]!))
    // First names stay unique within a persona so that no two people could be confused by name.
    this.usedNames.add(name.split(" ")[0]!)
    // The label reads "Name, role"; in running text the role goes in parentheses so sentences stay grammatical.
    const [first, last] = name.split(" ") as [string, string | undefined]
    return {
      kind: "person",
      label: `${name}, ${variant}`,
      mentions: [`${name} (${variant})`],
      aliases: Hard.aliases(name, last === undefined ? { first, role: variant } : { first, last, role: variant })
    }
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
  choice.map(([axis, side], i) => [axis, which.includes(i) ? ((1 - side) as 0 | 1) : side] as const)

const preference = (rng: Prng.Rng, choice: Choice): Preference => ({
  choice,
  text: preferenceText(choice, rng.int(leadInCount)),
  checklist: checklist(choice)
})

const taskFor = (rng: Prng.Rng, factor: Factor, hard?: HardSession): { task: string; topic: string } => {
  const bank = kindBanks[factor.kind]
  const topic = rng.pick(bank.topics)
  // The task is drawn before the mention: easy text depends on that order.
  const task = rng.pick(bank.tasks)
  const mention =
    hard !== undefined && hard.knobs.mentions === "varied"
      ? Hard.pickAlias(hard.rng, factor.aliases)
      : rng.pick(factor.mentions)
  return { topic, task: fill(task, { f: mention, t: topic }) }
}

/** What a hard session draws on: the knobs, the hard stream, and the persona's topic phrase when this session mentions it. */
interface HardSession {
  readonly knobs: Knobs
  readonly rng: Prng.Rng
  readonly topic?: string
}

/** The opening message in hard mode: sometimes a preamble first, sometimes the persona's topic. */
const hardOpening = (hard: HardSession, first: string): string => {
  let text = first
  if (hard.knobs.mentions === "varied" && hard.rng.chance(0.4)) text = `${hard.rng.pick(Hard.preambles)} ${text}`
  if (hard.topic !== undefined)
    text = hard.rng.chance(0.5)
      ? `${text} ${Hard.topicLine(hard.rng, hard.topic)}`
      : `${Hard.topicLine(hard.rng, hard.topic)} ${text}`
  return text
}

const bodyText = (rng: Prng.Rng, topic: string, k: number): string =>
  rng
    .sample(body, k)
    .map((s) => fill(s, { t: topic }))
    .join(" ")

/**
 * One task-oriented session: the first user message names the factor and the task, the assistant's
 * first answer misses the preference, each following user turn hints at one or two checklist items
 * indirectly, and the last user turn is a short positive close.
 */
const session = (rng: Prng.Rng, factor: Factor, pref: Preference, hard?: HardSession): Session => {
  const { task, topic } = taskFor(rng, factor, hard)
  let first = fill(rng.pick(openers), { task })
  if (rng.chance(0.5)) first = `${first} ${rng.pick(openerExtras)}`
  if (hard !== undefined) first = hardOpening(hard, first)
  const dialogue: Array<Domain.Message> = [user(first), assistant(`${rng.pick(intros)} ${bodyText(rng, topic, 5)}`)]
  const order = rng.shuffle(pref.choice)
  const groups = order.length === 3 && rng.chance(0.4) ? [order.slice(0, 2), order.slice(2)] : order.map((c) => [c])
  for (const group of groups) {
    const complaints = group.map((c, i) => {
      const core = rng.pick(poleOf(c).complaints)
      const text =
        hard !== undefined && hard.knobs.feedback === "composed" && i === 0
          ? Hard.composeComplaint(hard.rng, core)
          : core
      return i === 0 ? text : `${rng.pick(alsos)} ${lowerFirst(text)}`
    })
    const acks = group.map((c) => rng.pick(poleOf(c).acks))
    dialogue.push(user(complaints.join(" ")), assistant(`${acks.join(" ")} ${bodyText(rng, topic, 4)}`))
  }
  dialogue.push(user(rng.pick(closes)))
  return { context_factor: factor.label, contextual_preference: pref.text, dialogue }
}

/** The three instances (or those of `types`) of persona `index`, built on CUPID's template. */
export function* personaRows(settings: Settings, index: number): Generator<Domain.CupidRow> {
  const n = settings.sessionsPerHistory
  const counts = specialCounts(settings)
  const rng = Prng.make(settings.seed, index)
  const knobs = settings.knobs
  const isEasy =
    knobs.mentions === "exact" &&
    knobs.topicShare === 0 &&
    knobs.feedback === "fixed" &&
    knobs.relevant[0] === 2 &&
    knobs.relevant[1] === 2 &&
    knobs.similarity === 1
  // A separate stream for everything hard mode adds, so easy text never changes.
  const hardRng = Prng.make(settings.seed, index, 77)
  const draw = new FactorDraw(rng)

  const kindA = rng.pick(kinds)
  const categoryA = rng.pick(categories.filter((c) => c.kind === kindA))
  const a = draw.fromCategory(categoryA)!
  const similar = knobs.similarity >= 1 || hardRng.chance(knobs.similarity)
  const b = similar
    ? draw.fromCategory(categoryA)!
    : categories.some((c) => c.kind === kindA && c !== categoryA)
      ? draw.anyCategory((c) => c.kind === kindA && c !== categoryA)
      : draw.fromCategory(categoryA)!
  const others: Array<Factor> = [draw.fromCategory(categoryA)!]
  if (rng.chance(0.5)) others.push(draw.anyCategory((c) => c.kind === kindA && c !== categoryA))
  // With a single relevant session, consistent histories need one more other session: one more factor keeps them distinct.
  const extraOthers = isEasy ? 0 : Math.max(0, 2 - knobs.relevant[0])
  while (others.length < Math.min(otherFactorCount(n) + extraOthers, n - 1)) others.push(draw.anyCategory())

  const pA = preference(rng, randomChoice(rng))
  const changedAxes = rng.sample([0, 1, 2], 2)
  const pAChanged = preference(rng, flip(pA.choice, changedAxes))
  const contrastAxes = rng.chance(0.5) ? [0, 1, 2] : rng.sample([0, 1, 2], 2)
  const sameFlip = contrastAxes.length === 2 && contrastAxes.every((i) => changedAxes.includes(i))
  const pB = preference(rng, flip(pA.choice, sameFlip ? [0, 1, 2] : contrastAxes))
  const otherPrefs = others.map(() => preference(rng, randomChoice(rng)))

  const [rMin, rMax] = knobs.relevant
  const relevantA = isEasy ? 2 : rMin + hardRng.int(rMax - rMin + 1)
  const relevantChanged = isEasy ? 2 : rMin + hardRng.int(rMax - rMin + 1)
  const personaTopic = knobs.topicShare > 0 ? hardRng.pick(Hard.topics) : undefined
  // Which session mentions the topic: one session about A always does, the rest with probability topicShare.
  let topicForced = personaTopic !== undefined
  const hardFor = (isA: boolean): HardSession | undefined => {
    if (isEasy) return undefined
    const withTopic = personaTopic !== undefined && ((isA && topicForced) || hardRng.chance(knobs.topicShare))
    if (isA && withTopic) topicForced = false
    return withTopic ? { knobs, rng: hardRng, topic: personaTopic! } : { knobs, rng: hardRng }
  }
  const requestHard = hardFor(false)
  let request = fill(rng.pick(openers), { task: taskFor(rng, a, requestHard).task })
  if (requestHard !== undefined) {
    request = personaTopic !== undefined ? `${request} ${Hard.topicLine(hardRng, personaTopic)}` : request
  }
  const earlierA = Array.from({ length: Math.max(relevantA, counts.stale) }, () => session(rng, a, pA, hardFor(true)))
  const laterA = Array.from({ length: relevantChanged }, () => session(rng, a, pAChanged, hardFor(true)))
  const contrastSessions = Array.from({ length: counts.contrastive }, () => session(rng, b, pB, hardFor(false)))
  const order = rng.shuffle(range(0, others.length - 1))
  const otherSessions = Array.from({ length: n - Math.min(relevantA, relevantChanged) }, (_, i) => {
    const which = i < order.length ? order[i]! : rng.int(others.length)
    return session(rng, others[which]!, otherPrefs[which]!, hardFor(false))
  })

  const personaId = `synthetic-s${settings.seed}-p${String(index + 1).padStart(5, "0")}`
  for (const type of ["consistent", "contrastive", "changing"] as const) {
    if (!settings.types.includes(type)) continue
    const stale = type === "changing" ? counts.stale : 0
    const contrastive = type === "contrastive" ? counts.contrastive : 0
    const relevantCount = type === "changing" ? relevantChanged : relevantA
    const plan = planPositions(
      Prng.make(settings.seed, index, type === "consistent" ? 1 : type === "contrastive" ? 2 : 3),
      n,
      settings.relevantPosition,
      stale,
      contrastive,
      relevantCount
    )
    const slots: Array<Session | undefined> = new Array(n).fill(undefined)
    const relevant = type === "changing" ? laterA : earlierA.slice(0, relevantCount)
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
