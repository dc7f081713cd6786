/**
 * A scripted model for the synthesis tests: it recognises which role a chat request is for from
 * the bundled prompts' wording and answers in that role's real output format (persona text, factor
 * JSON, session JSON, checklist JSON, user-simulator turns with a score that reaches 10, assistant
 * prose). Answers depend only on the request, so a rerun gets the same bytes.
 *
 * Seed descriptions steer it: a seed containing one of the `Defect` words makes that persona's
 * answers wrong in one specific way (malformed answers, or data the validator must catch).
 */
import { createHash } from "node:crypto"

export interface ChatBody {
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
}

export type Role = "persona" | "factors" | "session" | "checklist" | "user" | "assistant" | "validator"

export const roleOf = (body: ChatBody): Role | undefined => {
  const first = body.messages[0]?.content ?? ""
  if (body.messages[0]?.role === "system" && first.includes("You are a helpful assistant")) return "assistant"
  if (first.includes("You are drafting a fictional person")) return "persona"
  if (first.includes("List ") && first.includes("contrastive pair")) return "factors"
  if (first.includes("This person is about to start a chat")) return "session"
  if (first.includes("Break this user preference")) return "checklist"
  if (first.includes("You play this person")) return "user"
  if (first.includes("Which checklist items")) return "validator"
  return undefined
}

/** Seed words that make a persona's answers wrong. */
export const Defect = {
  /** The persona answer has no "Name:" line. */
  badPersona: "BADPERSONA",
  /** The factors answer is not JSON. */
  badFactors: "BADFACTORS",
  /** One session answer lacks the "story" field. */
  missingField: "MISSINGFIELD",
  /** One session's request repeats its preference. */
  leakyRequest: "LEAKYREQUEST",
  /** Checklists have one item (2-4 expected). */
  badChecklist: "BADCHECKLIST",
  /** The user simulator never scores 10. */
  neverEnds: "NEVERENDS",
  /** The user simulator answers prose, not JSON. */
  badUser: "BADUSER",
  /** Valid answers, but the sessions of factor 2 never name it, and the user simulator quotes factor 3's preference. */
  sloppy: "SLOPPY",
  /** The validator model finds only checklist item 1 hinted at. */
  halfHinted: "HALFHINTED"
} as const

const h = (text: string, n = 6) => createHash("sha256").update(text).digest("hex").slice(0, n)

// Words that do not recur across preferences, so no two preferences share a 6-word run by accident.
const vocab = [
  "amber",
  "basalt",
  "cobalt",
  "delta",
  "ember",
  "fjord",
  "garnet",
  "harbor",
  "indigo",
  "juniper",
  "kelp",
  "lagoon",
  "meadow",
  "nectar",
  "onyx",
  "pebble",
  "quartz",
  "raven",
  "saffron",
  "tundra",
  "umber",
  "violet",
  "willow",
  "yarrow"
]
const wordsFor = (key: string, n: number) => {
  const hex = createHash("sha256").update(key).digest()
  return Array.from({ length: n }, (_, i) => vocab[hex[i]! % vocab.length]!).join(" ")
}

const match = (text: string, re: RegExp) => re.exec(text)?.[1] ?? ""

const personaAnswer = (prompt: string): string => {
  const seed = match(prompt, /Starting point: (.*)/)
  if (seed.includes(Defect.badPersona)) return "A person who works hard and likes coffee."
  const marker = Object.values(Defect).find((d) => seed.includes(d)) ?? ""
  const name = `Avery ${marker === "" ? "" : `${marker} `}${h(seed, 4)}`
  return (
    `Name: ${name}\nPersona: ${name} works as ${seed.toLowerCase()} ${name} has a decade of practice. ` +
    `${name} needs clear plans. ${name} is often short of time. ${name} trained locally. ${name} keeps detailed notes.`
  )
}

const factorsAnswer = (prompt: string): string => {
  const person = match(prompt, /Here is a person:\n([^.]*)\./)
  if (person.includes(Defect.badFactors)) return "Here are the factors: {factors: [oops"
  const count = Number(match(prompt, /List (\d+) concrete/))
  const factors = Array.from({ length: count }, (_, i) => {
    const pair = i >= count - 2
    const name = `${person} factor ${i + 1}`
    return {
      background: `${name} has been part of the work for years.`,
      factor_type: pair ? "tool" : ["person", "organization", "event", "media"][i % 4],
      task_types: ["writing", "planning"],
      name,
      preference_type: "structure",
      preference: `When ${i + 1} is involved answers must follow ${wordsFor(`${name}/p`, 12)} precisely${person.includes(Defect.badChecklist) ? ` ${Defect.badChecklist}` : ""}.`,
      ...(pair
        ? { changed_preference: `Later for ${i + 1} answers must follow ${wordsFor(`${name}/c`, 12)} instead.` }
        : {})
    }
  })
  return "```json\n" + JSON.stringify({ factors }) + "\n```"
}

const sessionAnswer = (prompt: string): string => {
  const factor = match(prompt, /The chat involves "([^"]+)"/)
  const preference = match(prompt, /the person expects: (.*)/)
  const position = Number(match(prompt, /This is chat (\d+) of/))
  const tag = h(prompt, 4)
  const base = {
    task_type: "writing",
    story: `The person needs help with task ${tag}.`,
    request_with_preference: `Please help with ${factor} on task ${tag}. ${preference}`,
    request: `I am working on task ${tag} for ${factor}. Please review the material: [resource]`,
    resource_kind: position % 3 === 0 ? "document" : "none",
    resource:
      position % 3 === 0 ? `Section 1: scope ${tag}\nSection 2: budget\nSection 3: schedule\nSection 4: risks` : null
  }
  if (factor.includes(Defect.missingField) && position === 2) {
    const { story: _story, ...rest } = base
    return JSON.stringify(rest)
  }
  if (factor.includes(Defect.leakyRequest) && position === 3)
    return JSON.stringify({ ...base, request: `${base.request} ${preference}` })
  if (factor.includes(Defect.sloppy) && factor.endsWith("factor 2")) {
    return JSON.stringify({ ...base, request: `I am working on task ${tag}. Please review the material: [resource]` })
  }
  return JSON.stringify(base)
}

const checklistAnswer = (prompt: string): string => {
  const preference = match(prompt, /Preference: (.*)/)
  const tag = h(preference, 4)
  if (preference.includes(Defect.badChecklist)) return JSON.stringify({ items: [`Does the reply follow rule ${tag}?`] })
  return JSON.stringify({
    items: [`Does the reply keep the first part of rule ${tag}?`, `Does the reply keep the second part of rule ${tag}?`]
  })
}

const userAnswer = (prompt: string): string => {
  const turn = Number(match(prompt, /This is your reply number (\d+)/))
  const preference = match(prompt, /You silently expect: (.*)/)
  const factor = match(prompt, /The chat involves "([^"]+)"/)
  if (factor.includes(Defect.badUser)) return "The answer was fine but could be better."
  if (factor.includes(Defect.neverEnds))
    return JSON.stringify({ score: 4, hints: [1], message: `Still not there (${turn}).` })
  if (turn === 1) {
    const leak = factor.includes(Defect.sloppy) && factor.endsWith("factor 3")
    return JSON.stringify({
      score: 5,
      hints: [1],
      message: leak ? `You forgot this: ${preference}` : "The start misses something I always need here."
    })
  }
  if (turn === 2)
    return JSON.stringify({ score: 8, hints: [2], message: "Closer, though the ending still feels off to me." })
  return JSON.stringify({ score: 10, hints: [], message: "That works, thank you." })
}

const assistantAnswer = (body: ChatBody): string => {
  const last = body.messages[body.messages.length - 1]?.content ?? ""
  return `Here is a revised draft (${h(last, 6)}). It addresses your last message. Let me know what to change.`
}

/** The answer to one chat request, with the role it was recognised as. */
export const answer = (body: ChatBody): { readonly role: Role | "unknown"; readonly text: string } => {
  const role = roleOf(body)
  const prompt = body.messages[0]?.content ?? ""
  switch (role) {
    case "persona":
      return { role, text: personaAnswer(prompt) }
    case "factors":
      return { role, text: factorsAnswer(prompt) }
    case "session":
      return { role, text: sessionAnswer(prompt) }
    case "checklist":
      return { role, text: checklistAnswer(prompt) }
    case "user":
      return { role, text: userAnswer(prompt) }
    case "assistant":
      return { role, text: assistantAnswer(body) }
    case "validator":
      return { role, text: JSON.stringify({ hinted: prompt.includes(Defect.halfHinted) ? [1] : [1, 2] }) }
    case undefined:
      return { role: "unknown", text: "I do not recognise this prompt." }
  }
}
