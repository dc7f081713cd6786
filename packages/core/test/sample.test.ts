import { FileSystem, Path } from "@effect/platform"
import { NodeContext } from "@effect/platform-node"
import { describe, expect, it, layer } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import { fileURLToPath } from "node:url"
import * as Domain from "../src/Domain.js"
import { buildRows, keptSessionIndices, toJsonl } from "../src/internal/sample/Build.js"
import * as Source from "../src/internal/sample/Source.js"

const dataDirectory = fileURLToPath(new URL("../data/", import.meta.url))

const loadSample = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const loaded = yield* Source.loadDirectory(path.join(dataDirectory, "sample-src"))
  const text = yield* fs.readFileString(path.join(dataDirectory, "sample.jsonl"))
  const decodeRow = Schema.decodeUnknownSync(Domain.CupidRow)
  const rows = text.split("\n").filter((line) => line !== "").map((line) => decodeRow(JSON.parse(line)))
  const sources = new Map(loaded.map(({ source }) => [source.persona_id, source]))
  return { loaded, text, rows, instances: rows.map(Domain.fromRow), sources }
})

/** Lowercased, whitespace collapsed: "names the factor" and "verbatim" checks ignore case and line breaks. */
const normalize = (text: string): string => text.toLowerCase().replace(/\s+/g, " ").trim()
/** "the Hartwell Family Foundation" may be written "Hartwell Family Foundation" in a sentence. */
const factorName = (factor: string): string => normalize(factor).replace(/^(the|my|our|a|an) /, "")

const labelsOf = (instance: Domain.Instance) => instance.gold.sessions.map((s) => s.label)
const positionsOf = (instance: Domain.Instance, label: Domain.RelevanceLabel) =>
  instance.gold.sessions.flatMap((s, i) => s.label === label ? [i] : [])

layer(NodeContext.layer)("bundled sample dataset", (it) => {
  it.effect("sample.jsonl is exactly what the build produces from the sources", () =>
    Effect.gen(function*() {
      const { loaded, text } = yield* loadSample
      expect(text).toBe(toJsonl(buildRows(loaded.map((l) => l.source))))
    }))

  it.effect("has at least 4 personas, each with the three instance types in order", () =>
    Effect.gen(function*() {
      const { rows, instances, sources } = yield* loadSample
      expect(sources.size).toBeGreaterThanOrEqual(4)
      expect(rows.length).toBe(sources.size * 3)
      expect(new Set(instances.map((i) => i.id)).size).toBe(rows.length)
      const byPersona = [...sources.keys()].map((id) => rows.filter((r) => r.persona_id === id).map((r) => r.instance_type))
      for (const types of byPersona) expect(types).toEqual(["consistent", "contrastive", "changing"])
    }))

  it.effect("every instance has 8 prior sessions and a checklist matching its target", () =>
    Effect.gen(function*() {
      const { rows, sources } = yield* loadSample
      for (const row of rows) {
        const source = sources.get(row.persona_id)!
        expect(row.prior_interactions.length, `${row.persona_id}:${row.instance_type}`).toBe(8)
        const changed = row.instance_type === "changing"
        expect(row.current_context_factor).toBe(source.factor_a)
        expect(row.current_contextual_preference).toBe(changed ? source.preference_a_changed : source.preference_a)
        expect(row.current_checklist).toEqual(changed ? source.checklist_a_changed : source.checklist_a)
      }
    }))

  it.effect("relevance labels follow the CUPID instance types", () =>
    Effect.gen(function*() {
      const { instances, sources } = yield* loadSample
      for (const instance of instances) {
        const source = sources.get(instance.personaId)!
        const labels = labelsOf(instance)
        const count = (label: Domain.RelevanceLabel) => labels.filter((l) => l === label).length
        const withB = instance.gold.sessions.filter((s) => s.factor === source.factor_b).length
        const expected = { consistent: [2, 0, 0], contrastive: [2, 0, 2], changing: [2, 2, 0] }[instance.type]
        expect([count("relevant"), count("stale"), withB], instance.id).toEqual(expected)
        if (instance.type === "changing") {
          // The relevant sessions are the later, changed ones: every stale session comes first.
          expect(Math.max(...positionsOf(instance, "stale")), instance.id)
            .toBeLessThan(Math.min(...positionsOf(instance, "relevant")))
        }
      }
    }))

  it.effect("every session's first user message names its factor, and no dialogue recites its preference", () =>
    Effect.gen(function*() {
      const { rows } = yield* loadSample
      for (const row of rows) {
        row.prior_interactions.forEach((session, i) => {
          const where = `${row.persona_id}:${row.instance_type} session ${i + 1}`
          expect(session.dialogue[0]?.role, where).toBe("user")
          expect(normalize(session.dialogue[0]!.content), where).toContain(factorName(session.context_factor))
          for (const message of session.dialogue) {
            expect(normalize(message.content), where).not.toContain(normalize(session.contextual_preference))
          }
        })
        expect(normalize(row.current_request), row.persona_id).toContain(factorName(row.current_context_factor))
        expect(normalize(row.current_request), row.persona_id).not.toContain(normalize(row.current_contextual_preference))
      }
    }))

  it.effect("relevant sessions sit at different positions across personas", () =>
    Effect.gen(function*() {
      const { instances } = yield* loadSample
      for (const type of Domain.instanceTypes) {
        const positions = instances.filter((i) => i.type === type).map((i) => positionsOf(i, "relevant").join(","))
        expect(new Set(positions).size, type).toBeGreaterThan(1)
      }
      // Some instances have their relevant sessions early in the history, some late.
      const means = instances.map((i) => positionsOf(i, "relevant").reduce((a, b) => a + b, 0) / 2)
      expect(Math.min(...means)).toBeLessThan(3.5)
      expect(Math.max(...means)).toBeGreaterThan(3.5)
    }))
})

/** A well-formed source whose session i says `session i` in every message, so kept indices are visible. */
const syntheticSource = (): Source.SampleSource => {
  const slots: ReadonlyArray<Source.Slot> = ["other", "A", "B", "other", "A", "other", "other", "B", "A-changed", "other", "A-changed", "other"]
  const labels = (slot: Source.Slot, i: number) => {
    switch (slot) {
      case "A":
        return { context_factor: "Dana", contextual_preference: "bullets" }
      case "A-changed":
        return { context_factor: "Dana", contextual_preference: "tables" }
      case "B":
        return { context_factor: "Sam", contextual_preference: "prose" }
      case "other":
        return { context_factor: `other ${i}`, contextual_preference: `pref ${i}` }
    }
  }
  return {
    persona_id: "synthetic",
    persona: "a test persona",
    factor_a: "Dana",
    preference_a: "bullets",
    checklist_a: ["uses bullets", "is short"],
    preference_a_changed: "tables",
    checklist_a_changed: ["uses a table", "has a header row"],
    factor_b: "Sam",
    preference_b: "prose",
    current_request: "Summarize the meeting for Dana.",
    sessions: slots.map((slot, i) => ({
      slot,
      ...labels(slot, i),
      dialogue: Array.from({ length: 6 }, (_, k) => ({ role: k % 2 === 0 ? "user" : "assistant", content: `session ${i}` } as const))
    })),
    drop_contrastive: [3, 9],
    drop_changing: [0, 5]
  }
}

describe("sample build", () => {
  it("keeps the sessions each instance type should keep, in chronological order", () => {
    const source = syntheticSource()
    expect(Either.isRight(Source.decode("synthetic.json", source))).toBe(true)
    // Hand-derived from the slot layout above.
    expect(keptSessionIndices(source, "consistent")).toEqual([0, 1, 3, 4, 5, 6, 9, 11])
    expect(keptSessionIndices(source, "contrastive")).toEqual([0, 1, 2, 4, 5, 6, 7, 11])
    expect(keptSessionIndices(source, "changing")).toEqual([1, 3, 4, 6, 8, 9, 10, 11])
    const [consistent, contrastive, changing] = buildRows([source]).map(Domain.fromRow)
    expect(changing!.query.sessions.map((s) => s.dialogue[0]!.content)).toEqual(
      [1, 3, 4, 6, 8, 9, 10, 11].map((i) => `session ${i}`)
    )
    expect(labelsOf(consistent!)).toEqual(["other", "relevant", "other", "relevant", "other", "other", "other", "other"])
    expect(labelsOf(contrastive!)).toEqual(["other", "relevant", "other", "relevant", "other", "other", "other", "other"])
    expect(labelsOf(changing!)).toEqual(["stale", "other", "stale", "other", "relevant", "other", "relevant", "other"])
    expect(changing!.gold.preference).toBe("tables")
    expect(changing!.gold.checklist).toEqual(["uses a table", "has a header row"])
    expect(contrastive!.gold.preference).toBe("bullets")
  })

  it("writes one newline-terminated JSON object per row, keys in the released column order", () => {
    const rows = buildRows([syntheticSource()])
    const lines = toJsonl(rows).split("\n")
    expect(lines.length).toBe(4)
    expect(lines[3]).toBe("")
    expect(Object.keys(JSON.parse(lines[0]!))).toEqual([...Domain.releasedColumns])
  })
})

describe("sample source checks", () => {
  const failure = (input: unknown) => {
    const result = Source.decode("p99-test.json", input)
    if (Either.isRight(result)) throw new Error("expected the source to be rejected")
    return result.left
  }
  const valid = syntheticSource()
  const withSession = (i: number, patch: Partial<Source.SourceSession>) => ({
    ...valid,
    sessions: valid.sessions.map((s, k) => k === i ? { ...s, ...patch } : s)
  })

  it("names the file and an unknown key", () => {
    const error = failure({ ...valid, notes: "draft" })
    expect(error.source).toBe("p99-test.json")
    expect(error.field).toBe("notes")
    expect(error.message).toContain("is unexpected")
  })

  it("names a bad slot value", () => {
    const error = failure(withSession(2, { slot: "C" as Source.Slot }))
    expect(error.field).toBe("sessions[2].slot")
    expect(error.message).toContain(`expected one of "A", "A-changed", "B", "other"`)
  })

  it("rejects a history that is not 12 sessions", () => {
    const error = failure({ ...valid, sessions: valid.sessions.slice(0, 11) })
    expect(error.field).toBe("sessions")
    expect(error.reason).toBe("expected 12 prior sessions, found 11")
  })

  it("rejects a changed-preference session before an A session", () => {
    const sessions = [...valid.sessions]
    ;[sessions[1], sessions[8]] = [sessions[8]!, sessions[1]!]
    const error = failure({ ...valid, sessions })
    expect(error.field).toBe("sessions[1].slot")
  })

  it("rejects a B session whose preference is not preference_b", () => {
    const error = failure(withSession(7, { contextual_preference: "bullets" }))
    expect(error.field).toBe("sessions[7].contextual_preference")
  })

  it("rejects an 'other' session that reuses factor A", () => {
    const error = failure(withSession(5, { context_factor: "Dana" }))
    expect(error.field).toBe("sessions[5].context_factor")
  })

  it("rejects a dialogue that does not start with the user", () => {
    const dialogue = valid.sessions[0]!.dialogue.map((m) => ({ ...m, role: m.role === "user" ? "assistant" : "user" } as const))
    const error = failure(withSession(0, { dialogue }))
    expect(error.field).toBe("sessions[0].dialogue[0].role")
  })

  it("rejects drop indices that point at a relevant session", () => {
    const error = failure({ ...valid, drop_changing: [0, 8] })
    expect(error.field).toBe("drop_changing[1]")
    expect(error.reason).toContain(`index 8 must point at an "other" session`)
  })

  it("reports unparsable JSON with the file name", () => {
    const result = Source.parse("p99-test.json", "{ \"persona_id\": ")
    expect(Either.isLeft(result) && result.left.message.startsWith("p99-test.json: not valid JSON")).toBe(true)
  })
})
