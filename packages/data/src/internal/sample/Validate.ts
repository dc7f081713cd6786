/**
 * The rules a sample persona must follow (docs/sample-data.md): CUPID's 13-session timeline, labels
 * that agree with the slots, and the phenomena of LLM-written histories that make retrieval hard
 * (varied factor mentions, a topic phrase shared across factors, indirect feedback with no shared
 * templates, no leaked preference, inline resources). Pure: sources in, problems out.
 *
 * @example
 * const problems = Validate.source(source)           // one persona
 * const shared = Validate.sharedRuns(loaded)         // templates repeated across sessions and personas
 */
import type { Domain } from "@cupid-lab/core"
import type { Factor, Problem, SampleSource, Slot, SourceSession } from "./Source.js"

export const priorSessions = 12
export const slotRange: Readonly<Record<Exclude<Slot, "other">, readonly [number, number]>> = {
  A: [1, 3],
  "A-changed": [1, 2],
  B: [2, 2]
}
const dialogueLength = [6, 12] as const
const checklistLength = [2, 4] as const
const preferenceWords = [12, 45] as const
const closeWords = 30
/** A preference run this long in a user turn counts as leaked. */
export const leakRun = 6
/** A run of user text this long in two sessions counts as a shared template. */
export const templateRun = 8
const lateMention = 60
const resourceShape = { lines: 4, chars: 300 }

/** Lowercase word tokens; apostrophes inside words are dropped ("Okafor's" -> "okafors"). */
export const words = (text: string): ReadonlyArray<string> =>
  text
    .toLowerCase()
    .replace(/['\u2019]/g, "")
    .match(/[\p{L}\p{N}]+/gu) ?? []

/** Every run of n consecutive words, joined by spaces. */
export const runs = (tokens: ReadonlyArray<string>, n: number): ReadonlyArray<string> => {
  const out: Array<string> = []
  for (let i = 0; i + n <= tokens.length; i++) out.push(tokens.slice(i, i + n).join(" "))
  return out
}

/** The first `n`-word run of `phrase` that `text` contains, if any. */
export const sharedRun = (text: string, phrase: string, n: number): string | undefined => {
  const inText = new Set(runs(words(text), n))
  return runs(words(phrase), n).find((run) => inText.has(run))
}

const lower = (s: string) => s.toLowerCase()
/** Index of the earliest mention in `text`, or -1. */
export const mentionAt = (text: string, mentions: ReadonlyArray<string>): number => {
  const haystack = lower(text)
  const found = mentions.map((m) => haystack.indexOf(lower(m))).filter((i) => i >= 0)
  return found.length === 0 ? -1 : Math.min(...found)
}
const mentionsIn = (text: string, mentions: ReadonlyArray<string>): ReadonlyArray<string> =>
  mentions.filter((m) => lower(text).includes(lower(m)))

const firstUser = (dialogue: ReadonlyArray<Domain.Message>): string =>
  dialogue[0]?.role === "user" ? dialogue[0].content : ""
const userTurns = (dialogue: ReadonlyArray<Domain.Message>) =>
  dialogue.flatMap((m, k) => (m.role === "user" ? [{ k, content: m.content }] : []))
const allText = (dialogue: ReadonlyArray<Domain.Message>) => dialogue.map((m) => m.content).join("\n")

const expectedLabels = (source: SampleSource, slot: Slot): { factor: string; preference: string } | undefined => {
  switch (slot) {
    case "A":
      return { factor: source.factor_a, preference: source.preference_a }
    case "A-changed":
      return { factor: source.factor_a, preference: source.preference_a_changed }
    case "B":
      return { factor: source.factor_b, preference: source.preference_b }
    case "other":
      return undefined
  }
}

const countProblem = (
  field: string,
  what: string,
  found: number,
  [min, max]: readonly [number, number]
): Array<Problem> =>
  found < min || found > max
    ? [{ field, reason: `expected ${min === max ? min : `${min}-${max}`} ${what}, found ${found}` }]
    : []

const preferenceProblems = (field: string, preference: string): Array<Problem> =>
  countProblem(field, "words in a preference", words(preference).length, preferenceWords)

const factorProblems = (source: SampleSource): Array<Problem> => {
  const problems: Array<Problem> = []
  const names = source.factors.map((f) => f.name)
  names.forEach((name, i) => {
    if (names.indexOf(name) !== i) problems.push({ field: `factors[${i}].name`, reason: `duplicate factor "${name}"` })
  })
  source.factors.forEach((f, i) =>
    f.mentions.forEach((m, k) => {
      if (m.trim().length < 3)
        problems.push({ field: `factors[${i}].mentions[${k}]`, reason: "a mention needs at least 3 characters" })
    })
  )
  const a = source.factors.find((f) => f.name === source.factor_a)
  const b = source.factors.find((f) => f.name === source.factor_b)
  if (a === undefined) problems.push({ field: "factor_a", reason: `"${source.factor_a}" is not one of factors[].name` })
  if (b === undefined) problems.push({ field: "factor_b", reason: `"${source.factor_b}" is not one of factors[].name` })
  if (a !== undefined && b !== undefined && a.type !== b.type) {
    problems.push({
      field: "factor_b",
      reason: `the contrastive factor must have A's type ("${a.type}"), found "${b.type}"`
    })
  }
  if (source.factor_a === source.factor_b) problems.push({ field: "factor_b", reason: "must differ from factor_a" })
  return problems
}

const slotProblems = (source: SampleSource): Array<Problem> => {
  const count = (slot: Slot) => source.sessions.filter((s) => s.slot === slot).length
  const problems = [
    ...countProblem("sessions", `"A" sessions`, count("A"), slotRange.A),
    ...countProblem("sessions", `"A-changed" sessions`, count("A-changed"), slotRange["A-changed"]),
    ...countProblem("sessions", `"B" sessions`, count("B"), slotRange.B)
  ]
  const lastA = source.sessions.findLastIndex((s) => s.slot === "A")
  const firstChanged = source.sessions.findIndex((s) => s.slot === "A-changed")
  if (firstChanged >= 0 && firstChanged < lastA) {
    problems.push({
      field: `sessions[${firstChanged}].slot`,
      reason: `"A-changed" sessions must come after every "A" session`
    })
  }
  const others = source.sessions.flatMap((s, i) => (s.slot === "other" ? [{ i, factor: s.context_factor }] : []))
  others.forEach(({ i, factor }, k) => {
    if (others.findIndex((o) => o.factor === factor) !== k) {
      problems.push({
        field: `sessions[${i}].context_factor`,
        reason: `each "other" session needs its own factor; "${factor}" repeats`
      })
    }
  })
  return problems
}

const dialogueProblems = (field: string, dialogue: ReadonlyArray<Domain.Message>): Array<Problem> => {
  const length = countProblem(field, "messages", dialogue.length, dialogueLength)
  if (length.length > 0) return length
  const wrong = dialogue.findIndex((m, k) => m.role !== (k % 2 === 0 ? "user" : "assistant"))
  if (wrong >= 0)
    return [
      { field: `${field}[${wrong}].role`, reason: "messages must alternate user/assistant, starting with the user" }
    ]
  const turns = userTurns(dialogue)
  const last = turns[turns.length - 1]!
  const n = words(last.content).length
  return n > closeWords
    ? [
        {
          field: `${field}[${last.k}].content`,
          reason: `the last user turn is a short close of at most ${closeWords} words, found ${n}`
        }
      ]
    : []
}

const sessionProblems = (source: SampleSource, factorsByName: ReadonlyMap<string, Factor>): Array<Problem> =>
  source.sessions.flatMap((s, i): Array<Problem> => {
    const field = `sessions[${i}]`
    const problems: Array<Problem> = []
    const expected = expectedLabels(source, s.slot)
    if (expected === undefined) {
      if (s.context_factor === source.factor_a || s.context_factor === source.factor_b) {
        problems.push({
          field: `${field}.context_factor`,
          reason: `an "other" session must not use factor A or B ("${s.context_factor}")`
        })
      }
      problems.push(...preferenceProblems(`${field}.contextual_preference`, s.contextual_preference))
    } else {
      if (s.context_factor !== expected.factor) {
        problems.push({
          field: `${field}.context_factor`,
          reason: `a "${s.slot}" session must have factor "${expected.factor}", found "${s.context_factor}"`
        })
      }
      if (s.contextual_preference !== expected.preference) {
        problems.push({
          field: `${field}.contextual_preference`,
          reason: `a "${s.slot}" session must repeat its preference field exactly`
        })
      }
    }
    problems.push(...dialogueProblems(`${field}.dialogue`, s.dialogue))
    const factor = factorsByName.get(s.context_factor)
    const opening = firstUser(s.dialogue)
    if (factor === undefined) {
      problems.push({ field: `${field}.context_factor`, reason: `"${s.context_factor}" is not one of factors[].name` })
    } else if (mentionAt(opening, factor.mentions) < 0) {
      problems.push({
        field: `${field}.dialogue[0].content`,
        reason: `the first user message names none of its factor's mentions (${factor.mentions.map((m) => `"${m}"`).join(", ")})`
      })
    }
    for (const [slotFactor, name] of [
      ["A", source.factor_a],
      ["B", source.factor_b]
    ] as const) {
      const other = factorsByName.get(name)
      if (other !== undefined && s.context_factor !== name) {
        const found = mentionsIn(opening, other.mentions)
        if (found.length > 0) {
          problems.push({
            field: `${field}.dialogue[0].content`,
            reason: `mentions factor ${slotFactor} ("${found[0]}") in a session about "${s.context_factor}"`
          })
        }
      }
    }
    for (const turn of userTurns(s.dialogue)) {
      const leaked = sharedRun(turn.content, s.contextual_preference, leakRun)
      if (leaked !== undefined) {
        problems.push({
          field: `${field}.dialogue[${turn.k}].content`,
          reason: `contains the ${leakRun}-word run "${leaked}" of its session's preference`
        })
      }
    }
    if (s.resource !== undefined) {
      const lines = opening.split("\n").length
      if (lines < resourceShape.lines || opening.length < resourceShape.chars) {
        problems.push({
          field: `${field}.dialogue[0].content`,
          reason: `a session with a resource carries it inline: at least ${resourceShape.lines} lines and ${resourceShape.chars} characters, found ${lines} lines and ${opening.length} characters`
        })
      }
    }
    return problems
  })

const requestProblems = (source: SampleSource, a: Factor | undefined, b: Factor | undefined): Array<Problem> => {
  const problems: Array<Problem> = []
  if (a !== undefined && mentionAt(source.current_request, a.mentions) < 0) {
    problems.push({ field: "current_request", reason: "names none of factor A's mentions" })
  }
  if (b !== undefined && mentionsIn(source.current_request, b.mentions).length > 0) {
    problems.push({ field: "current_request", reason: "mentions the contrastive factor B" })
  }
  for (const [name, preference] of [
    ["preference_a", source.preference_a],
    ["preference_a_changed", source.preference_a_changed]
  ] as const) {
    const leaked = sharedRun(source.current_request, preference, leakRun)
    if (leaked !== undefined)
      problems.push({ field: "current_request", reason: `contains the ${leakRun}-word run "${leaked}" of ${name}` })
  }
  return problems
}

/** Mentions of A vary, are not always the bare name, and not always at the start of the message. */
const mentionProblems = (
  source: SampleSource,
  a: Factor,
  factorsByName: ReadonlyMap<string, Factor>
): Array<Problem> => {
  const problems: Array<Problem> = []
  const aTexts = [
    ...source.sessions.filter((s) => s.context_factor === source.factor_a).map((s) => firstUser(s.dialogue)),
    source.current_request
  ]
  const forms = new Set(aTexts.flatMap((text) => mentionsIn(text, a.mentions).map(lower)))
  if (forms.size < 3) {
    problems.push({
      field: "factors",
      reason: `A's sessions and the request use ${forms.size} different mentions of "${a.name}"; expected at least 3`
    })
  }
  const bare = aTexts.filter((text) => lower(text).includes(lower(a.name))).length
  if (bare * 2 > aTexts.length) {
    problems.push({
      field: "factors",
      reason: `the exact name "${a.name}" appears in ${bare} of ${aTexts.length} A openings and the request; expected at most half`
    })
  }
  const late = source.sessions.filter((s) => {
    const factor = factorsByName.get(s.context_factor)
    return factor !== undefined && mentionAt(firstUser(s.dialogue), factor.mentions) > lateMention
  }).length
  if (late < 3) {
    problems.push({
      field: "sessions",
      reason: `in ${late} opening messages the factor is first named after character ${lateMention}; expected at least 3`
    })
  }
  return problems
}

const topicProblems = (source: SampleSource): Array<Problem> => {
  const has = (text: string) => mentionAt(text, source.topic.mentions) >= 0
  const problems: Array<Problem> = []
  if (!has(source.current_request)) problems.push({ field: "current_request", reason: "does not mention the topic" })
  const withTopic = source.sessions.filter((s) => has(allText(s.dialogue)))
  if (!withTopic.some((s) => s.context_factor === source.factor_a)) {
    problems.push({ field: "topic", reason: "no session about factor A mentions the topic" })
  }
  const otherFactors = new Set(
    withTopic.filter((s) => s.context_factor !== source.factor_a).map((s) => s.context_factor)
  )
  if (otherFactors.size < 2) {
    problems.push({
      field: "topic",
      reason: `sessions of ${otherFactors.size} other factors mention the topic; expected at least 2`
    })
  }
  return problems
}

const resourceProblems = (source: SampleSource): Array<Problem> => {
  const n = source.sessions.filter((s) => s.resource !== undefined).length
  return n < 2 ? [{ field: "sessions", reason: `expected at least 2 sessions with a resource, found ${n}` }] : []
}

/** Every way one persona breaks the template or the realism rules; empty when it is sound. */
export const source = (src: SampleSource): ReadonlyArray<Problem> => {
  if (src.sessions.length !== priorSessions) {
    return [{ field: "sessions", reason: `expected ${priorSessions} prior sessions, found ${src.sessions.length}` }]
  }
  const factorsByName = new Map(src.factors.map((f) => [f.name, f]))
  const a = factorsByName.get(src.factor_a)
  const b = factorsByName.get(src.factor_b)
  return [
    ...factorProblems(src),
    ...(src.preference_a === src.preference_a_changed
      ? [{ field: "preference_a_changed", reason: "must differ from preference_a" }]
      : []),
    ...(src.preference_a === src.preference_b
      ? [{ field: "preference_b", reason: "must differ from preference_a" }]
      : []),
    ...preferenceProblems("preference_a", src.preference_a),
    ...preferenceProblems("preference_a_changed", src.preference_a_changed),
    ...preferenceProblems("preference_b", src.preference_b),
    ...countProblem("checklist_a", "checklist items", src.checklist_a.length, checklistLength),
    ...countProblem("checklist_a_changed", "checklist items", src.checklist_a_changed.length, checklistLength),
    ...slotProblems(src),
    ...sessionProblems(src, factorsByName),
    ...requestProblems(src, a, b),
    ...(a !== undefined ? mentionProblems(src, a, factorsByName) : []),
    ...topicProblems(src),
    ...resourceProblems(src)
  ]
}

export interface Located {
  readonly file: string
  readonly source: SampleSource
}

/**
 * Runs of {@link templateRun} words of user text that appear in two different sessions (or a session
 * and a request) anywhere in the given personas: the mark of a shared complaint template. Each
 * repeat is reported once, at its later occurrence.
 */
export const sharedRuns = (
  sources: ReadonlyArray<Located>
): ReadonlyArray<{ readonly file: string; readonly problem: Problem }> => {
  const firstSeen = new Map<string, string>()
  const out: Array<{ file: string; problem: Problem }> = []
  for (const { file, source: src } of sources) {
    const units: Array<{ where: string; field: string; texts: ReadonlyArray<{ field: string; text: string }> }> = [
      ...src.sessions.map((s: SourceSession, i) => ({
        where: `${file} sessions[${i}]`,
        field: `sessions[${i}]`,
        texts: userTurns(s.dialogue).map((t) => ({ field: `sessions[${i}].dialogue[${t.k}].content`, text: t.content }))
      })),
      {
        where: `${file} current_request`,
        field: "current_request",
        texts: [{ field: "current_request", text: src.current_request }]
      }
    ]
    for (const unit of units) {
      const reported = new Set<string>()
      const mine = new Set<string>()
      for (const { field, text } of unit.texts) {
        for (const run of runs(words(text), templateRun)) {
          const seen = firstSeen.get(run)
          if (seen !== undefined && seen !== unit.where && !reported.has(seen)) {
            reported.add(seen)
            out.push({ file, problem: { field, reason: `repeats the ${templateRun}-word run "${run}" of ${seen}` } })
          }
          mine.add(run)
        }
      }
      for (const run of mine) if (!firstSeen.has(run)) firstSeen.set(run, unit.where)
    }
  }
  return out
}
