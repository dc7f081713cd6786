// The lexicon of the extractive inferrer: which words mark a user sentence as carrying a
// requirement, how strongly, and how such a sentence is trimmed into a clause of a statement.
import { isStopword } from "./text.js"

interface Cue {
  readonly name: string
  readonly weight: number
  readonly pattern: RegExp
}

/** Base forms that open an instruction ("Keep it to one page", "Use numbered steps"). */
export const imperativeVerbs = new Set(
  (
    "add avoid break bring change check cite clarify combine condense consider cut define describe double drop emphasize " +
    "end explain expand focus format frame give go group highlight include keep label lead leave limit link list lose make " +
    "mark mention move name note number offer open order organize outline phrase pick place point prefer present provide " +
    "put quote rank reduce remember remove rephrase replace rewrite say separate shorten show simplify skip sort spell " +
    "split start state stay stick stop structure summarize swap tell tighten tone trim try turn use write"
  ).split(" ")
)

const fillers =
  /^(?:(?:ok|okay|so|and|but|also|just|now|then|hmm|well|actually|honestly|basically|really|oh|alright|right|yes|yeah|great|good|thanks|perfect|better|nice|sure|please|next time|from now on|going forward|in the future|one more thing|for (?:this|that) one|this time)\b[,!.:]?\s+)+/i

/** The sentence without opening fillers ("Okay, but next time, ..."). */
export const withoutFillers = (sentence: string): string => sentence.replace(fillers, "")

const cues: ReadonlyArray<Cue> = [
  { name: "make sure", weight: 3, pattern: /\bmake sure\b/ },
  { name: "next time", weight: 3, pattern: /\b(?:next time|from now on|going forward|in (?:the )?future)\b/ },
  { name: "instead", weight: 3, pattern: /\binstead\b/ },
  {
    name: "I need/want/prefer",
    weight: 3,
    pattern: /\bi (?:need|want|prefer)\b|\bi(?:'d| would) (?:like|prefer|rather|want)\b/
  },
  { name: "obligation", weight: 3, pattern: /\b(?:must|should|has to|have to|needs? to|got to)\b/ },
  { name: "negation", weight: 3, pattern: /\b(?:don't|do not|never|avoid|no more)\b/ },
  { name: "always", weight: 3, pattern: /\balways\b/ },
  { name: "rather than", weight: 3, pattern: /\brather than\b/ },
  {
    name: "expects",
    weight: 3,
    pattern: /\b(?:wants|expects|prefers|requires|insists|hates|likes|needs|can't stand|cares about)\b/
  },
  { name: "please", weight: 2, pattern: /\bplease\b/ },
  { name: "could you", weight: 2, pattern: /\b(?:could|can|would|will) you\b/ },
  { name: "too", weight: 2, pattern: /\btoo (?:much|many|long|short|[a-z]{3,})\b/ },
  {
    name: "comparative",
    weight: 2,
    pattern:
      /\b(?:more|less|fewer) [a-z]|\b[a-z]+er than\b|\b(?:shorter|longer|simpler|clearer|tighter|briefer|plainer|smaller|bigger)\b/
  },
  { name: "limit", weight: 2, pattern: /\b(?:at least|at most|no more than|up to|no longer than|maximum|minimum)\b/ },
  {
    name: "change",
    weight: 1,
    pattern:
      /\b(?:now (?:wants|needs|prefers|expects|likes)|(?:has|have|'s|'ve) changed|no longer|anymore|these days|from here on)\b/
  },
  {
    name: "wish",
    weight: 2,
    pattern:
      /\b(?:(?:would|it'd|that'd) (?:be (?:better|nicer|great|helpful)|help|work better)|ideally|i was hoping|i'm hoping|i expected|works better for)\b/
  },
  { name: "only/without", weight: 1, pattern: /\b(?:only|without|each|every)\b/ },
  {
    name: "complaint",
    weight: 1,
    pattern:
      /\b(?:hard to|confusing|missing|lacks?|not enough|wrong|not quite|doesn't|isn't|wasn't|didn't|won't|worried|concerned|overwhelm\w*|get lost)\b/
  }
]

const praiseOpening =
  /^(?:perfect|great|awesome|excellent|thanks|thank you|love (?:it|this|that)|nice|wonderful|brilliant|(?:this|that|it)(?:'s| is| looks) (?:great|perfect|good|much better|better))\b/
const approval =
  /\b(?:exactly|just) what (?:i|she|he|they|we) (?:needs?|needed|wants?|wanted|expects?|expected|likes?|was looking for|were looking for|asked for)\b/

export interface CueMatch {
  /** Sum of the weights of the distinct cues found, capped at 6; lowered for approval and praise. */
  readonly score: number
  readonly names: ReadonlyArray<string>
}

/** How strongly a sentence reads as a requirement. */
export const cueScore = (sentence: string): CueMatch => {
  const lower = sentence.toLowerCase().replace(/[\u2018\u2019]/g, "'")
  const names: Array<string> = []
  let score = 0
  for (const cue of cues) {
    if (cue.pattern.test(lower)) {
      names.push(cue.name)
      score += cue.weight
    }
  }
  const first = /^[a-z']+/.exec(withoutFillers(lower).replace(/^(?:could|can|would|will) you (?:please )?/, ""))?.[0]
  if (first !== undefined && imperativeVerbs.has(first) && !/^let me\b/.test(withoutFillers(lower))) {
    names.push("imperative")
    score += 2
  }
  score = Math.min(6, score)
  if (approval.test(lower)) return { score: score - 3, names: [...names, "approval"] }
  if (praiseOpening.test(lower) && score < 3) return { score: score - 2, names: [...names, "praise"] }
  return { score, names }
}

const politeOpening =
  /^(?:(?:could|can|would|will) you|i(?:'d| would) like you to|i (?:need|want) you to)\s+(?:please\s+)?/i

/**
 * The sentence as a clause of a preference statement: opening fillers, polite framing ("Could you",
 * "I'd like you to", "please") and end punctuation removed; the requirement's own words kept.
 */
export const toClause = (sentence: string): string => {
  let t = withoutFillers(sentence.trim().replace(/[\u2018\u2019]/g, "'"))
  t = t.replace(politeOpening, "")
  t = withoutFillers(t)
  t = t.replace(/,?\s*please\b/i, "").replace(/^please\s+/i, "")
  t = t.replace(/[\s.!?;:,]+$/, "")
  return t.trim()
}

const numberWords = new Set("two three four five six seven eight nine ten".split(" "))

/**
 * The clause as it appears after the first one: an instruction, a function word or a number word
 * loses its capital; anything else (likely a name) and "I" keep it.
 */
export const continuing = (clause: string): string => {
  const first = /^[A-Za-z']+/.exec(clause)?.[0]
  if (first === undefined || first === "I" || first.startsWith("I'")) return clause
  const lower = first.toLowerCase()
  return imperativeVerbs.has(lower) || isStopword(lower) || numberWords.has(lower)
    ? clause.charAt(0).toLowerCase() + clause.slice(1)
    : clause
}

export const capitalized = (clause: string): string => clause.charAt(0).toUpperCase() + clause.slice(1)

const positive =
  /\b(?:thanks|thank you|perfect|great|exactly|love|awesome|excellent|works|helpful|appreciate|nice|good|wonderful|brilliant|spot on|looks good|much better)\b/i
const lasting = /\b(?:next time|from now on|going forward|always|make sure)\b/i

/** The short, positive last turn that closes a session ("Perfect, thanks!"); a standing instruction in it keeps it. */
export const isPositiveClose = (turn: string): boolean =>
  turn.trim().split(/\s+/).length <= 30 && positive.test(turn) && !lasting.test(turn)
