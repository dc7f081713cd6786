/**
 * Preference axes of the synthetic generator. A preference is three poles of three distinct axes;
 * a conflicting preference flips poles of the same axes. Each pole carries the clause used in the
 * preference text, its checklist question, indirect complaints a user makes when an answer misses
 * it, and the assistant's acknowledgements when it revises. Complaints never quote the clause.
 */
export interface Pole {
  readonly clause: string
  readonly check: string
  readonly complaints: ReadonlyArray<string>
  readonly acks: ReadonlyArray<string>
}

export type Axis = readonly [Pole, Pole]

const pole = (clause: string, check: string, complaints: ReadonlyArray<string>, acks: ReadonlyArray<string>): Pole => ({
  clause,
  check,
  complaints,
  acks
})

export const axes: ReadonlyArray<Axis> = [
  [
    pole(
      "lay the work out as numbered steps",
      "Is the content organized as numbered steps?",
      [
        "I lost track halfway through; it's one long block and I can't tell where one part ends.",
        "When I'm actually doing this I need to know where I am in the sequence.",
        "It reads like an essay. I need something I can follow along with."
      ],
      [
        "Here it is again, split into an ordered sequence you can tick off.",
        "I've reorganized it so each action stands on its own, in order."
      ]
    ),
    pole(
      "read as flowing prose without lists",
      "Is the response written as continuous prose with no lists?",
      [
        "This looks like a checklist; it feels choppy and mechanical.",
        "All these fragments make it hard to see how the pieces connect.",
        "It reads like slide notes. I want something that actually flows."
      ],
      [
        "Here's a version that connects the ideas into a few paragraphs.",
        "I've rewritten it as connected paragraphs instead of fragments."
      ]
    )
  ],
  [
    pole(
      "stay under about 120 words",
      "Is the response shorter than about 120 words?",
      [
        "That's a lot to get through, and I only have a minute between things.",
        "I'm not going to read all of that. Can it be tighter?",
        "Way too long for what I need right now."
      ],
      ["Trimmed down to the essentials.", "Here's the short version."]
    ),
    pole(
      "explain the reasoning behind every suggestion",
      "Does the response explain the reasoning behind each suggestion?",
      [
        "This tells me what to do but not why, and I can't judge it without the reasoning.",
        "It's too thin. I need to understand the thinking so I can adapt it.",
        "I'd rather have the full picture than a quick answer."
      ],
      [
        "Here's a fuller version that walks through why each point matters.",
        "I've expanded each point with the reasoning behind it."
      ]
    )
  ],
  [
    pole(
      "keep a formal, professional tone",
      "Is the tone formal and professional?",
      [
        "This sounds too chatty for the situation.",
        "It's a bit too casual; this has to come across as polished.",
        "The jokes and exclamation marks don't fit here."
      ],
      ["Here's a more polished version.", "I've adjusted the wording to be more measured."]
    ),
    pole(
      "sound warm and casual, like a friend talking",
      "Is the tone warm and conversational?",
      [
        "This sounds stiff, like a legal notice.",
        "Too corporate. It doesn't sound like me at all.",
        "Can it loosen up? Nobody talks like this."
      ],
      ["Here's a friendlier take.", "I've relaxed the wording so it sounds more natural."]
    )
  ],
  [
    pole(
      "open with a one-sentence bottom line",
      "Does the response open with a one-sentence bottom line?",
      [
        "I had to dig to find the actual answer.",
        "By the time I got to the point I'd forgotten the question.",
        "What's the takeaway? It's buried somewhere in the middle."
      ],
      ["Leading with the takeaway this time.", "Here's the answer up front, then the details."]
    ),
    pole(
      "build up to the conclusion instead of stating it first",
      "Does the response build toward its conclusion rather than opening with it?",
      [
        "Starting with the verdict makes the rest feel like an afterthought.",
        "If the answer comes first, nobody will read the context that justifies it.",
        "It jumps to the conclusion too fast. Walk through it first."
      ],
      [
        "I've reordered it so the conclusion comes last.",
        "Here's a version that walks through the context before landing on the answer."
      ]
    )
  ],
  [
    pole(
      "include at least one concrete, worked example",
      "Does the response include a concrete example?",
      [
        "This is all abstract; I can't picture what it looks like in practice.",
        "Show me what that would actually look like.",
        "I get the principle, but I need to see it applied."
      ],
      ["Here it is with a concrete example worked through.", "I've added a specific example to show how it plays out."]
    ),
    pole(
      "stick to principles without examples",
      "Does the response avoid examples and stick to general principles?",
      [
        "The examples are distracting, and they don't match my situation anyway.",
        "Skip the made-up scenarios; they just add noise.",
        "I don't need illustrations, just the underlying idea."
      ],
      [
        "Here's the same without the examples, just the principles.",
        "I've taken out the illustrations and kept the core ideas."
      ]
    )
  ],
  [
    pole(
      "use plain words with no jargon",
      "Does the response avoid jargon and technical terms?",
      [
        "Half of these terms mean nothing to me.",
        "I'd have to look up every other word.",
        "Can you say it the way you'd explain it to a neighbor?"
      ],
      ["Here it is in everyday words.", "I've swapped the technical terms for plain language."]
    ),
    pole(
      "use precise technical terminology",
      "Does the response use precise technical terms?",
      [
        "This is too dumbed down; I know the field.",
        "The vague wording makes it ambiguous. Use the proper terms.",
        "Please don't simplify. I need the exact vocabulary."
      ],
      ["Here's a version with the precise terms.", "I've replaced the loose wording with the exact terminology."]
    )
  ],
  [
    pole(
      "offer exactly two alternatives to choose between",
      "Does the response present exactly two alternatives?",
      [
        "You've decided for me. I want to weigh it myself.",
        "Is there really only one way? I'd like to compare.",
        "Give me something to choose between."
      ],
      ["Here are two options side by side.", "I've laid out two alternatives so you can pick."]
    ),
    pole(
      "commit to one clear recommendation",
      "Does the response commit to a single recommendation?",
      [
        "Too many options. I just need you to tell me what to do.",
        "I can't choose between all of these. Which one?",
        "This list doesn't help me decide."
      ],
      ["My recommendation, just one.", "Here's the single approach I'd go with."]
    )
  ],
  [
    pole(
      "point out risks and what could go wrong",
      "Does the response call out risks or possible problems?",
      [
        "This all sounds too rosy. What could go wrong?",
        "I got burned last time because nobody mentioned the downsides.",
        "Where are the catches?"
      ],
      ["Here it is with the risks spelled out.", "I've added what could go wrong and how to handle it."]
    ),
    pole(
      "skip disclaimers and hedging",
      "Is the response free of disclaimers and hedging?",
      [
        "All these warnings make it sound like I shouldn't even try.",
        "Too many 'it depends' and 'be careful' lines.",
        "I don't need the caveats; I know the risks."
      ],
      ["Here it is without the hedging.", "I've removed the warnings and kept it direct."]
    )
  ],
  [
    pole(
      "end with a question about what to adjust",
      "Does the response end with a question to the user?",
      [
        "It just stops. I'd like you to check what I think.",
        "Ask me what I need next instead of assuming.",
        "I want to be able to steer this."
      ],
      [
        "Revised below, and I'll check in at the end so you can steer the next pass.",
        "Here's the update; tell me where to take it next."
      ]
    ),
    pole(
      "end without any follow-up questions",
      "Does the response end without asking the user questions?",
      [
        "Please stop asking me things at the end. Just finish the thought.",
        "I don't want to be quizzed.",
        "The question at the end is unnecessary."
      ],
      ["Here's the revision, nothing to answer at the end.", "Done. It now ends on the content itself."]
    )
  ],
  [
    pole(
      "attach rough numbers, times or costs to each point",
      "Does the response give numbers such as times, amounts or costs?",
      [
        "How long will each part take? I have no sense of scale.",
        "'A bit' and 'some' don't help me plan.",
        "I need figures to budget around."
      ],
      ["Here it is with estimates attached.", "I've put rough figures on each part."]
    ),
    pole(
      "avoid numbers and keep it qualitative",
      "Does the response avoid specific numbers and estimates?",
      [
        "These figures feel made up, and they stress me out.",
        "Please don't put numbers on it; every situation is different.",
        "I don't want targets, just the general idea."
      ],
      ["Here it is without the figures.", "I've taken out the numbers and kept the general picture."]
    )
  ],
  [
    pole(
      "compare things in a table",
      "Does the response include a table?",
      [
        "I have to flip back and forth to compare these.",
        "It's hard to see the differences side by side.",
        "Can I see everything lined up at once?"
      ],
      ["Here's a side-by-side grid.", "I've put the comparison in rows and columns."]
    ),
    pole(
      "avoid tables and grids",
      "Does the response avoid tables?",
      [
        "The grid doesn't display well on my phone.",
        "I find those boxes hard to read.",
        "Please no grid; I'll be reading this aloud."
      ],
      ["Reformatted without the grid.", "Here it is as plain text, no grid."]
    )
  ],
  [
    pole(
      "acknowledge how the user feels before giving advice",
      "Does the response acknowledge the user's feelings before advising?",
      [
        "You went straight to fixing things, and this has been stressful.",
        "A little understanding first would help.",
        "It feels cold to jump right into instructions."
      ],
      ["That does sound stressful. Here's a gentler version.", "I understand this has been a lot; here's the revision."]
    ),
    pole(
      "go straight to practical advice without emotional commentary",
      "Does the response go straight to practical advice without emotional commentary?",
      [
        "I don't need sympathy, just the plan.",
        "Skip the 'I understand how you feel' part.",
        "Less reassurance, more substance, please."
      ],
      ["Straight to the practical part.", "Here's the plan, nothing else."]
    )
  ]
]

/** A preference as chosen poles: `[axis index, pole 0 | 1]` for each of its checklist items. */
export type Choice = ReadonlyArray<readonly [number, 0 | 1]>

export const poleOf = ([axis, side]: readonly [number, 0 | 1]): Pole => axes[axis]![side]

const leadIns = ["Responses should", "Answers need to", "Replies must", "The assistant should"]

/** The preference sentence: a lead-in and the three clauses, e.g. "Responses should a, b, and c." */
export const preferenceText = (choice: Choice, leadIn: number): string => {
  const clauses = choice.map((c) => poleOf(c).clause)
  const list = clauses.length <= 2 ? clauses.join(" and ") : `${clauses.slice(0, -1).join(", ")}, and ${clauses.at(-1)}`
  return `${leadIns[leadIn % leadIns.length]} ${list}.`
}

export const leadInCount = leadIns.length

export const checklist = (choice: Choice): ReadonlyArray<string> => choice.map((c) => poleOf(c).check)
