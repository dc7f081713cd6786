// accounting: reference, by hand: what the authors' evaluation code counts for each kind of answer
// (the same rules are checked against their own code in experiments' reference-fidelity test).
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as PreferenceMatch from "../src/PreferenceMatch.js"
import * as ReferenceAccounting from "../src/ReferenceAccounting.js"

describe("ReferenceAccounting", () => {
  it("truncates judge scores, cuts at '/' and blank lines, removes bold, and counts anything else 0", () => {
    const scores = [
      "### Evaluation Score\n\n7.5",
      "### Evaluation Score\n\n8/10",
      "### **Evaluation Score**\n\n**9**",
      "### Evaluation Score\n\n6\n\nThe reply was good.",
      "### Evaluation Score\n\n8 - Very Good",
      "Score: 9",
      "### Evaluation Score\n\n15"
    ].map(ReferenceAccounting.judgeScore)
    expect(scores).toEqual([7, 8, 9, 6, 0, 0, 15])
  })

  it("counts exact labels only and sums every entry, whatever their number", () => {
    const fenced = (o: unknown) => `Reasoning first.\n\`\`\`json\n${JSON.stringify(o)}\n\`\`\``
    expect(
      ReferenceAccounting.matcherSum(
        fenced({ results: [{ label: "Fully Covered" }, { label: "Partially Covered" }, { label: "Not Covered" }] }),
        false
      )
    ).toBe(1.5)
    expect(
      ReferenceAccounting.matcherSum(
        fenced({
          results: [{ label: "fully covered" }, { label: "Partially Covered" }, { label: "Partially Covered" }]
        }),
        false
      )
    ).toBe(1)
    expect(ReferenceAccounting.matcherSum(fenced({ ratings: [] }), false)).toBeUndefined()
    expect(ReferenceAccounting.matcherSum("no JSON here", false)).toBeUndefined()
    expect(ReferenceAccounting.matcherSum(JSON.stringify([{ label: "Fully Covered" }]), true)).toBe(1)
    expect(
      ReferenceAccounting.matcherSum(JSON.stringify({ results: [{ label: "Fully Covered" }] }), true)
    ).toBeUndefined()
  })

  it("reads a decomposer's fenced checklist after its analysis", () => {
    expect(
      ReferenceAccounting.checklist(
        '**Analysis**\n\nTwo.\n\n**Checklist**\n\n```json\n{"checklist": ["A?", "B?"]}\n```'
      )
    ).toEqual(["A?", "B?"])
    expect(ReferenceAccounting.checklist("Checklist: A?, B?")).toBeUndefined()
  })

  it("counts both sides 0 over their full item counts when either matcher answer is unreadable, and skips the second call", () => {
    const gold = { preference: "G", checklist: ["g1", "g2", "g3"] }
    const asked: Array<string> = []
    const rate = (answers: ReadonlyArray<number | undefined>) => (_items: ReadonlyArray<string>, preference: string) =>
      Effect.sync(() => answers[asked.push(preference) - 1])
    const counts = (answers: ReadonlyArray<number | undefined>, items = ["i1", "i2"]) => {
      asked.length = 0
      return Effect.runSync(PreferenceMatch.referenceCounts(items, gold, "I", rate(answers)))
    }
    expect(counts([1.5, 2])).toEqual({ pNum: 1.5, pDen: 2, rNum: 2, rDen: 3 })
    expect(counts([undefined, 2])).toEqual({ pNum: 0, pDen: 2, rNum: 0, rDen: 3 })
    expect(asked).toEqual(["G"])
    expect(counts([1, undefined])).toEqual({ pNum: 0, pDen: 2, rNum: 0, rDen: 3 })
    expect(counts([1, 1], [])).toEqual({ pNum: 0, pDen: 0, rNum: 0, rDen: 3 })
    // Precision 1.5/2, recall 2/3: F1 = 2 * 0.75 * (2/3) / (0.75 + 2/3) = 12/17.
    expect(PreferenceMatch.fromCounts({ pNum: 1.5, pDen: 2, rNum: 2, rDen: 3 })["inference.f1"]).toBeCloseTo(
      12 / 17,
      15
    )
  })
})
