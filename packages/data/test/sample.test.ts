import { describe, expect } from "@effect/vitest"
import { Effect, Either } from "effect"
import * as fs from "node:fs"
import { fileURLToPath } from "node:url"
import * as Dataset from "../src/Dataset.js"
import { Domain } from "@cupid-lab/core"
import { NodeTest } from "@cupid-lab/core/testing"
import { buildRows, droppedOthers, keptSessionIndices, toJsonl } from "../src/internal/sample/Build.js"
import { checkSources, sampleSourceRoot, splitOutputs } from "../src/internal/sample/Check.js"
import * as Source from "../src/internal/sample/Source.js"
import * as Validate from "../src/internal/sample/Validate.js"

const dataDirectory = fileURLToPath(new URL("../data/", import.meta.url))

const labelsOf = (instance: Domain.Instance) => instance.gold.sessions.map((s) => s.label)
const count = (instance: Domain.Instance, label: Domain.RelevanceLabel) =>
  labelsOf(instance).filter((l) => l === label).length
const positionsOf = (instance: Domain.Instance, label: Domain.RelevanceLabel) =>
  instance.gold.sessions.flatMap((s, i) => (s.label === label ? [i] : []))

describe("bundled sample: sample (dev) and sample-test (test)", () => {
  const checked = checkSources(sampleSourceRoot(dataDirectory))

  NodeTest.it.effect("every source passes the validator", () =>
    Effect.gen(function* () {
      const result = yield* checked
      const problems = result.problems.flatMap((f) => f.problems.map((p) => `${f.file}, ${p.field}: ${p.reason}`))
      expect(problems).toEqual([])
      for (const split of Source.splits) {
        expect(result.loaded.filter((l) => l.split === split).length, split).toBeGreaterThanOrEqual(8)
      }
    })
  )

  NodeTest.it.effect("sample.jsonl and sample-test.jsonl are exactly what the build produces", () =>
    Effect.gen(function* () {
      const result = yield* checked
      for (const [split, file] of splitOutputs(dataDirectory)) {
        const sources = result.loaded.filter((l) => l.split === split).map((l) => l.source)
        expect(fs.readFileSync(file, "utf8"), file).toBe(toJsonl(buildRows(sources)))
      }
    })
  )

  NodeTest.it.effect("both splits load as data sources, with distinct personas", () =>
    Effect.gen(function* () {
      const dev = yield* Dataset.loadAll("sample")
      const test = yield* Dataset.loadAll("sample-test")
      expect(dev.instances.length).toBeGreaterThanOrEqual(24)
      expect(test.instances.length).toBeGreaterThanOrEqual(24)
      const personas = (xs: ReadonlyArray<Domain.Instance>) => new Set(xs.map((i) => i.personaId))
      for (const p of personas(dev.instances)) expect(personas(test.instances).has(p)).toBe(false)
      expect(dev.fingerprint).not.toBe(test.fingerprint)
    })
  )

  NodeTest.it.effect("each instance is derived the CUPID way: 8 sessions, relevance from the slots", () =>
    Effect.gen(function* () {
      const result = yield* checked
      for (const { source } of result.loaded) {
        const n = (slot: Source.Slot) => source.sessions.filter((s) => s.slot === slot).length
        const [consistent, contrastive, changing] = buildRows([source]).map(Domain.fromRow)
        for (const instance of [consistent!, contrastive!, changing!])
          expect(instance.query.sessions.length, instance.id).toBe(8)
        expect([count(consistent!, "relevant"), count(consistent!, "stale")], consistent!.id).toEqual([n("A"), 0])
        expect([count(contrastive!, "relevant"), count(contrastive!, "stale")], contrastive!.id).toEqual([n("A"), 0])
        expect([count(changing!, "relevant"), count(changing!, "stale")], changing!.id).toEqual([
          n("A-changed"),
          n("A")
        ])
        const bIn = (i: Domain.Instance) => i.gold.sessions.filter((s) => s.factor === source.factor_b).length
        expect([bIn(consistent!), bIn(contrastive!), bIn(changing!)], source.persona_id).toEqual([0, 2, 0])
        expect(Math.max(...positionsOf(changing!, "stale"))).toBeLessThan(
          Math.min(...positionsOf(changing!, "relevant"))
        )
      }
    })
  )

  NodeTest.it.effect("relevant counts run from 1 to 3 and sit early in some instances, late in others", () =>
    Effect.gen(function* () {
      const result = yield* checked
      const instances = buildRows(result.loaded.map((l) => l.source)).map(Domain.fromRow)
      expect(new Set(instances.map((i) => count(i, "relevant")))).toEqual(new Set([1, 2, 3]))
      const means = instances.map((i) => positionsOf(i, "relevant").reduce((a, b) => a + b, 0) / count(i, "relevant"))
      expect(Math.min(...means)).toBeLessThan(2.5)
      expect(Math.max(...means)).toBeGreaterThan(5.5)
    })
  )
})

/** Pseudo-words unique to one place, so fixture text never shares a run with other text. */
const words = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}x${i}q`).join(" ")
const slotsLayout: ReadonlyArray<Source.Slot> = [
  "other",
  "A",
  "B",
  "other",
  "A",
  "other",
  "other",
  "A-changed",
  "B",
  "other",
  "A-changed",
  "other"
]

/** A source that passes every rule; tests break one rule at a time. */
const validSource = (): Source.SampleSource => {
  const factors: Array<Source.Factor> = [
    {
      name: "Dr. Marisol Okafor",
      type: "person",
      mentions: ["Dr. Okafor", "Marisol", "my department head", "Okafor's"]
    },
    { name: "Dr. Reuben Castle", type: "person", mentions: ["Dr. Castle", "Reuben"] },
    ...Array.from({ length: 6 }, (_, k): Source.Factor => ({
      name: `Venue ${k}`,
      type: "location",
      mentions: [`Venuehall${k}`]
    }))
  ]
  const preference = (tag: string) =>
    `Answers for ${tag} must open with a numbered list, keep every item under ten words, and end with one question.`
  let other = 0
  const sessions = slotsLayout.map((slot, i): Source.SourceSession => {
    const factor =
      slot === "A" || slot === "A-changed" ? factors[0]! : slot === "B" ? factors[1]! : factors[2 + other++]!
    const mention = factor.mentions[i % factor.mentions.length]!
    const topic = i === 1 || i === 3 || i === 5 ? " about the titration lab" : ""
    const resource = i === 0 || i === 6
    const opening = resource
      ? `${words(`r${i}`, 10)} ${mention}${topic}\n${words(`ra${i}`, 12)}\n${words(`rb${i}`, 12)}\n${words(`rc${i}`, 12)}\n${words(`rd${i}`, 12)}`
      : `${words(`s${i}`, 12)} ${mention}${topic} ${words(`t${i}`, 4)}`
    const pref =
      slot === "A"
        ? preference("A")
        : slot === "A-changed"
          ? preference("A changed")
          : slot === "B"
            ? preference("B")
            : preference(`other ${i}`)
    return {
      slot,
      context_factor: factor.name,
      contextual_preference: pref,
      ...(resource ? { resource: "document" as const } : {}),
      dialogue: [
        { role: "user", content: opening },
        { role: "assistant", content: "A first answer." },
        { role: "user", content: words(`f${i}`, 15) },
        { role: "assistant", content: "A second answer." },
        { role: "user", content: words(`c${i}`, 6) },
        { role: "assistant", content: "Glad it helps." }
      ]
    }
  })
  return {
    persona_id: "d99-fixture",
    persona: "A fixture persona.",
    topic: { name: "the titration lab", mentions: ["titration lab"] },
    factors,
    factor_a: factors[0]!.name,
    preference_a: preference("A"),
    checklist_a: ["Numbered?", "Short items?"],
    preference_a_changed: preference("A changed"),
    checklist_a_changed: ["Numbered?", "One question?"],
    factor_b: factors[1]!.name,
    preference_b: preference("B"),
    current_request: `${words("req", 14)} Marisol and the titration lab`,
    sessions
  }
}

const problemsOf = (source: Source.SampleSource) => Validate.source(source).map((p) => `${p.field}: ${p.reason}`)
const patchSession = (
  source: Source.SampleSource,
  i: number,
  f: (s: Source.SourceSession) => Source.SourceSession
): Source.SampleSource => ({
  ...source,
  sessions: source.sessions.map((s, k) => (k === i ? f(s) : s))
})
const patchTurn = (s: Source.SourceSession, k: number, content: string): Source.SourceSession => ({
  ...s,
  dialogue: s.dialogue.map((m, j) => (j === k ? { ...m, content } : m))
})

describe("sample validator", () => {
  NodeTest.it("accepts the fixture", () => {
    expect(problemsOf(validSource())).toEqual([])
  })

  NodeTest.it("catches a preference leaked into a user turn (6-word run)", () => {
    const broken = patchSession(validSource(), 1, (s) =>
      patchTurn(s, 2, "Again: keep every item under ten words, please.")
    )
    expect(problemsOf(broken)).toEqual([
      `sessions[1].dialogue[2].content: contains the 6-word run "keep every item under ten words" of its session's preference`
    ])
  })

  NodeTest.it("catches a preference leaked into the request", () => {
    const source = validSource()
    const broken = { ...source, current_request: `${source.current_request}; open with a numbered list, keep it short` }
    expect(
      problemsOf(broken).some(
        (p) => p.startsWith("current_request: contains the 6-word run") && p.endsWith("of preference_a")
      )
    ).toBe(true)
  })

  NodeTest.it("catches an opening message that names no mention of its factor", () => {
    const broken = patchSession(validSource(), 3, (s) => patchTurn(s, 0, words("nomention", 14)))
    expect(problemsOf(broken)).toContain(
      `sessions[3].dialogue[0].content: the first user message names none of its factor's mentions ("Venuehall1")`
    )
  })

  NodeTest.it("catches a mention of factor A in a session about another factor", () => {
    const broken = patchSession(validSource(), 5, (s) => patchTurn(s, 0, `${s.dialogue[0]!.content} and Dr. Okafor`))
    expect(problemsOf(broken)).toContain(
      `sessions[5].dialogue[0].content: mentions factor A ("Dr. Okafor") in a session about "Venue 2"`
    )
  })

  NodeTest.it("catches a changed-preference session before an A session, and wrong slot counts", () => {
    const source = validSource()
    const sessions = [...source.sessions]
    ;[sessions[4], sessions[7]] = [sessions[7]!, sessions[4]!]
    expect(problemsOf({ ...source, sessions })).toContain(
      `sessions[4].slot: "A-changed" sessions must come after every "A" session`
    )
    const threeB = patchSession(source, 0, (s) => ({
      ...s,
      slot: "B",
      context_factor: source.factor_b,
      contextual_preference: source.preference_b
    }))
    expect(problemsOf(threeB)).toContain(`sessions: expected 2 "B" sessions, found 3`)
  })

  NodeTest.it("catches a contrastive factor of another type, too few mention forms, and a missing topic", () => {
    const source = validSource()
    const otherType = {
      ...source,
      factors: source.factors.map((f) => (f.name === source.factor_b ? { ...f, type: "tool" as const } : f))
    }
    expect(problemsOf(otherType)).toContain(
      `factor_b: the contrastive factor must have A's type ("person"), found "tool"`
    )
    const oneForm = {
      ...source,
      factors: source.factors.map((f) => (f.name === source.factor_a ? { ...f, mentions: ["Marisol"] } : f))
    }
    expect(
      problemsOf(oneForm).some((p) => p.startsWith(`factors: A's sessions and the request use 1 different mentions`))
    ).toBe(true)
    const noTopic = { ...source, current_request: words("plain", 14) + " Marisol" }
    expect(problemsOf(noTopic)).toContain("current_request: does not mention the topic")
  })

  NodeTest.it("catches a resource session without its resource, and a long closing turn", () => {
    const broken = patchSession(validSource(), 0, (s) => patchTurn(s, 0, `${words("short", 12)} Venuehall0`))
    expect(
      problemsOf(broken).some((p) =>
        p.startsWith("sessions[0].dialogue[0].content: a session with a resource carries it inline")
      )
    ).toBe(true)
    const longClose = patchSession(validSource(), 2, (s) => patchTurn(s, 4, words("close", 31)))
    expect(problemsOf(longClose)).toContain(
      "sessions[2].dialogue[4].content: the last user turn is a short close of at most 30 words, found 31"
    )
  })

  NodeTest.it("finds an 8-word run shared by two sessions, in the same or another persona", () => {
    const a = validSource()
    const shared = "the same complaint sentence appears in both of these sessions"
    const b = patchSession(
      patchSession(a, 2, (s) => patchTurn(s, 2, shared)),
      9,
      (s) => patchTurn(s, 2, `well, ${shared}`)
    )
    const found = Validate.sharedRuns([{ file: "x.json", source: b }])
    expect(found.map((f) => `${f.problem.field}: ${f.problem.reason}`)).toEqual([
      `sessions[9].dialogue[2].content: repeats the 8-word run "the same complaint sentence appears in both of" of x.json sessions[2]`
    ])
    expect(
      Validate.sharedRuns([
        { file: "x.json", source: a },
        { file: "y.json", source: a }
      ]).length
    ).toBeGreaterThan(0)
  })

  NodeTest.it("derives instances as CUPID does, dropping seeded random others", () => {
    const source = validSource()
    // 2 A-changed: consistent drops none beyond A-changed and B; contrastive and changing drop two others each.
    expect(droppedOthers(source, "consistent")).toEqual([])
    expect(droppedOthers(source, "contrastive").length).toBe(2)
    expect(droppedOthers(source, "changing").length).toBe(2)
    for (const type of Domain.cupidTypes) {
      const kept = keptSessionIndices(source, type)
      expect(kept.length).toBe(8)
      expect(kept).toEqual([...kept].sort((x, y) => x - y))
      for (const i of droppedOthers(source, type)) expect(source.sessions[i]!.slot).toBe("other")
    }
    expect(keptSessionIndices(source, "consistent")).toEqual([0, 1, 3, 4, 5, 6, 9, 11])
    // One A-changed session: consistent must also drop one other, contrastive three.
    const oneChanged = {
      ...source,
      sessions: source.sessions.map((s, i) =>
        i === 10 ? { ...s, slot: "other" as const, context_factor: "Venue 9", contextual_preference: "x" } : s
      )
    }
    expect(droppedOthers(oneChanged, "consistent").length).toBe(1)
    expect(droppedOthers(oneChanged, "contrastive").length).toBe(3)
    for (const type of Domain.cupidTypes) expect(keptSessionIndices(oneChanged, type).length).toBe(8)
    // Seeded by the persona id: the same source, the same drops.
    expect(droppedOthers(source, "changing")).toEqual(droppedOthers(validSource(), "changing"))
    const rows = buildRows([source])
    expect(Object.keys(rows[0]!)).toEqual([...Domain.releasedColumns])
  })

  NodeTest.it("names the file and field of a malformed source", () => {
    const result = Source.parseShape(JSON.stringify({ ...validSource(), notes: "draft" }))
    expect(Either.isLeft(result) && result.left[0]!.field).toBe("notes")
    expect(Either.isLeft(result) && result.left[0]!.reason).toContain("is unexpected")
    const json = Source.parseShape('{ "persona_id": ')
    expect(Either.isLeft(json) && json.left[0]!.reason.startsWith("not valid JSON")).toBe(true)
  })
})
