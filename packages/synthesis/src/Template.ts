/**
 * The seeded sampling of a synthesis: balanced persona templates and each persona's session
 * template. Every draw comes from `Random.keyed(seed, ...)` of core, keyed by what it is for, so a
 * persona's template does not depend on how many personas a run makes or in which order they finish.
 *
 * Balanced: each attribute cycles through all of its choices (in a shuffled order per cycle), so
 * over k personas an attribute with k choices takes each once.
 *
 * @example
 * import { Template } from "@cupid-lab/synthesis"
 * Template.persona(1, seeds, 0)  // { seed, careerLevel, traits: [2], values: [2], decisionStyle }
 * Template.sessions(1, 0, { length: 13, original: 2, changed: 2, contrastive: 2 }, 8).slots.length // 13
 */
import { Random } from "@cupid-lab/core"
import type { PersonaTemplate } from "./Records.js"

const careerLevels = ["entry", "mid", "senior"] as const
const traitNames = ["openness", "conscientiousness", "agreeableness", "neuroticism"] as const
const valueNames = [
  "self-direction",
  "achievement",
  "universalism",
  "power",
  "stimulation",
  "benevolence",
  "security",
  "tradition",
  "conformity",
  "hedonism"
] as const
const styles = ["analytical", "directive", "conceptual", "behavioral"] as const

const pairs = <A>(items: ReadonlyArray<A>): ReadonlyArray<readonly [A, A]> =>
  items.flatMap((a, i) => items.slice(i + 1).map((b) => [a, b] as const))

const traitChoices = pairs(traitNames).flatMap(([a, b]) =>
  (["high", "low"] as const).flatMap((la) =>
    (["high", "low"] as const).map(
      (lb) =>
        [
          { trait: a, level: la },
          { trait: b, level: lb }
        ] as const
    )
  )
)
const valueChoices = pairs(valueNames)

/** Attribute ids, so each attribute draws from its own stream. */
const stream = { seed: 1, career: 2, traits: 3, values: 4, style: 5, sessions: 6 } as const

/** Fisher-Yates with the given draw. */
export const shuffle = <A>(items: ReadonlyArray<A>, next: () => number): Array<A> => {
  const out = [...items]
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1))
    ;[out[i], out[j]] = [out[j]!, out[i]!]
  }
  return out
}

/** The choice of persona `index`: cycle `floor(index / k)` of a per-cycle shuffle of the k choices. */
const balanced = <A>(choices: ReadonlyArray<A>, seed: number, attribute: number, index: number): A => {
  const k = choices.length
  const order = shuffle(
    choices.map((_, i) => i),
    Random.keyed(seed, attribute, Math.floor(index / k))
  )
  return choices[order[index % k]!]!
}

/** The template of persona `index` (0-based). */
export const persona = (seed: number, seeds: ReadonlyArray<string>, index: number): PersonaTemplate => ({
  seed: balanced(seeds, seed, stream.seed, index),
  careerLevel: balanced(careerLevels, seed, stream.career, index),
  traits: [...balanced(traitChoices, seed, stream.traits, index)],
  values: [...balanced(valueChoices, seed, stream.values, index)],
  decisionStyle: balanced(styles, seed, stream.style, index)
})

/** A session's role in the template. */
export type Slot = "A" | "A-changed" | "B" | "other" | "current"

export interface SessionSlot {
  readonly slot: Slot
  /** Index into the persona's factors. */
  readonly factor: number
  /** Which preference of that factor the session carries. */
  readonly preference: "original" | "changed"
}

export interface SessionPlan {
  /** Index of the current factor A (one of the contrastive pair, drawn at random). */
  readonly current: number
  /** Index of the contrastive factor B (the other of the pair). */
  readonly contrastive: number
  /** Every session in chronological order; the last is the current request's. */
  readonly slots: ReadonlyArray<SessionSlot>
}

export interface SessionCounts {
  readonly length: number
  readonly original: number
  readonly changed: number
  readonly contrastive: number
}

/**
 * The session template of persona `index` with `factors` factors (the last two are the
 * contrastive pair): A at `original + changed` random positions before the last (the earlier ones
 * with the original preference), B at `contrastive` other random positions, the other factors in
 * the remaining positions (cycling through them in a shuffled order), and A in the last session.
 */
export const sessions = (seed: number, index: number, counts: SessionCounts, factors: number): SessionPlan => {
  const next = Random.keyed(seed, stream.sessions, index)
  const pair = [factors - 2, factors - 1]
  const first = next() < 0.5 ? 0 : 1
  const current = pair[first]!
  const contrastive = pair[1 - first]!
  const prior = counts.length - 1
  const positions = shuffle(
    Array.from({ length: prior }, (_, i) => i),
    next
  )
  const aCount = counts.original + counts.changed
  const aPositions = positions.slice(0, aCount).sort((x, y) => x - y)
  const bPositions = new Set(positions.slice(aCount, aCount + counts.contrastive))
  const others = shuffle(
    Array.from({ length: factors - 2 }, (_, i) => i),
    next
  )
  const slots: Array<SessionSlot> = []
  let o = 0
  for (let i = 0; i < prior; i++) {
    const a = aPositions.indexOf(i)
    if (a >= 0)
      slots.push(
        a < counts.original
          ? { slot: "A", factor: current, preference: "original" }
          : { slot: "A-changed", factor: current, preference: "changed" }
      )
    else if (bPositions.has(i)) slots.push({ slot: "B", factor: contrastive, preference: "original" })
    else slots.push({ slot: "other", factor: others[o++ % others.length]!, preference: "original" })
  }
  slots.push({ slot: "current", factor: current, preference: "original" })
  return { current, contrastive, slots }
}

/** Which other sessions an instance drops: `n` of `candidates`, drawn with the persona's and type's stream. */
export const drop = (
  seed: number,
  index: number,
  typeIndex: number,
  candidates: ReadonlyArray<number>,
  n: number
): ReadonlyArray<number> =>
  shuffle(candidates, Random.keyed(seed, stream.sessions, index, 100 + typeIndex))
    .slice(0, n)
    .sort((a, b) => a - b)
