/**
 * The seeded sampling and the instance construction, with hand-counted expectations: balanced
 * persona templates, the session template's structure, each instance type's composition, and the
 * validator's rules on hand-made persona data.
 */
import { describe, expect, it } from "@effect/vitest"
import { Instances, type Records, Template } from "@cupid-lab/synthesis"

const counts = { length: 13, original: 2, changed: 2, contrastive: 2 }

describe("Template", () => {
  it("personas: each attribute takes every choice once per cycle", () => {
    const seeds = ["s1", "s2", "s3", "s4", "s5"]
    const ts = Array.from({ length: 12 }, (_, i) => Template.persona(3, seeds, i))
    // 3 career levels: 12 personas are 4 full cycles, so each level 4 times.
    for (const level of ["entry", "mid", "senior"]) expect(ts.filter((t) => t.careerLevel === level).length).toBe(4)
    // 4 styles: 3 cycles.
    for (const style of ["analytical", "directive", "conceptual", "behavioral"])
      expect(ts.filter((t) => t.decisionStyle === style).length).toBe(3)
    // 5 seeds: the first 10 personas are 2 full cycles.
    for (const s of seeds) expect(ts.slice(0, 10).filter((t) => t.seed === s).length).toBe(2)
    for (const t of ts) {
      expect(t.traits.length).toBe(2)
      expect(t.traits[0]!.trait).not.toBe(t.traits[1]!.trait)
      expect(new Set(t.values).size).toBe(2)
    }
    // Deterministic, and independent of the other personas drawn.
    expect(Template.persona(3, seeds, 7)).toEqual(ts[7])
    expect(Template.persona(4, seeds, 7)).not.toEqual(ts[7])
  })

  it("sessions: A four times before the last (two original, then two changed), B twice, the other six factors once each", () => {
    for (let p = 0; p < 20; p++) {
      const plan = Template.sessions(1, p, counts, 8)
      expect(plan.slots.length).toBe(13)
      expect([plan.current, plan.contrastive].sort()).toEqual([6, 7])
      const slots = plan.slots.map((s) => s.slot)
      expect(slots[12]).toBe("current")
      expect(plan.slots[12]!.factor).toBe(plan.current)
      const a = slots.flatMap((s, i) => (s === "A" ? [i] : []))
      const changed = slots.flatMap((s, i) => (s === "A-changed" ? [i] : []))
      expect(a.length).toBe(2)
      expect(changed.length).toBe(2)
      expect(Math.max(...a)).toBeLessThan(Math.min(...changed))
      expect(slots.filter((s) => s === "B").length).toBe(2)
      const others = plan.slots
        .filter((s) => s.slot === "other")
        .map((s) => s.factor)
        .sort()
      expect(others).toEqual([0, 1, 2, 3, 4, 5])
    }
  })

  it("a 50-session template keeps the structure: 4 + 2 fixed sessions, 43 others over 6 factors", () => {
    const plan = Template.sessions(1, 0, { ...counts, length: 50 }, 8)
    const others = plan.slots.filter((s) => s.slot === "other")
    expect(others.length).toBe(43)
    const per = [0, 1, 2, 3, 4, 5].map((f) => others.filter((s) => s.factor === f).length)
    // 43 = 6 x 7 + 1: every factor 7 or 8 times.
    expect(per.every((n) => n === 7 || n === 8)).toBe(true)
  })
})

const factor = (i: number, pair: boolean): Records.Factor => ({
  background: "b",
  factor_type: pair ? "tool" : "person",
  task_types: ["t"],
  name: `Factor ${i}`,
  preference_type: "p",
  preference: `alpha${i} beta${i} gamma${i} delta${i} epsilon${i} zeta${i} eta${i}`,
  ...(pair ? { changed_preference: `one${i} two${i} three${i} four${i} five${i} six${i} seven${i}` } : {})
})

const personaData = (index: number): Instances.PersonaData => {
  const factors = Array.from({ length: 8 }, (_, i) => factor(i, i >= 6))
  const plan = Template.sessions(5, index, counts, 8)
  const base = { index, id: Instances.personaId(index), persona: { name: "N", description: "D" }, factors, plan }
  const sessions = plan.slots.map((s, i): Records.SessionText => ({
    task_type: "t",
    story: "s",
    request_with_preference: "r",
    request: `Session ${i} about ${factors[s.factor]!.name}.`,
    resource_kind: "none",
    resource: null
  }))
  const dialogues = plan.slots.slice(0, -1).map((s, i): Records.Dialogue => ({
    messages: [
      { role: "user", content: `Session ${i}: help with ${factors[s.factor]!.name}.` },
      { role: "assistant", content: "Sure." },
      { role: "user", content: "Thanks." }
    ],
    judgements: [{ score: 10, hints: [1, 2] }],
    hinted: [1, 2]
  }))
  const checklists = new Map<string, ReadonlyArray<string>>()
  for (const f of factors) {
    checklists.set(f.preference, ["q1", "q2"])
    if (f.changed_preference !== undefined) checklists.set(f.changed_preference, ["q1", "q2"])
  }
  return { ...base, sessions, dialogues, checklists }
}

describe("Instances", () => {
  it("builds the three types with CUPID's composition, 8 prior sessions each, all valid", () => {
    const data = personaData(0)
    const built = Instances.build(data, counts, 5)
    expect(built.map((b) => b.row.instance_type)).toEqual(["consistent", "contrastive", "changing"])
    const slotsOf = (k: number) => built[k]!.kept.map((i) => data.plan.slots[i]!.slot)
    const count = (k: number, slot: string) => slotsOf(k).filter((s) => s === slot).length
    for (const b of built) {
      expect(b.kept.length).toBe(8)
      expect(b.problems).toEqual([])
    }
    expect([count(0, "A"), count(0, "A-changed"), count(0, "B"), count(0, "other")]).toEqual([2, 0, 0, 6])
    expect([count(1, "A"), count(1, "A-changed"), count(1, "B"), count(1, "other")]).toEqual([2, 0, 2, 4])
    expect([count(2, "A"), count(2, "A-changed"), count(2, "B"), count(2, "other")]).toEqual([2, 2, 0, 4])
    const a = data.factors[data.plan.current]!
    expect(built[0]!.row.current_contextual_preference).toBe(a.preference)
    expect(built[2]!.row.current_contextual_preference).toBe(a.changed_preference)
    expect(built[0]!.row.current_request).toBe(`Session 12 about ${a.name}.`)
  })

  it("validation names each broken rule", () => {
    const data = personaData(1)
    const first = data.plan.slots.findIndex((s) => s.slot === "A")
    const a = data.factors[data.plan.current]!
    const dialogues = data.dialogues.map((d, i) =>
      i === first
        ? {
            ...d,
            messages: [
              { role: "user" as const, content: "Help me please." },
              d.messages[1]!,
              { role: "user" as const, content: `No: ${a.preference}` }
            ],
            hinted: [1]
          }
        : d
    )
    const sessions = data.sessions.map((s, i) => (i === 12 ? { ...s, request: `For the report: ${a.preference}` } : s))
    const built = Instances.build({ ...data, dialogues, sessions }, counts, 5)
    const problems = built[0]!.problems
    const k = built[0]!.kept.indexOf(first)
    expect(problems).toContain(
      `prior_interactions[${k}] (session ${first + 1}): the first user message does not name its factor "${a.name}"`
    )
    expect(problems).toContain(
      `prior_interactions[${k}] (session ${first + 1}): dialogue message 3 (user) contains the 6-word run "alpha${data.plan.current} beta${data.plan.current} gamma${data.plan.current} delta${data.plan.current} epsilon${data.plan.current} zeta${data.plan.current}" of the session's preference`
    )
    expect(problems).toContain(
      `prior_interactions[${k}] (session ${first + 1}): checklist item 2 never hinted at in the dialogue`
    )
    expect(problems).toContain(`current_request: does not name the current factor "${a.name}"`)
    expect(problems.some((p) => p.startsWith("current_request: contains the 6-word run"))).toBe(true)
    // Every type keeps A's original sessions, so all three are excluded.
    expect(built.every((b) => b.problems.length > 0)).toBe(true)
  })
})
