/**
 * Deterministic CUPID-shaped instances of any size, for conformance tests and benchmarks: a
 * persona's factors (each with a name and a kind), a current factor with an older and a newer
 * preference, a contrastive factor of the same kind, and short task dialogues whose first user
 * message names the session's factor and whose later user turns hint at its preference.
 *
 * Texts are short (about 60 words per session) so that 10,000-session histories stay cheap to
 * build and analyse; they are not meant to measure retrieval quality.
 *
 * @example
 * import { Histories } from "@cupid-lab/retrievers/testing"
 * const instance = Histories.instance({ sessions: 10_000, type: "changing", seed: 3 })
 */
import { Domain, Random } from "@cupid-lab/core"

const people = [
  "Priya Raman",
  "Tomasz Nowak",
  "Aisha Bello",
  "Diego Fuentes",
  "Mei Tanaka",
  "Olu Adeyemi",
  "Sofia Lindqvist",
  "Ravi Menon"
]
const kinds = ["colleague", "client", "supervisor", "student"]
const tools = ["Figma board", "Jira backlog", "Tableau dashboard", "Notion wiki", "Excel budget", "Zoom webinar"]
const tasks = [
  "an update email",
  "a meeting agenda",
  "a project summary",
  "a short report",
  "a slide outline",
  "a checklist"
]
const preferences = [
  ["numbered steps", "a check after each section"],
  ["one paragraph", "no bullet points"],
  ["a table of figures", "a cited source for every number"],
  ["a warm personal opening", "a clear ask at the end"],
  ["plain words", "no jargon at all"],
  ["bold headings", "a summary line on top"]
]

const rng = Random.mulberry32

interface Factor {
  readonly name: string
  readonly preference: ReadonlyArray<string>
}

const session = (factor: Factor, preference: ReadonlyArray<string>, task: string): ReadonlyArray<Domain.Message> => [
  { role: "user", content: `Can you help me write ${task} for ${factor.name}? It is due on Thursday.` },
  { role: "assistant", content: `Here is a first draft of ${task} for ${factor.name}, organised by topic.` },
  { role: "user", content: `Closer, but it needs ${preference[0]} and ${preference[1]}, that always works best here.` },
  { role: "assistant", content: `Revised with ${preference[0]} and ${preference[1]}.` },
  { role: "user", content: "Perfect, thanks." }
]

export interface HistoryOptions {
  /** Number of prior sessions (0 allowed). */
  readonly sessions: number
  readonly type?: Domain.CupidType
  readonly seed?: number
  readonly personaId?: string
}

/**
 * An instance with `sessions` prior sessions. The current factor's sessions sit at fixed shares of
 * the history (older preference first); `contrastive` adds two sessions of a same-kind factor and
 * `changing` two with the changed preference; the rest are other factors.
 */
export const instance = (options: HistoryOptions): Domain.Instance => {
  const key = JSON.stringify([options.sessions, options.type, options.seed, options.personaId])
  const hit = built.get(key)
  if (hit !== undefined) return hit
  const made = build(options)
  built.set(key, made)
  return made
}

// Instances are immutable values, and large ones take a second or two to build: build each once.
const built = new Map<string, Domain.Instance>()

const build = (options: HistoryOptions): Domain.Instance => {
  const random = rng(options.seed ?? 1)
  const pick = <A>(xs: ReadonlyArray<A>): A => xs[Math.floor(random() * xs.length)]!
  const type = options.type ?? "consistent"
  const n = options.sessions
  const kind = pick(kinds)
  const [personA, personB, ...others] = [...people].sort(() => random() - 0.5)
  const a: Factor = { name: `my ${kind} ${personA}`, preference: pick(preferences) }
  const changed = preferences.find((p) => p !== a.preference)!
  const b: Factor = {
    name: `my ${kind} ${personB}`,
    preference: preferences.find((p) => p !== a.preference && p !== changed)!
  }
  const background: Array<Factor> = [
    ...others.map((p) => ({ name: `${p}`, preference: pick(preferences) })),
    ...tools.map((t) => ({ name: `the ${t}`, preference: pick(preferences) }))
  ]
  const slots = new Map<number, { factor: Factor; preference: ReadonlyArray<string> }>()
  const place = (share: number, factor: Factor, preference: ReadonlyArray<string>) => {
    if (n === 0) return
    let i = Math.min(n - 1, Math.floor(share * n))
    while (slots.has(i) && i < n - 1) i++
    if (!slots.has(i)) slots.set(i, { factor, preference })
  }
  place(0.1, a, a.preference)
  place(0.4, a, a.preference)
  if (type === "contrastive") {
    place(0.25, b, b.preference)
    place(0.6, b, b.preference)
  }
  if (type === "changing") {
    place(0.7, a, changed)
    place(0.9, a, changed)
  }
  const prior_interactions = Array.from({ length: n }, (_, i) => {
    const slot = slots.get(i) ?? { factor: pick(background), preference: pick(preferences) }
    return {
      context_factor: slot.factor.name,
      contextual_preference: slot.preference.join("; "),
      dialogue: session(slot.factor, slot.preference, pick(tasks))
    }
  })
  const current = type === "changing" ? changed : a.preference
  return Domain.fromRow({
    persona_id: options.personaId ?? `synthetic-${options.seed ?? 1}-${n}`,
    instance_type: type,
    current_request: `I need ${pick(tasks)} for ${a.name} by Friday. Can you draft it?`,
    current_context_factor: a.name,
    current_contextual_preference: current.join("; "),
    current_checklist: [...current],
    prior_interactions
  })
}

/** One instance of each type with `sessions` prior sessions. */
export const set = (sessions: number, seed = 1): ReadonlyArray<Domain.Instance> =>
  Domain.cupidTypes.map((type, i) => instance({ sessions, type, seed: seed + i, personaId: `synthetic-${seed}` }))
