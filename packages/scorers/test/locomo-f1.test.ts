import { Domain, Plugin } from "@cupid-lab/core"
import { it } from "@effect/vitest"
import { Effect, Either } from "effect"
import { describe, expect } from "vitest"
import * as LocomoF1 from "../src/LocomoF1.js"
import { stem } from "../src/internal/porter.js"
import * as ScorerConformance from "../src/testing/ScorerConformance.js"
import { buildScorer, makeTrace, pluginEnv } from "./fixtures.js"

/** A LoCoMo-shaped question: its category's type name, a gold answer, one session. */
const question = (type: string, answer?: string): Domain.Instance => ({
  id: `conv-1:q-${type}`,
  personaId: "conv-1",
  type,
  query: { key: Domain.queryKey("conv-1"), request: "What does Mira paint?", sessions: [] },
  gold: { factor: "", preference: "", checklist: [], sessions: [], ...(answer === undefined ? {} : { answer }) }
})

describe("LoCoMo answer normalization", () => {
  it("drops commas, case, punctuation, articles and 'and', and extra whitespace", () => {
    expect(LocomoF1.normalize("The cat, and a Dog's toy!")).toBe("cat dogs toy")
    expect(LocomoF1.normalize("  An apple\u00a0\tthe  end ")).toBe("apple end")
    // Only whole words: "andes", "theater", "a1" keep their letters.
    expect(LocomoF1.normalize("Andes theater a1 band")).toBe("andes theater a1 band")
    // Word boundaries are Unicode ones: "é" is a letter, so the "a" of "éa" is not a word.
    expect(LocomoF1.normalize("café a éa")).toBe("café éa")
    // Curly quotes are not in Python's string.punctuation and stay.
    expect(LocomoF1.normalize("\u201cYes\u201d")).toBe("\u201cyes\u201d")
  })

  it("stems as NLTK's Porter stemmer does in its default mode", () => {
    expect(
      ["running", "skies", "dying", "ties", "agreed", "hopping", "was", "is", "sky", "happy", "enjoy"].map(stem)
    ).toEqual(["run", "sky", "die", "tie", "agre", "hop", "wa", "is", "sky", "happi", "enjoy"])
    // Where NLTK's mode differs from Porter's original: a 2-letter vc stem keeps its e; y after a vowel stays.
    expect(["age", "abbey", "additionally", "generously"].map(stem)).toEqual(["age", "abbey", "addit", "gener"])
    expect(LocomoF1.tokens("She was painting sunsets")).toEqual(["she", "wa", "paint", "sunset"])
  })
})

describe("LoCoMo answer F1 by category", () => {
  it("single-hop and temporal: token F1 of the stemmed tokens", () => {
    // [she, paint, sunset] against [paint, sunset]: 2 shared, P 2/3, R 1, F1 0.8
    expect(LocomoF1.score("She paints sunsets", "painting sunsets", 4)).toBeCloseTo(0.8, 15)
    // [on, 7, may, 2023] against [7, may, 2023]: P 3/4, R 1, F1 6/7
    expect(LocomoF1.score("On 7 May 2023", "7 May 2023", 2)).toBeCloseTo(6 / 7, 15)
    expect(LocomoF1.score("a lake", "mountains", 4)).toBe(0)
    expect(LocomoF1.score("", "mountains", 4)).toBe(0)
    expect(LocomoF1.score("The", "the", 4)).toBe(0)
    // Repeated tokens count as often as both sides have them: [paint, paint] against [paint]: P 1/2, R 1
    expect(LocomoF1.score("paint paint", "paint", 4)).toBeCloseTo(2 / 3, 15)
  })

  it("open-domain: against the answer's part before the first ';'", () => {
    // [ye] against [like, ye] ("Likely yes"): P 1, R 1/2, F1 2/3; the whole answer would give 2/7
    expect(LocomoF1.score("yes", "Likely yes; she mentions loving the beach", 3)).toBeCloseTo(2 / 3, 15)
    expect(LocomoF1.score("yes", "Likely yes; she mentions loving the beach", 4)).toBeCloseTo(2 / 7, 15)
  })

  it("multi-hop: the answer's comma-separated parts, each at its best prediction part, averaged", () => {
    // painting: best 2/3 ("camping and painting": [camp, paint]); pottery: 1; swimming: 0
    expect(LocomoF1.score("pottery, camping and painting", "painting, pottery, swimming", 1)).toBeCloseTo(5 / 9, 15)
    // As one answer (commas dropped) it would be 2/3: [potteri, camp, paint] against [paint, potteri, swim]
    expect(LocomoF1.score("pottery, camping and painting", "painting, pottery, swimming", 4)).toBeCloseTo(2 / 3, 15)
    // An empty part of the answer scores 0 and counts
    expect(LocomoF1.score("Oslo", "Oslo,", 1)).toBe(0.5)
  })

  it("adversarial: 1 when the answer says the information is not available, else 0", () => {
    expect(LocomoF1.score("Not mentioned in the conversation", "", 5)).toBe(1)
    expect(LocomoF1.score("NO INFORMATION AVAILABLE.", "", 5)).toBe(1)
    expect(LocomoF1.score("That is not  mentioned", "", 5)).toBe(0)
    expect(LocomoF1.score("She never said", "She never said", 5)).toBe(0)
  })
})

describe("locomo-f1 scorer", () => {
  it.scoped("scores the generated answer by the instance's category, and keeps the contract", () =>
    Effect.gen(function* () {
      const scorer = yield* buildScorer("locomo-f1")
      const multi = question("multi-hop", "painting, pottery, swimming")
      const adversarial = question("adversarial")
      const inputs = [
        { instance: multi, trace: makeTrace(multi, { generation: { text: "pottery, camping and painting" } }) },
        { instance: adversarial, trace: makeTrace(adversarial, { generation: { text: "Not mentioned." } }) }
      ]
      expect((yield* scorer.score(inputs[0]!))["generation.locomo_f1"]).toBeCloseTo(5 / 9, 15)
      expect(yield* scorer.score(inputs[1]!)).toEqual({ "generation.locomo_f1": 1 })
      expect(yield* ScorerConformance.check(scorer, inputs)).toEqual([])
    }).pipe(Effect.provide(pluginEnv()))
  )

  it.scoped("fails, saying why, without a generated answer or outside LoCoMo's categories", () =>
    Effect.gen(function* () {
      const scorer = yield* buildScorer("locomo-f1")
      const q = question("single-hop", "Oslo")
      const noAnswer = yield* Effect.either(scorer.score({ instance: q, trace: makeTrace(q) }))
      expect(Either.isLeft(noAnswer) && noAnswer.left.message).toContain("configure a generator")
      const cupid = question("changing", "Oslo")
      const other = yield* Effect.either(
        scorer.score({ instance: cupid, trace: makeTrace(cupid, { generation: { text: "Oslo" } }) })
      )
      expect(Either.isLeft(other) && other.left.message).toContain('"changing" is not a LoCoMo category')
    }).pipe(Effect.provide(pluginEnv()))
  )

  it("is registered under its name", () => {
    expect(Plugin.makeRegistry([LocomoF1.plugin]).names("scorer")).toEqual(["locomo-f1"])
  })
})
