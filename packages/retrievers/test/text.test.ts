import { describe, expect, it } from "@effect/vitest"
import * as Text from "../src/Text.js"

describe("Text.terms", () => {
  it("keeps stemmed content words, drops stopwords and punctuation", () => {
    expect(Text.terms("The players were running drills!")).toEqual(["player", "run", "drill"])
    expect(Text.terms("")).toEqual([])
  })

  it("keeps repeats (term frequency matters) and numbers", () => {
    expect(Text.terms("Budget, budget: 350 words")).toEqual(["budget", "budget", "350", "word"])
  })
})

describe("Text.analyze", () => {
  const show = (text: string) =>
    Text.analyze(text)
      .words.map((w) => (w === undefined ? "|" : `${w.lemma}${w.name ? "*" : ""}`))
      .join(" ")

  it("gives content lemmas in order, marks names, and breaks phrases at punctuation", () => {
    expect(show("Please send my colleague Dr. Sarah Chen the resistance bands, today.")).toBe(
      "send colleague dr.* sarah* chen* resistance band | today |"
    )
    expect(Text.lemmas("The players were running drills")).toEqual(["player", "run", "drill"])
  })

  it("does not take a capitalized first word of a sentence for a name, but does take words with digits", () => {
    expect(show("Tomatoes need water. Print it on my MK4 printer for Maria.")).toBe(
      "tomatoes need water | print mk4* printer maria* |"
    )
  })

  it('marks where a noun chunk starts: after a preposition, conjunction or "to", and around verbs', () => {
    const chunks = (text: string) =>
      Text.analyze(text)
        .words.map((w) => (w === undefined ? "|" : `${w.chunkStart ? "/ " : ""}${w.lemma}`))
        .join(" ")
    expect(chunks("I need to choose the right settings on my mom's gravel bike.")).toBe(
      "/ need / choose / right setting / mom gravel bike |"
    )
  })
})
