import { describe, expect, it } from "@effect/vitest"
import { Either, Schema } from "effect"
import * as Domain from "../src/Domain.js"

const say = (user: string, assistant: string): ReadonlyArray<Domain.Message> => [
  { role: "user", content: user },
  { role: "assistant", content: assistant }
]

/** A changing instance: s1, s3 hold the old preference of factor A, s4 the new one, s2 another factor. */
const row: Domain.CupidRow = {
  persona_id: "p7",
  instance_type: "changing",
  current_request: "Draft the newsletter intro for the Cedar Club.",
  current_context_factor: "the Cedar Club",
  current_contextual_preference: "Keep it under 100 words.",
  current_checklist: ["Is it under 100 words?"],
  prior_interactions: [
    {
      context_factor: "the Cedar Club",
      contextual_preference: "Use numbered steps.",
      dialogue: say("Cedar Club agenda?", "Here.")
    },
    {
      context_factor: "my manager",
      contextual_preference: "Keep it under 100 words.",
      dialogue: say("Email my manager.", "Done.")
    },
    {
      context_factor: "the Cedar Club",
      contextual_preference: "Use numbered steps.",
      dialogue: say("Cedar Club minutes?", "Sure.")
    },
    {
      context_factor: "the Cedar Club",
      contextual_preference: "Keep it under 100 words.",
      dialogue: say("Cedar Club flyer?", "Ok.")
    }
  ]
}

describe("Domain", () => {
  it("relevanceLabel: same factor and preference is relevant, same factor other preference stale, else other", () => {
    const current = { factor: "A", preference: "p" }
    expect(Domain.relevanceLabel({ factor: "A", preference: "p" }, current)).toBe("relevant")
    expect(Domain.relevanceLabel({ factor: "A", preference: "q" }, current)).toBe("stale")
    expect(Domain.relevanceLabel({ factor: "B", preference: "p" }, current)).toBe("other")
    expect(Domain.relevanceLabel({ factor: "B", preference: "q" }, current)).toBe("other")
    // Labels compare exact strings: a differently cased factor is another factor.
    expect(Domain.relevanceLabel({ factor: "a", preference: "p" }, current)).toBe("other")
  })

  it("fromRow: instance id is persona_id:instance_type, session ids are 1-based positions", () => {
    const instance = Domain.fromRow(row)
    expect(instance.id).toBe("p7:changing")
    expect(instance.personaId).toBe("p7")
    expect(instance.type).toBe("changing")
    expect(instance.query.key).toBe(Domain.queryKey("p7"))
    expect(instance.query.key).toMatch(/^q[0-9a-f]{16}$/)
    expect(instance.query.request).toBe(row.current_request)
    expect(instance.query.sessions.map((s) => [s.id, s.index])).toEqual([
      ["s1", 0],
      ["s2", 1],
      ["s3", 2],
      ["s4", 3]
    ])
    expect(instance.gold.sessions.map((s) => s.id)).toEqual(["s1", "s2", "s3", "s4"])
  })

  it("fromRow: per-session labels against the current factor and preference", () => {
    const instance = Domain.fromRow(row)
    expect(instance.gold.sessions.map((s) => s.label)).toEqual(["stale", "other", "stale", "relevant"])
    expect(instance.gold.factor).toBe("the Cedar Club")
    expect(instance.gold.preference).toBe("Keep it under 100 words.")
    expect(instance.gold.checklist).toEqual(["Is it under 100 words?"])
  })

  it("fromRow: the visible query carries no labels", () => {
    const instance = Domain.fromRow(row)
    for (const session of instance.query.sessions) {
      expect(Object.keys(session).sort()).toEqual(["dialogue", "hash", "id", "index"])
    }
    expect(JSON.stringify(instance.query)).not.toContain("Use numbered steps.")
  })

  it("fromRow: session hash depends on the dialogue only, so a session shared by instances hashes alike", () => {
    const a = Domain.fromRow(row)
    const b = Domain.fromRow({ ...row, instance_type: "consistent", persona_id: "other" })
    expect(a.query.sessions[0]!.hash).toBe(b.query.sessions[0]!.hash)
    expect(a.query.sessions[0]!.hash).toMatch(/^[0-9a-f]{16}$/)
    expect(a.query.sessions[0]!.hash).not.toBe(a.query.sessions[2]!.hash)
  })

  it("three instance types of one persona get three distinct ids", () => {
    const ids = Domain.cupidTypes.map((t) => Domain.fromRow({ ...row, instance_type: t }).id)
    expect(ids).toEqual(["p7:consistent", "p7:contrastive", "p7:changing"])
  })

  it("toRow inverts fromRow", () => {
    expect(Domain.toRow(Domain.fromRow(row))).toEqual(row)
    const empty: Domain.CupidRow = { ...row, prior_interactions: [], current_checklist: [] }
    expect(Domain.toRow(Domain.fromRow(empty))).toEqual(empty)
  })

  it("CupidRow decodes released rows, ignores extra columns and rejects an unknown instance type", () => {
    const decode = Schema.decodeUnknownEither(Domain.CupidRow)
    const decoded = decode({ ...row, extra_column: 1 })
    expect(Either.isRight(decoded) && decoded.right).toEqual(row)
    expect(Either.isLeft(decode({ ...row, instance_type: "contrastve" }))).toBe(true)
    expect(
      Either.isLeft(
        decode({
          ...row,
          prior_interactions: [{ ...row.prior_interactions[0], dialogue: [{ role: "system", content: "x" }] }]
        })
      )
    ).toBe(true)
  })
})
