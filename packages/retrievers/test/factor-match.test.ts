import { describe, expect, it } from "@effect/vitest"
import * as FactorMatch from "../src/internal/FactorMatch.js"

describe("FactorMatch.scores", () => {
  it("scores the share of the anchor phrase each text contains", () => {
    // Request content words: draft (verb, 0.5), note (noun, 1), hartwell family foundation (names, 2 each).
    // The anchor is the run shared with two texts: "hartwell family foundation", value (2+2+2) x 3 = 18.
    // "the Hartwell trust" shares "hartwell" only: 2 x 1 = 2, so 2/18; "a note for the board" shares
    // "note", which is not part of the anchor.
    const scores = FactorMatch.scores("Draft a note for the Hartwell Family Foundation.", [
      "Letter for the Hartwell Family Foundation.",
      "Report to the Hartwell Family Foundation.",
      "A note for the board.",
      "Soup recipe.",
      "Tax forms.",
      "Garden plan.",
      "Thank the Hartwell trust."
    ])
    expect(scores.slice(0, 6)).toEqual([1, 1, 0, 0, 0, 0])
    expect(scores[6]).toBeCloseTo(2 / 18, 12)
  })

  it("prefers a phrase shared with two texts over a longer task phrase shared with one", () => {
    const scores = FactorMatch.scores(
      "Plan a meeting with the Lakeside Rowing Club about the spring fundraiser budget.",
      [
        "Plan a meeting with the Cedar Hills Chess Club about the spring fundraiser budget.",
        "Draft the Lakeside Rowing Club newsletter.",
        "Reply to the Lakeside Rowing Club treasurer.",
        "Soup recipe.",
        "Tax forms.",
        "Garden plan."
      ]
    )
    expect(scores[1]).toBe(1)
    expect(scores[2]).toBe(1)
    expect(scores[0]).toBeLessThan(0.3)
    expect(scores.slice(3)).toEqual([0, 0, 0])
  })

  it("values task wording joined to the factor name per chunk, so the name shared more often anchors", () => {
    // Request chunks: choose (verb, 0.5) | right setting (0.75 + 1) | trek domane bike (names 2 + 2, noun 1).
    // The whole request, shared with two texts, is worth 0.5 x 1 + 1.75 x 2 + 5 x 3 = 19, merit
    // 19 x sqrt(2) = 26.9; "trek domane bike", shared with four, is worth 15, merit 15 x sqrt(4) = 30,
    // and anchors. (Valued as one run, 7.25 x 6 = 43.5, the whole request would anchor and the
    // sessions worded differently would score 15 / 43.5.)
    const scores = FactorMatch.scores("Choose the right settings on my Trek Domane bike.", [
      "Choose the right settings on my Trek Domane bike for a trip.",
      "Troubleshoot my Trek Domane bike.",
      "Soup recipe.",
      "Choose the right settings on my Trek Domane bike for long rides.",
      "Tax forms.",
      "Clean my Trek Domane bike.",
      "Garden plan.",
      "Paint the fence."
    ])
    expect(scores).toEqual([1, 1, 0, 1, 0, 1, 0, 0])
  })

  it("scores nothing when nothing is shared, and handles no texts", () => {
    expect(FactorMatch.scores("Fix my bike.", ["Soup recipe.", "Tax forms."])).toEqual([0, 0])
    expect(FactorMatch.scores("Fix my bike.", [])).toEqual([])
  })
})
