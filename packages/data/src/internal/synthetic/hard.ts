/**
 * What `difficulty=hard` adds to the synthetic generator: the phenomena of LLM-written CUPID
 * histories that make retrieval hard (docs/data.md, "Difficulty"). Every function draws from the
 * generator's separate hard stream, so `difficulty=easy` output stays what it always was.
 * - varied factor mentions (full label, without its determiner, the proper-noun span, a short
 *   form), and a mention that is often not at the start of the opening message;
 * - a persona-level topic phrase shared by sessions of different factors and by the request;
 * - feedback composed from lead-ins, paraphrased cores and follow-ups instead of fixed strings.
 */
import type * as Prng from "./prng.js"

const determiner = /^(my|our|the|a|an) /i

/** Surface forms of a factor label, most specific first; all contain enough to tell the factor apart. */
export const aliases = (
  label: string,
  person?: { readonly first: string; readonly last?: string; readonly role: string }
): ReadonlyArray<string> => {
  if (person !== undefined) {
    const full = person.last === undefined ? person.first : `${person.first} ${person.last}`
    return unique([
      `${full} (${person.role})`,
      full,
      person.first,
      `${person.role.replace(determiner, "my ")} ${person.first}`,
      ...(person.last === undefined ? [] : [person.last])
    ])
  }
  const bare = label.replace(determiner, "")
  const span = properSpan(bare)
  // The head noun phrase: the words before the first preposition ("onboarding checklist for interns").
  const words = bare.split(" ")
  const cut = words.findIndex((w, i) => i > 0 && prepositions.has(w))
  const head = cut >= 2 ? words.slice(0, cut).join(" ") : undefined
  return unique([
    label,
    determiner.test(label) ? `the ${bare}` : label,
    ...(span !== undefined && span !== bare ? [span] : []),
    ...(span === undefined && head !== undefined ? [`the ${head}`] : [])
  ])
}

/** The full label a quarter of the time (when there is another form), else one of the other forms. */
export const pickAlias = (rng: Prng.Rng, aliases: ReadonlyArray<string>): string =>
  aliases.length === 1 || rng.chance(0.25) ? aliases[0]! : rng.pick(aliases.slice(1))

const prepositions = new Set(["for", "of", "on", "at", "to", "with", "in", "about", "from"])

const unique = (xs: ReadonlyArray<string>): ReadonlyArray<string> => [...new Set(xs)]

/** The longest run of capitalized or numbered words ("Fujifilm X-T30", "Riverside Food Bank"). */
const properSpan = (text: string): string | undefined => {
  let best: Array<string> = [],
    run: Array<string> = []
  for (const w of text.split(" ")) {
    if (/^[A-Z0-9]/.test(w) || (run.length > 0 && /^(of|and|for|de|the)$/.test(w))) run.push(w)
    else run = []
    if (run.length > best.length) best = [...run]
  }
  while (best.length > 0 && /^(of|and|for|de|the)$/.test(best[best.length - 1]!)) best.pop()
  return best.length >= 1 && best.join(" ").length >= 4 ? best.join(" ") : undefined
}

/** Persona-level recurring topics: a project, client, dish, dataset, place or event in the persona's life. */
export const topics: ReadonlyArray<string> = [
  "the Hollis Street renovation",
  "the Dalton account",
  "the harvest festival",
  "the spring open house",
  "the brown-butter trout recipe",
  "the county survey data",
  "the Marlow Bay trip",
  "the Q3 member drive",
  "the Kestrel redesign",
  "the Ashgrove grant",
  "the lakeside cleanup",
  "the Juniper migration",
  "the Pemberton case study",
  "the winter recital",
  "the Alder Creek site",
  "the Saffron pop-up",
  "the Norwood move",
  "the Beacon Hill tour",
  "the Tamsin rebrand",
  "the Okoro family reunion",
  "the Whitlow dataset",
  "the Ferris Park mural",
  "the Copperline launch event",
  "the Granger audit"
]

const topicLines: ReadonlyArray<string> = [
  "This is all tied up with {topic}.",
  "Everything this month revolves around {topic}, so keep that in mind.",
  "It feeds into {topic} as well.",
  "Background: I'm juggling this alongside {topic}.",
  "Part of why it matters is {topic}.",
  "The deadline lines up with {topic}, which doesn't help.",
  "I'll reuse some of this for {topic} later.",
  "{Topic} is eating most of my week, so I want this done quickly."
]

export const topicLine = (rng: Prng.Rng, topic: string): string => {
  const line = rng.pick(topicLines)
  return line.replace("{topic}", topic).replace("{Topic}", topic.charAt(0).toUpperCase() + topic.slice(1))
}

/** Context sentences that can open a first message, so the factor is not named at its start. */
export const preambles: ReadonlyArray<string> = [
  "Quick one before I forget.",
  "I've been going back and forth on this all morning.",
  "So here's where I'm at.",
  "Bit of a long story, but the short version is this.",
  "I finally have a free hour.",
  "Okay, new thing.",
  "This came up again yesterday.",
  "Following up on something I've been putting off."
]

const leads: ReadonlyArray<string> = [
  "",
  "",
  "Hmm.",
  "Okay, but",
  "Close, though.",
  "Not quite.",
  "Honestly,",
  "So,",
  "One thing:",
  "Hm, wait.",
  "Thanks, but",
  "I see where you're going, but",
  "Almost.",
  "Right, but",
  "That's a start, but"
]

const follows: ReadonlyArray<string> = [
  "",
  "",
  "",
  "Can you try again?",
  "Could you rework it?",
  "Mind taking another pass?",
  "Let's fix that.",
  "Can you adjust?",
  "Give it another go?",
  "That's the main thing.",
  "Otherwise it's fine."
]

/** Word swaps that paraphrase a complaint core; each applies with probability one half. */
const swaps: ReadonlyArray<readonly [RegExp, ReadonlyArray<string>]> = [
  [/\bI need\b/g, ["I need", "I'd want", "what I need is", "I really need"]],
  [/\bhard\b/g, ["hard", "tough", "difficult"]],
  [/\blong\b/g, ["long", "lengthy", "drawn-out"]],
  [/\bcan't\b/g, ["can't", "cannot", "really can't"]],
  [/\bfeels\b/g, ["feels", "comes across as", "seems"]],
  [/\bwant\b/g, ["want", "would like", "need"]],
  [/\bThis\b/g, ["This", "It", "The draft"]],
  [/\bpeople\b/g, ["people", "readers", "folks"]],
  [/\ba bit\b/g, ["a bit", "a little", "slightly"]],
  [/\breally\b/g, ["really", "truly", "honestly"]]
]

const lowerFirst = (s: string): string => (/^I\b|^I'/.test(s) ? s : s.charAt(0).toLowerCase() + s.slice(1))

/** A feedback turn built around one of a pole's complaint cores, never the same string twice by design. */
export const composeComplaint = (rng: Prng.Rng, core: string): string => {
  let text = core
  for (const [pattern, options] of swaps) if (rng.chance(0.5)) text = text.replace(pattern, () => rng.pick(options))
  const lead = rng.pick(leads)
  const follow = rng.pick(follows)
  const body =
    lead === "" ? text : lead.endsWith(",") || /but$/.test(lead) ? `${lead} ${lowerFirst(text)}` : `${lead} ${text}`
  return follow === "" ? body : `${body} ${follow}`
}
