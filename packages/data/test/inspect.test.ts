import { describe, expect, it } from "@effect/vitest"
import { Domain } from "@cupid-lab/core"
import { accumulator, format } from "../src/internal/inspect.js"

const row = (persona: string, sessionPreference: string): Domain.CupidRow => ({
  persona_id: persona,
  instance_type: "consistent",
  current_request: "Plan it.",
  current_context_factor: "the offsite",
  current_contextual_preference: "Numbered steps.",
  current_checklist: ["Numbered?"],
  prior_interactions: [
    {
      context_factor: "the offsite",
      contextual_preference: sessionPreference,
      dialogue: [{ role: "user", content: "Plan it." }]
    },
    {
      context_factor: "my manager",
      contextual_preference: "Numbered steps.",
      dialogue: [{ role: "user", content: "Hi." }]
    }
  ]
})

describe("data inspect statistics", () => {
  it("instances without a relevant session: the count, the first five ids, how many more", () => {
    const acc = accumulator()
    acc.add(Domain.fromRow(row("ok", "Numbered steps.")))
    for (const p of ["a", "b", "c", "d", "e", "f", "g"]) acc.add(Domain.fromRow(row(p, "numbered steps.")))
    const stats = acc.result()
    expect(stats.withoutRelevant).toEqual({
      count: 7,
      firstIds: ["a", "b", "c", "d", "e"].map((p) => `${p}:consistent`)
    })
    expect(format(stats).split("\n")).toContain(
      "instances without a relevant session: 7 (a:consistent, b:consistent, c:consistent, d:consistent, e:consistent, and 2 more)"
    )
  })
})
