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
  it("finds lemmas, name-like words and mentions (noun chunks, proper nouns) even after plain tokenizing", () => {
    // Tokenizing first builds the plain pipeline; noun chunks must still be found afterwards.
    Text.terms("warm up the plain pipeline")
    const a = Text.analyze("Please send my colleague Dr. Sarah Chen the resistance bands checklist on Monday.")
    expect(a.lemmas).toContain("sarah")
    expect(a.lemmas).toContain("band")
    expect([...a.names]).toEqual(expect.arrayContaining(["sarah", "chen", "monday"]))
    expect(a.names.has("resistance")).toBe(false)
    const chunks = a.mentions.filter((m) => m.kind === "chunk").map((m) => m.lemmas.join(" "))
    expect(chunks).toContain("colleague dr. sarah chen")
    expect(chunks.some((c) => c.startsWith("resistance band"))).toBe(true)
    expect(a.mentions.some((m) => m.kind === "proper-noun" && m.lemmas[0] === "sarah")).toBe(true)
  })

  it("does not treat a capitalized first word of a sentence as a name", () => {
    const a = Text.analyze("Gardens need water. Plan it for me.")
    expect(a.names.has("garden")).toBe(false)
  })
})
