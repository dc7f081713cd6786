import { describe, expect } from "@effect/vitest"
import { NodeTest } from "@cupid-lab/core/testing"
import { Domain } from "@cupid-lab/core"
import { Effect, Either } from "effect"
import * as Dataset from "../src/Dataset.js"

import * as Synthetic from "../src/Synthetic.js"
import * as Transform from "../src/Transform.js"

/**
 * A persona's three instances, CUPID-style: A = "Ana" (pA, then pA' in the changed sessions),
 * B = "Bea" (contrastive), others "o1".."o6". Each session's text says which one it is.
 */
const persona = (id: string): ReadonlyArray<Domain.Instance> => {
  const s = (factor: string, preference: string, tag: string) => ({
    context_factor: factor,
    contextual_preference: preference,
    dialogue: [
      { role: "user" as const, content: `${id} ${tag} about ${factor}` },
      { role: "assistant" as const, content: `ok ${tag}` }
    ]
  })
  const o = (k: number) => s(`${id}-o${k}`, `po${k}`, `o${k}`)
  const a1 = s(`${id}-Ana`, "pA", "a1"),
    a2 = s(`${id}-Ana`, "pA", "a2")
  const c1 = s(`${id}-Ana`, "pA2", "c1"),
    c2 = s(`${id}-Ana`, "pA2", "c2")
  const b1 = s(`${id}-Bea`, "pB", "b1"),
    b2 = s(`${id}-Bea`, "pB", "b2")
  const row = (type: Domain.CupidType, prior: ReadonlyArray<Domain.WirePriorInteraction>): Domain.CupidRow => ({
    persona_id: id,
    instance_type: type,
    current_request: `request of ${id}`,
    current_context_factor: `${id}-Ana`,
    current_contextual_preference: type === "changing" ? "pA2" : "pA",
    current_checklist: ["x?"],
    prior_interactions: prior
  })
  return [
    row("consistent", [o(1), a1, o(2), o(3), a2, o(4), o(5), o(6)]),
    row("contrastive", [o(1), a1, b1, o(3), a2, o(4), b2, o(6)]),
    row("changing", [a1, o(2), a2, o(3), c1, o(5), c2, o(6)])
  ].map(Domain.fromRow)
}

const data = [...persona("p1"), ...persona("p2"), ...persona("p3")]
const pool = Transform.pool(data)
const get = (id: string) => data.find((i) => i.id === id)!
const tags = (i: Domain.Instance) => i.query.sessions.map((s) => s.dialogue[0]!.content.split(" ")[1])
const labels = (i: Domain.Instance) => i.gold.sessions.map((s) => s.label)
const run = (instance: Domain.Instance, spec: Transform.Spec) =>
  Either.getOrThrow(Transform.apply(instance, spec, { seed: 7, pool }))

describe("Transform", () => {
  NodeTest.it("position moves the relevant block and keeps the others' order", () => {
    const i = get("p1:consistent")
    expect(tags(run(i, { position: "early" }))).toEqual(["a1", "a2", "o1", "o2", "o3", "o4", "o5", "o6"])
    expect(tags(run(i, { position: "late" }))).toEqual(["o1", "o2", "o3", "o4", "o5", "o6", "a1", "a2"])
    expect(tags(run(i, { position: "middle" }))).toEqual(["o1", "o2", "o3", "a1", "a2", "o4", "o5", "o6"])
    expect(tags(run(i, { position: 2 }))).toEqual(["o1", "a1", "a2", "o2", "o3", "o4", "o5", "o6"])
    expect(tags(run(i, { position: 99 }))).toEqual(["o1", "o2", "o3", "o4", "o5", "o6", "a1", "a2"])
    // Ids are renumbered; labels travel with their sessions.
    const moved = run(i, { position: "early" })
    expect(moved.query.sessions.map((s) => s.id)).toEqual(["s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8"])
    expect(labels(moved)).toEqual(["relevant", "relevant", "other", "other", "other", "other", "other", "other"])
    expect(moved.gold.sessions.map((s) => s.id)).toEqual(moved.query.sessions.map((s) => s.id))
  })

  NodeTest.it("position never puts a stale session after a relevant one", () => {
    const i = get("p1:changing")
    // a1, a2 are stale; c1, c2 relevant.
    expect(tags(run(i, { position: "early" }))).toEqual(["a1", "a2", "c1", "c2", "o2", "o3", "o5", "o6"])
    expect(tags(run(i, { position: "late" }))).toEqual(["a1", "o2", "a2", "o3", "o5", "o6", "c1", "c2"])
  })

  NodeTest.it(
    "pad adds exactly N sessions of other personas, never naming the current factor, and keeps the relevant ones",
    () => {
      const i = get("p1:contrastive")
      for (const n of [1, 5, 16, 40]) {
        const padded = run(i, { pad: n })
        expect(padded.query.sessions.length).toBe(8 + n)
        const added = padded.query.sessions.filter((s) => !i.query.sessions.some((o) => o.hash === s.hash))
        expect(added.length).toBe(n)
        for (const s of added) {
          expect(s.dialogue[0]!.content.startsWith("p1 ")).toBe(false)
          expect(s.dialogue[0]!.content.toLowerCase()).not.toContain("p1-ana")
        }
        // The original sessions keep their order and labels; padding is labelled other.
        const originals = padded.query.sessions
          .filter((s) => i.query.sessions.some((o) => o.hash === s.hash))
          .map((s) => s.hash)
        expect(originals).toEqual(i.query.sessions.map((s) => s.hash))
        expect(labels(padded).filter((l) => l === "relevant").length).toBe(2)
        expect(labels(padded).filter((l) => l !== "other").length).toBe(2)
      }
    }
  )

  NodeTest.it("pad is deterministic per (seed, instance, spec) and differs across seeds", () => {
    const i = get("p2:consistent")
    const a = Either.getOrThrow(Transform.apply(i, { pad: 6 }, { seed: 1, pool }))
    const b = Either.getOrThrow(Transform.apply(i, { pad: 6 }, { seed: 1, pool }))
    const c = Either.getOrThrow(Transform.apply(i, { pad: 6 }, { seed: 2, pool }))
    expect(tags(a)).toEqual(tags(b))
    expect(a.query.sessions.map((s) => s.hash)).not.toEqual(c.query.sessions.map((s) => s.hash))
  })

  NodeTest.it("drop removes the contrastive factor's sessions or the stale ones", () => {
    expect(tags(run(get("p1:contrastive"), { drop: "contrastive" }))).toEqual(["o1", "a1", "o3", "a2", "o4", "o6"])
    expect(tags(run(get("p1:changing"), { drop: "stale" }))).toEqual(["o2", "o3", "c1", "o5", "c2", "o6"])
    // Nothing to drop elsewhere.
    expect(tags(run(get("p1:consistent"), { drop: ["contrastive", "stale"] }))).toEqual(tags(get("p1:consistent")))
  })

  NodeTest.it("transforms compose: drop, then pad, then position", () => {
    const out = run(get("p1:changing"), { position: "early", pad: 4, drop: "stale" })
    expect(out.query.sessions.length).toBe(6 + 4)
    expect(tags(out).slice(0, 2)).toEqual(["c1", "c2"])
    expect(labels(out).filter((l) => l === "stale")).toEqual([])
  })

  NodeTest.it("labels and normal form", () => {
    expect(Transform.label({ position: "late", drop: ["stale", "contrastive"], pad: 24 })).toBe(
      "drop=contrastive+stale,pad=24,position=late"
    )
    expect(Transform.label({ pad: 0 })).toBe("none")
    expect(Transform.isIdentity({ pad: 0 })).toBe(true)
    expect(Transform.needsPool({ position: "early" })).toBe(false)
    expect(Transform.needsPool({ pad: 3 })).toBe(true)
  })

  NodeTest.it("fails with a clear error when there is nothing to pad with or no consistent instance", () => {
    const lonely = persona("solo")
    const result = Transform.apply(lonely[0]!, { pad: 2 }, { seed: 0, pool: Transform.pool(lonely) })
    expect(Either.isLeft(result) && result.left.message).toMatch(
      /transform of solo:consistent, pad: no session of another persona/
    )
    const noConsistent = Transform.pool(lonely.slice(1))
    const drop = Transform.apply(lonely[1]!, { drop: "contrastive" }, { seed: 0, pool: noConsistent })
    expect(Either.isLeft(drop) && drop.left.message).toMatch(/needs the consistent instance of persona "solo"/)
  })

  NodeTest.it("works on generated data: padding to 128 keeps the relevant sessions", () => {
    const rows = [...Synthetic.generate({ ...Synthetic.defaults, personas: 6, seed: 3 })].map(Domain.fromRow)
    const synthPool = Transform.pool(rows)
    for (const instance of rows) {
      const out = Either.getOrThrow(
        Transform.apply(instance, { pad: 120, position: "middle" }, { seed: 5, pool: synthPool })
      )
      expect(out.query.sessions.length).toBe(instance.query.sessions.length + 120)
      const relevant = (x: Domain.Instance) =>
        x.query.sessions.filter((_, k) => x.gold.sessions[k]!.label === "relevant").map((s) => s.hash)
      expect(relevant(out)).toEqual(relevant(instance))
      const dropped = Either.getOrThrow(
        Transform.apply(instance, { drop: "contrastive" }, { seed: 5, pool: synthPool })
      )
      if (instance.type === "contrastive")
        expect(dropped.query.sessions.length).toBeLessThan(instance.query.sessions.length)
    }
  })
})

describe("Transform on the bundled sample", () => {
  NodeTest.it.effect(
    "padding by 24, 56 and 120 keeps every relevant session and adds exactly N sessions of other personas",
    () =>
      Effect.gen(function* () {
        const { instances } = yield* Dataset.loadAll("sample")
        const samplePool = Transform.pool(instances)
        const personaOf = new Map<string, Set<string>>()
        for (const i of instances)
          for (const s of i.query.sessions) personaOf.set(s.hash, (personaOf.get(s.hash) ?? new Set()).add(i.personaId))
        for (const instance of instances) {
          for (const n of [24, 56, 120]) {
            const out = Either.getOrThrow(Transform.apply(instance, { pad: n }, { seed: 7, pool: samplePool }))
            expect(out.query.sessions.length).toBe(instance.query.sessions.length + n)
            const own = new Set(instance.query.sessions.map((s) => s.hash))
            const added = out.query.sessions.filter((s) => !own.has(s.hash))
            expect(added.length).toBe(n)
            for (const s of added) expect(personaOf.get(s.hash)!.has(instance.personaId)).toBe(false)
            const relevant = (x: Domain.Instance) =>
              x.query.sessions.filter((_, k) => x.gold.sessions[k]!.label === "relevant").map((s) => s.hash)
            expect(relevant(out)).toEqual(relevant(instance))
            expect(out.gold.sessions.filter((g) => g.label === "stale").length).toBe(
              instance.gold.sessions.filter((g) => g.label === "stale").length
            )
          }
        }
      })
  )
})
