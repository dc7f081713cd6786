import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as Domain from "../src/Domain.js"
import type { Evidence } from "../src/Evidence.js"
import { cueScore, isPositiveClose, toClause } from "../src/internal/stages/cues.js"
import { sentences } from "../src/internal/stages/text.js"
import * as ModelCache from "../src/ModelCache.js"
import * as Models from "../src/Models.js"
import * as Pipeline from "../src/Pipeline.js"
import * as Plugin from "../src/Plugin.js"
import * as Retriever from "../src/Retriever.js"
import * as ExtractiveInferrer from "../src/ExtractiveInferrer.js"

const u = (content: string): Domain.Message => ({ role: "user", content })
const a = (content: string): Domain.Message => ({ role: "assistant", content })

// A persona in CUPID's shape: Professor Okafor (current factor) with an earlier preference (claim
// first, two peer-reviewed sources) and a changed one (numbered outline, a question per section);
// Dr. Lindqvist (contrastive: similar person, conflicting preference); two unrelated sessions.
const okafor1 = [
  u(
    "I'm writing the literature review chapter for Professor Okafor, my PhD advisor. Can you help me draft the opening section on soil microbiomes?"
  ),
  a("Here's a draft opening that introduces soil microbiomes, their history, and the key debates in the field."),
  u("She'll stop reading before she gets to the point. The main claim has to come first, in one sentence."),
  a("Revised: the section now opens with the claim in a single sentence."),
  u("Good. But every section needs at least two peer-reviewed sources, she checks that."),
  a("Added two peer-reviewed citations to each section."),
  u("Great, thanks, this is what she expects.")
]
const okafor2 = [
  u("Professor Okafor asked for a short methods rationale for my committee report. Can you draft it?"),
  a("Here's a rationale that walks through the background before explaining the choice of sampling."),
  u("Put the claim up front in one sentence. Background can follow."),
  a("Moved the claim to the top."),
  u("Also cite two peer-reviewed papers for the sampling choice, not blog posts."),
  a("Replaced the blog references with two peer-reviewed papers."),
  u("Perfect.")
]
const sourdough = [
  u("My sourdough starter has been sluggish since I moved it to the basement. What can I do?"),
  a("Several factors could matter: temperature, flour type, hydration, feeding schedule and container."),
  u("Too many options at once. Give me one change to try per day."),
  a("Day 1: move it somewhere warmer."),
  u("That works, thank you!")
]
const lindqvist = [
  u("I need to send Dr. Lindqvist, my co-advisor, a draft of the introduction. Can you help?"),
  a("Here's a draft that opens with the main claim and cites recent work."),
  u("Dr. Lindqvist likes to be eased in. Start with the background, not the claim."),
  a("Reordered to open with background."),
  u("And keep citations out of the main text, put them in a short list at the end."),
  a("Moved the citations to a list at the end."),
  u("Great, thanks.")
]
const okaforChanged = [
  u("I have to send Professor Okafor the plan for my second chapter. Can you help me lay it out?"),
  a("Here's a plan in paragraphs, with the main claim first and sources for each part."),
  u("She's changed how she reviews plans. She now wants a numbered outline, not paragraphs."),
  a("Here it is as a numbered outline."),
  u("End each section with one question for her to answer."),
  a("Added a question for her at the end of each section."),
  u("Thanks, looks good.")
]
const zotero = [
  u("Can you help me set up Zotero so my citations sync between my laptop and the lab desktop?"),
  a("Sure: create an account, enable sync, and install the connector."),
  u("I'd rather not use the cloud storage, the lab has a WebDAV server. Use that instead."),
  a("Here is how to point Zotero at WebDAV."),
  u("Works now, thanks a lot!")
]
const request =
  "Can you help me prepare the draft of my discussion chapter for Professor Okafor? Here are my notes on the main findings."

const sessions = (...dialogues: ReadonlyArray<ReadonlyArray<Domain.Message>>): ReadonlyArray<Domain.SessionView> =>
  dialogues.map((dialogue, index) => ({ id: Domain.sessionId(index), index, hash: `h${index}`, dialogue }))

const defaults: ExtractiveInferrer.Options = { maxWords: 30, maxClauses: 3 }
const infer = (evidence: Evidence, options: ExtractiveInferrer.Options = defaults, req = request) =>
  ExtractiveInferrer.infer({ request: req, evidence }, options)

const earlier =
  "Every section needs at least two peer-reviewed sources, she checks that; the main claim has to come first, in one sentence."
const earlierFromBoth =
  "Every section needs at least two peer-reviewed sources, she checks that; put the claim up front in one sentence."
const changed =
  "She now wants a numbered outline, not paragraphs; end each section with one question for her to answer."

describe("extractive inferrer on a hand-made persona", () => {
  it("consistent, oracle sessions: the requirement words of the preference", () => {
    // s1 "every section needs ...": cue 4 (capped) + agreement 1 ("cite two peer-reviewed papers" in s2) = 5;
    // s2 "put the claim up front ...": cue 2 + agreement 1 + recency 1.5 = 4.5; the rest restate these two.
    expect(infer({ sessions: sessions(okafor1, okafor2) })).toEqual({
      preference: earlierFromBoth,
      analysis:
        "Extractive heuristic (no model): 4 feedback sentence(s) from 2 of 2 session(s); composed from s1 (5.00), s2 (4.50)."
    })
  })

  it("consistent, full history: the unrelated sessions are set aside", () => {
    const out = infer({ sessions: sessions(okafor1, sourdough, okafor2, zotero) })
    expect(out.preference).toBe(earlier)
    expect(out.analysis).toBe(
      "Extractive heuristic (no model): 8 feedback sentence(s) from 4 of 4 session(s); composed from s1 (5.00), s1 (4.50)."
    )
  })

  it("contrastive, full history: the similar person's conflicting requirements stay out", () => {
    const out = infer({ sessions: sessions(okafor1, sourdough, lindqvist, okafor2, zotero) })
    expect(out.preference).toBe(earlier)
    expect(out.preference).not.toMatch(/background|citations|WebDAV/)
  })

  it("changing, full history: the recent preference wins and the stale one is not mixed in", () => {
    const out = infer({ sessions: sessions(okafor1, sourdough, okafor2, zotero, okaforChanged) })
    expect(out).toEqual({
      preference: changed,
      analysis:
        "Extractive heuristic (no model): 10 feedback sentence(s) from 5 of 5 session(s); composed from s5 (5.50), s5 (4.50)."
    })
  })

  it("one unrelated session: scores computed by hand", () => {
    // Each sentence: cue 2 ("too" / an instruction) + recency 1.5 (the only session) + no relevance, agreement or overlap.
    expect(infer({ sessions: sessions(sourdough) })).toEqual({
      preference: "Too many options at once; give me one change to try per day.",
      analysis:
        "Extractive heuristic (no model): 2 feedback sentence(s) from 1 of 1 session(s); composed from s1 (3.50), s1 (3.50)."
    })
  })

  it("skips the task message and the positive close", () => {
    const out = infer({ sessions: sessions(okafor1) })
    expect(out.preference).not.toMatch(/literature review|soil|expects/)
  })

  it("does not depend on the order the sessions are passed in", () => {
    const ordered = sessions(okafor1, sourdough, okafor2, zotero, okaforChanged)
    expect(infer({ sessions: [...ordered].reverse() })).toEqual(infer({ sessions: ordered }))
  })

  it("keeps to the word budget and the clause limit", () => {
    expect(infer({ sessions: sessions(okafor1, okafor2) }, { maxWords: 18, maxClauses: 3 }).preference).toBe(
      "Every section needs at least two peer-reviewed sources, she checks that."
    )
    expect(infer({ sessions: sessions(lindqvist) }, { maxWords: 30, maxClauses: 2 }).preference).toBe(
      "Dr. Lindqvist likes to be eased in; keep citations out of the main text, put them in a short list at the end."
    )
  })
})

describe("extractive inferrer: another persona", () => {
  const dana1 = [
    u(
      "I need to write a weekly project update for Dana, my manager. Can you draft one from these notes: migration 70% done, vendor delay on licenses, QA starts Monday?"
    ),
    a(
      "Here's a draft update covering the migration progress, the vendor delay and the QA start, with background on each item."
    ),
    u("This is way too long for Dana. She reads these on her phone between meetings."),
    a("Here's a shorter version."),
    u("Better. Put a one-line status at the very top so she sees it first."),
    a("Updated with a status line."),
    u("Also list the risks as bullets instead of burying them in a paragraph."),
    a("Done, risks are now bullets."),
    u("Perfect, thanks!")
  ]
  const pandas = [
    u("I'm cleaning up a pandas script that merges our sales CSVs. Can you help refactor it?"),
    a("Sure, here is a refactor."),
    u("Please add type hints to every function."),
    a("Added."),
    u("Don't use lambda functions, they are hard to read for the rest of the team."),
    a("Replaced them with named functions."),
    u("Great, this works.")
  ]
  const dana2 = [
    u(
      "Can you help me summarize the sprint review for Dana? Here are the notes: velocity up, two stories slipped, demo went well."
    ),
    a("Here's a summary with context on the sprint goals."),
    u("Dana only needs the headline. Start with a one-line status, not background."),
    a("Revised."),
    u("Keep it under 150 words, she won't read more than that."),
    a("Trimmed."),
    u("Great, that's exactly what she needs.")
  ]
  const danaRequest =
    "I have to send Dana an update on the data migration. Can you write it from these notes: cutover moved to Friday, two tables failed validation?"

  it("full history: the session whose opening matches the request best", () => {
    expect(infer({ sessions: sessions(dana1, pandas, dana2) }, defaults, danaRequest).preference).toBe(
      "List the risks as bullets instead of burying them in a paragraph; this is way too long for Dana."
    )
  })

  it("a selected session whose opening matches the request much less than the best is set aside", () => {
    // Request words in the openings, idf-weighted over the two sessions (names double): s1 has
    // Dana 1.386 + update 1.099 + migration 1.099 + notes 0.693 = 4.277; s2 has Dana + notes =
    // 2.079, 0.49 of s1, under the 0.6 needed. From s1: "list the risks ... instead" 4, "too long" 2 + 0.5
    // (shares "Dana" with the request); "put a one-line status ..." (2) would pass 30 words.
    expect(infer({ sessions: sessions(dana1, dana2) }, defaults, danaRequest).preference).toBe(
      "List the risks as bullets instead of burying them in a paragraph; this is way too long for Dana."
    )
  })

  it("the unrelated session alone: polite framing removed from the clauses", () => {
    expect(infer({ sessions: sessions(pandas) }, defaults, danaRequest).preference).toBe(
      "Add type hints to every function; don't use lambda functions, they are hard to read for the rest of the team."
    )
  })

  it("a sentence longer than the budget is split and its requirement part kept", () => {
    const rambling = [
      u("Draft the weekly update for Dana."),
      a("Here it is."),
      u(
        "She reads these on her phone between meetings, so honestly the whole update has to fit on one screen, and she tends to skip anything that starts with background about the project history."
      )
    ]
    expect(infer({ sessions: sessions(rambling) }, defaults, danaRequest).preference).toBe(
      "The whole update has to fit on one screen."
    )
  })
})

describe("extractive inferrer with summaries as evidence", () => {
  it("composes from the preference bullets of the sessions about the request", () => {
    // s2 (sourdough) shares no request word and is set aside. s3's bullets: cue 3 + agreement 1
    // (s1 restates each) + recency 1.5 = 5.5; s1's restatements are duplicates of them.
    const evidence: Evidence = {
      sessions: sessions(okafor1, sourdough, okafor2),
      summaries: [
        {
          sessionId: "s1",
          context: ["Literature review chapter for Professor Okafor"],
          preferences: ["Main claim first, in one sentence", "At least two peer-reviewed sources per section"]
        },
        { sessionId: "s2", context: ["Reviving a sourdough starter"], preferences: ["One change per day"] },
        {
          sessionId: "s3",
          context: ["Methods rationale for Professor Okafor"],
          preferences: ["Claim up front in one sentence", "Two peer-reviewed papers, not blog posts"]
        }
      ]
    }
    expect(infer(evidence)).toEqual({
      preference: "Claim up front in one sentence; two peer-reviewed papers, not blog posts.",
      analysis:
        "Extractive heuristic (no model): 5 summary preference bullet(s) from 3 of 3 session(s); composed from s3 (5.50), s3 (5.50)."
    })
  })
})

describe("extractive inferrer fallback", () => {
  it("no evidence: a statement derived from the request, said so in the analysis", () => {
    expect(infer({ sessions: [] })).toEqual({
      preference:
        'Respond to the request as stated ("Can you help me prepare the draft of my discussion chapter for Professor Okafor"), with no earlier requirement to apply.',
      analysis: "Extractive heuristic (no model): no evidence sessions; fallback statement derived from the request."
    })
  })

  it("sessions without feedback cues", () => {
    const quiet = [
      u("Tell me about the Okavango delta."),
      a("It is an inland delta in Botswana."),
      u("Interesting. And the wildlife?"),
      a("Elephants, mostly."),
      u("Thanks!")
    ]
    expect(infer({ sessions: sessions(quiet) }).analysis).toBe(
      "Extractive heuristic (no model): no feedback sentence with a requirement cue in 1 evidence session(s); fallback statement derived from the request."
    )
  })
})

describe("extractive cues", () => {
  const scores: ReadonlyArray<readonly [string, number]> = [
    ["Keep it under 150 words, she won't read more than that.", 5], // comparative 2 + complaint 1 + instruction 2
    ["Dana only needs the headline.", 4], // expects 3 + only 1
    ["This is way too long for Dana.", 2], // too 2
    ["Next time, please don't add emojis.", 6], // next time 3 + please 2 + negation 3, capped at 6
    ["She reads these on her phone between meetings.", 0],
    ["Great, that's exactly what she needs.", 0], // expects 3, approval -3
    ["Thanks, that looks nice.", -2] // praise
  ]
  for (const [sentence, score] of scores) {
    it(`cue strength of "${sentence}"`, () => {
      expect(cueScore(sentence).score).toBe(score)
    })
  }

  it("clauses lose fillers and polite framing, keep the requirement", () => {
    expect(toClause("Okay, but next time, could you please use bullet points?")).toBe("use bullet points")
    expect(toClause("I'd like you to add a summary at the end.")).toBe("add a summary at the end")
    expect(toClause("Also, make sure each step has a check, please!")).toBe("make sure each step has a check")
    expect(toClause("Dr. Lee prefers tables.")).toBe("Dr. Lee prefers tables")
  })

  it("recognizes the closing turn", () => {
    expect(isPositiveClose("Perfect, thanks!")).toBe(true)
    expect(isPositiveClose("Great, but next time keep it shorter.")).toBe(false)
    expect(isPositiveClose("Can you also translate it into French?")).toBe(false)
  })

  it("splits sentences without breaking abbreviations", () => {
    expect(sentences("Dr. Lee wants e.g. two items. Fine!\n- Use 3.5 pt lines")).toEqual([
      "Dr. Lee wants e.g. two items.",
      "Fine!",
      "- Use 3.5 pt lines"
    ])
  })
})

describe("extractive plugin", () => {
  it("is marked heuristic and has schema defaults", () => {
    expect(ExtractiveInferrer.plugin.heuristic).toBe(true)
    expect(Effect.runSync(Plugin.decodeOptions(ExtractiveInferrer.plugin, {}))).toEqual({ maxWords: 30, maxClauses: 3 })
  })

  it.effect("runs through the pipeline with a trivial retriever and no model", () =>
    Effect.gen(function* () {
      const row: Domain.CupidRow = {
        persona_id: "p3",
        instance_type: "changing",
        current_request: request,
        current_context_factor: "Professor Okafor",
        current_contextual_preference: "numbered outline with a question per section",
        current_checklist: ["numbered outline", "question per section"],
        prior_interactions: [okafor1, sourdough, okafor2, zotero, okaforChanged].map((dialogue) => ({
          context_factor: "f",
          contextual_preference: "p",
          dialogue
        }))
      }
      const everything: Retriever.Service = {
        needsSummaries: false,
        retrieve: ({ query }) => Effect.succeed(Retriever.fromScores(query.sessions.map((s) => [s.id, s.index])))
      }
      const pipeline: Pipeline.CellPipeline = {
        retriever: { plugin: "all", needsGold: false, service: everything },
        inferrer: { plugin: "extractive", service: yield* ExtractiveInferrer.make(defaults) },
        scorers: []
      }
      const trace = yield* Pipeline.run(pipeline, Domain.fromRow(row))
      expect(trace.error).toBeUndefined()
      expect(trace.inference?.preference).toBe(changed)
      expect(trace.usage).toEqual([])
    }).pipe(Effect.provide(Models.layerEmpty), Effect.provide(ModelCache.layerMemory))
  )
})
