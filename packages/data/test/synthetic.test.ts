import { describe, expect } from "@effect/vitest"
import { NodeTest } from "@cupid-lab/core/testing"
import { Domain } from "@cupid-lab/core"
import { Effect, Either } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Dataset from "../src/Dataset.js"

import { categories } from "../src/internal/synthetic/factors.js"
import { axes } from "../src/internal/synthetic/preferences.js"
import * as Prng from "../src/internal/synthetic/prng.js"
import { planPositions } from "../src/internal/synthetic/world.js"
import * as Synthetic from "../src/Synthetic.js"

/** The structural tests below pin the easy generator (CUPID's exact template); hard mode has its own block. */
const options = (o: Partial<Synthetic.Options>): Synthetic.Options => ({
  ...Synthetic.defaults,
  difficulty: "easy",
  ...o
})
const generate = (o: Partial<Synthetic.Options>) => [...Synthetic.generate(options(o))]
const bytes = (o: Partial<Synthetic.Options>) =>
  generate(o)
    .map((r) => JSON.stringify(r))
    .join("\n")

const labels = (row: Domain.CupidRow) => Domain.fromRow(row).gold.sessions.map((s) => s.label)
const countOf = (xs: ReadonlyArray<string>, x: string) => xs.filter((y) => y === x).length
const positions = (row: Domain.CupidRow, label: Domain.RelevanceLabel) =>
  labels(row).flatMap((l, i) => (l === label ? [i + 1] : []))
const byPersona = (rows: ReadonlyArray<Domain.CupidRow>) => {
  const out = new Map<string, Partial<Record<Domain.CupidType, Domain.CupidRow>>>()
  for (const r of rows) out.set(r.persona_id, { ...out.get(r.persona_id), [r.instance_type]: r })
  return [...out.values()] as Array<Record<Domain.CupidType, Domain.CupidRow>>
}

describe("Synthetic: determinism", () => {
  NodeTest.it("same options give the same bytes; another seed gives other text", () => {
    expect(bytes({ personas: 5, seed: 3 })).toBe(bytes({ personas: 5, seed: 3 }))
    expect(bytes({ personas: 5, seed: 3 })).not.toBe(bytes({ personas: 5, seed: 4 }))
  })

  NodeTest.it("a persona does not depend on how many personas are generated or which types are requested", () => {
    const five = generate({ personas: 5, seed: 9 })
    expect(generate({ personas: 2, seed: 9 })).toEqual(five.slice(0, 6))
    expect(generate({ personas: 5, seed: 9, types: ["changing"] })).toEqual(
      five.filter((r) => r.instance_type === "changing")
    )
  })

  NodeTest.it("rows are persona-major in type order with stable ids", () => {
    const rows = generate({ personas: 2, seed: 3 })
    expect(rows.map((r) => `${r.persona_id}:${r.instance_type}`)).toEqual([
      "synthetic-s3-p00001:consistent",
      "synthetic-s3-p00001:contrastive",
      "synthetic-s3-p00001:changing",
      "synthetic-s3-p00002:consistent",
      "synthetic-s3-p00002:contrastive",
      "synthetic-s3-p00002:changing"
    ])
  })

  NodeTest.it("the PRNG is a pure function of its keys", () => {
    const a = Prng.make(1, 2)
    const b = Prng.make(1, 2)
    const xs = Array.from({ length: 50 }, () => a.next())
    expect(Array.from({ length: 50 }, () => b.next())).toEqual(xs)
    expect(xs.every((x) => x >= 0 && x < 1)).toBe(true)
    expect(Prng.make(1, 3).next()).not.toBe(xs[0])
    const picked = Prng.make(4).sample([1, 2, 3, 4, 5], 5)
    expect([...picked].sort()).toEqual([1, 2, 3, 4, 5])
  })
})

describe("Synthetic: CUPID's shape at 8 sessions", () => {
  const rows = generate({ personas: 30, seed: 1 })

  NodeTest.it("label counts per type: relevant 2; stale 2 in changing; the rest other", () => {
    for (const row of rows) {
      const l = labels(row)
      expect(l.length).toBe(8)
      expect(countOf(l, "relevant")).toBe(2)
      expect(countOf(l, "stale")).toBe(row.instance_type === "changing" ? 2 : 0)
    }
  })

  NodeTest.it("contrastive instances hold exactly two sessions of one factor that consistent ones lack (B)", () => {
    for (const p of byPersona(rows)) {
      const consistentFactors = new Set(p.consistent.prior_interactions.map((s) => s.context_factor))
      const extra = p.contrastive.prior_interactions.filter((s) => !consistentFactors.has(s.context_factor))
      expect(extra.length).toBe(2)
      expect(new Set(extra.map((s) => s.context_factor)).size).toBe(1)
      expect(extra[0]!.context_factor).not.toBe(p.contrastive.current_context_factor)
      // B's preference conflicts with A's: never the same text.
      expect(extra[0]!.contextual_preference).not.toBe(p.contrastive.current_contextual_preference)
    }
  })

  NodeTest.it(
    "a persona's three instances come from one 13-session pool: 12 distinct prior sessions plus the request",
    () => {
      for (const p of byPersona(rows)) {
        const distinct = new Set(
          Domain.cupidTypes.flatMap((t) => p[t].prior_interactions.map((s) => JSON.stringify(s.dialogue)))
        )
        expect(distinct.size).toBe(12)
        expect(p.consistent.current_request).toBe(p.changing.current_request)
        expect(p.consistent.current_context_factor).toBe(p.changing.current_context_factor)
        expect(p.consistent.current_contextual_preference).toBe(p.contrastive.current_contextual_preference)
        expect(p.changing.current_contextual_preference).not.toBe(p.consistent.current_contextual_preference)
        // The changing instance's stale sessions are the consistent instance's relevant ones.
        const staleText = p.changing.prior_interactions
          .filter((_, i) => labels(p.changing)[i] === "stale")
          .map((s) => JSON.stringify(s))
        const relevantText = p.consistent.prior_interactions
          .filter((_, i) => labels(p.consistent)[i] === "relevant")
          .map((s) => JSON.stringify(s))
        expect(staleText).toEqual(relevantText)
      }
    }
  )

  NodeTest.it("in changing histories the stale sessions precede the relevant ones", () => {
    for (const row of rows.filter((r) => r.instance_type === "changing")) {
      expect(Math.max(...positions(row, "stale"))).toBeLessThan(Math.min(...positions(row, "relevant")))
    }
  })

  NodeTest.it("checklists have three items and the current preference mentions three requirements", () => {
    for (const row of rows) {
      expect(row.current_checklist.length).toBe(3)
      expect(row.current_checklist.every((c) => c.endsWith("?"))).toBe(true)
      expect(row.current_contextual_preference.split(",").length).toBeGreaterThanOrEqual(3)
    }
  })
})

describe("Synthetic: the text does not make retrieval trivial", () => {
  const rows = generate({ personas: 20, seed: 2 })
  const nameOf = (factor: string) => factor.split(",")[0]!

  NodeTest.it("the first user message names the factor; no later turn does", () => {
    for (const row of rows) {
      for (const s of row.prior_interactions) {
        const [first, ...rest] = s.dialogue
        expect(first!.role).toBe("user")
        expect(first!.content).toContain(nameOf(s.context_factor))
        for (const m of rest) expect(m.content).not.toContain(nameOf(s.context_factor))
      }
      expect(row.current_request).toContain(nameOf(row.current_context_factor))
    }
  })

  NodeTest.it("preferences are never pasted into a dialogue; sessions end with a short user close", () => {
    const clauses = axes.flatMap((axis) => axis.map((pole) => pole.clause))
    for (const row of rows) {
      for (const s of row.prior_interactions) {
        const text = s.dialogue.map((m) => m.content).join("\n")
        expect(text).not.toContain(s.contextual_preference)
        for (const clause of clauses) expect(text, clause).not.toContain(clause)
        for (const check of row.current_checklist) expect(text, check).not.toContain(check)
        expect(s.dialogue.at(-1)!.role).toBe("user")
        expect(s.dialogue.at(-1)!.content.split(" ").length).toBeLessThanOrEqual(8)
        expect(s.dialogue.length).toBeGreaterThanOrEqual(7)
      }
    }
  })

  NodeTest.it(
    "similar-sounding factors: any two factors of one category share a content word (people share a role family)",
    () => {
      const stop = new Set(["my", "the", "a", "our", "in", "on", "of", "for", "to", "at", "with", "about", "i", "we"])
      const words = (s: string) => new Set((s.toLowerCase().match(/[a-z']+/g) ?? []).filter((w) => !stop.has(w)))
      for (const category of categories.filter((c) => c.kind !== "person")) {
        category.variants.forEach((a, i) =>
          category.variants.slice(i + 1).forEach((b) => {
            expect(
              [...words(a)].some((w) => words(b).has(w)),
              `${a} / ${b}`
            ).toBe(true)
          })
        )
      }
    }
  )

  NodeTest.it("factor B comes from factor A's category", () => {
    const categoryOf = (factor: string) =>
      categories.find((c) => c.variants.some((v) => factor === v || factor.endsWith(`, ${v}`)))!.name
    for (const p of byPersona(rows)) {
      const consistentFactors = new Set(p.consistent.prior_interactions.map((s) => s.context_factor))
      const b = p.contrastive.prior_interactions.find((s) => !consistentFactors.has(s.context_factor))!.context_factor
      expect(categoryOf(b)).toBe(categoryOf(p.contrastive.current_context_factor))
    }
  })
})

describe("Synthetic: longer histories and positions", () => {
  NodeTest.it("shares set the contrastive and stale counts: max(2, round(share x sessions))", () => {
    const rows = generate({ personas: 2, sessionsPerHistory: 100, contrastiveShare: 0.2, staleShare: 0.05, seed: 4 })
    for (const row of rows) {
      const l = labels(row)
      expect(l.length).toBe(100)
      expect(countOf(l, "relevant")).toBe(2)
      expect(countOf(l, "stale")).toBe(row.instance_type === "changing" ? 5 : 0)
    }
    expect(Synthetic.counts(options({ sessionsPerHistory: 100, contrastiveShare: 0.2, staleShare: 0.05 }))).toEqual({
      relevant: [2, 2],
      contrastive: 20,
      stale: 5
    })
    expect(Synthetic.counts(options({ sessionsPerHistory: 8 }))).toEqual({ relevant: [2, 2], contrastive: 2, stale: 2 })
    expect(Synthetic.counts({ ...Synthetic.defaults, sessionsPerHistory: 8 })).toEqual({
      relevant: [1, 3],
      contrastive: 2,
      stale: 2
    })
    for (const p of byPersona(rows)) {
      const consistentFactors = new Set(p.consistent.prior_interactions.map((s) => s.context_factor))
      expect(p.contrastive.prior_interactions.filter((s) => !consistentFactors.has(s.context_factor)).length).toBe(20)
    }
  })

  NodeTest.it("relevant positions: recent = the last two, early = first third, late = last third", () => {
    for (const row of generate({ personas: 5, sessionsPerHistory: 30, relevantPosition: "recent" })) {
      expect(positions(row, "relevant")).toEqual([29, 30])
    }
    for (const row of generate({ personas: 5, sessionsPerHistory: 30, relevantPosition: "early" })) {
      expect(Math.max(...positions(row, "relevant"))).toBeLessThanOrEqual(10)
    }
    for (const row of generate({ personas: 5, sessionsPerHistory: 30, relevantPosition: "late" })) {
      expect(Math.min(...positions(row, "relevant"))).toBeGreaterThanOrEqual(21)
    }
  })

  NodeTest.it("planPositions: hand-checked windows", () => {
    // early, 8 sessions, 2 stale: the first third (slots 0-2) leaves no room after the stale ones,
    // so the window moves to slots 2-3 and the stale sessions must take slots 0 and 1.
    expect(planPositions(Prng.make(1), 8, "early", 2, 0)).toEqual({ relevant: [2, 3], stale: [0, 1], contrastive: [] })
    const recent = planPositions(Prng.make(2), 8, "recent", 0, 2)
    expect(recent.relevant).toEqual([6, 7])
    expect(recent.contrastive.every((i) => i < 6)).toBe(true)
    const late = planPositions(Prng.make(3), 9, "late", 0, 0)
    expect(late.relevant.every((i) => i >= 6)).toBe(true)
    const spread = planPositions(Prng.make(4), 8, "spread", 0, 6)
    expect([...spread.relevant, ...spread.contrastive].sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7])
  })

  NodeTest.it("10,000-session histories work", () => {
    const [row] = generate({ personas: 1, sessionsPerHistory: 10_000, types: ["changing"], seed: 8 })
    const l = labels(row!)
    expect(l.length).toBe(10_000)
    expect(countOf(l, "relevant")).toBe(2)
    expect(countOf(l, "stale")).toBe(1_000)
    // At most 60 other factors, each repeated across the history.
    expect(new Set(row!.prior_interactions.map((s) => s.context_factor)).size).toBe(61)
  })

  NodeTest.it("out-of-range options are rejected", () => {
    expect(() => generate({ sessionsPerHistory: 7 })).toThrow(
      "Synthetic.generate: sessionsPerHistory: expected an integer from 8 to 10000"
    )
    expect(() => generate({ contrastiveShare: 0.9 })).toThrow(
      "Synthetic.generate: contrastiveShare: expected a number from 0 to 0.75"
    )
  })
})

describe("Synthetic: specs and files", () => {
  NodeTest.it("parseSpec reads every key; toSpec writes them all", () => {
    const parsed = Synthetic.parseSpec(
      "synthetic:personas=3,sessions=20,seed=5,position=late,contrastive=0.2,stale=0.3,types=changing+consistent"
    )
    expect(Either.getOrThrow(parsed)).toEqual({
      personas: 3,
      sessionsPerHistory: 20,
      seed: 5,
      relevantPosition: "late",
      contrastiveShare: 0.2,
      staleShare: 0.3,
      types: ["changing", "consistent"],
      difficulty: "hard"
    })
    expect(Synthetic.toSpec(Either.getOrThrow(parsed))).toBe(
      "synthetic:personas=3,sessions=20,seed=5,position=late,contrastive=0.2,stale=0.3,types=consistent+changing,difficulty=hard"
    )
    const knobs = Either.getOrThrow(
      Synthetic.parseSpec(
        "synthetic:difficulty=easy,mentions=varied,topic=0.5,feedback=composed,relevant=1-2,similarity=0.5"
      )
    )
    expect(Synthetic.knobs(knobs)).toEqual({
      mentions: "varied",
      topicShare: 0.5,
      feedback: "composed",
      relevant: [1, 2],
      similarity: 0.5
    })
    expect(Synthetic.toSpec(knobs)).toBe(
      "synthetic:personas=10,sessions=8,seed=0,position=spread,contrastive=0.1,stale=0.1,types=consistent+contrastive+changing,difficulty=easy,mentions=varied,topic=0.5,feedback=composed,relevant=1-2,similarity=0.5"
    )
    expect(Either.getOrThrow(Synthetic.parseSpec("synthetic:relevant=3")).relevant).toEqual([3, 3])
    const bad = Synthetic.parseSpec("synthetic:relevant=3-1")
    expect(Either.isLeft(bad) && bad.left.message).toMatch(/relevant: expected a range lo-hi with lo <= hi/)
    expect(Either.getOrThrow(Synthetic.parseSpec("synthetic"))).toEqual(Synthetic.defaults)
    expect(Either.isLeft(Synthetic.parseSpec("synthetic:seed"))).toBe(true)
  })

  NodeTest.it.effect("writeJsonl writes one row per line, and the file loads back to the same instances", () =>
    Effect.gen(function* () {
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-synthetic-"))
      const file = path.join(dir, "syn.jsonl")
      const o = options({ personas: 3, seed: 6 })
      expect(yield* Synthetic.writeJsonl(file, Synthetic.generate(o))).toBe(9)
      expect(fs.readFileSync(file, "utf8")).toBe(bytes({ personas: 3, seed: 6 }) + "\n")
      expect(fs.readdirSync(dir)).toEqual(["syn.jsonl"])
      const loaded = yield* Dataset.loadAll(file)
      expect(loaded.instances).toEqual(generate({ personas: 3, seed: 6 }).map(Domain.fromRow))
      fs.rmSync(dir, { recursive: true, force: true })
    })
  )

  NodeTest.it.effect("writeJsonl reports an unwritable path", () =>
    Effect.gen(function* () {
      const result = yield* Effect.either(Synthetic.writeJsonl("/nonexistent-dir/x.jsonl", []))
      expect(Either.isLeft(result) && result.left.message).toMatch(
        /^\/nonexistent-dir\/x\.jsonl: cannot write \(ENOENT/
      )
    })
  )
})

describe("Synthetic: difficulty", () => {
  NodeTest.it("easy is the version-1 text, byte for byte", () => {
    const sha = (o: Partial<Synthetic.Options>) => createHash("sha256").update(bytes(o)).digest("hex")
    // Digests of the version-1 generator's output for these options.
    expect(sha({ personas: 20, seed: 3 })).toBe("95dc1734b50774ecf26a389669d8dcd469d3fc98fe60232ded2ae9395756ce41")
    expect(sha({ personas: 3, seed: 9, sessionsPerHistory: 60, relevantPosition: "late" })).toBe(
      "65585e236141ab0406240eead31101b0649847e21f6689ff09bbaeeb114655ab"
    )
  })

  const hard = (o: Partial<Synthetic.Options>) => [...Synthetic.generate({ ...Synthetic.defaults, ...o })]
  const rows = hard({ personas: 40, seed: 21 })

  NodeTest.it("hard is the default, and its relevant counts vary from 1 to 3", () => {
    expect(Synthetic.defaults.difficulty).toBe("hard")
    const counts = rows.map((r) => countOf(labels(r), "relevant"))
    expect(new Set(counts)).toEqual(new Set([1, 2, 3]))
    for (const r of rows) expect(labels(r).length).toBe(8)
    for (const r of rows.filter((x) => x.instance_type === "changing")) {
      expect(Math.max(...positions(r, "stale"))).toBeLessThan(Math.min(...positions(r, "relevant")))
    }
  })

  NodeTest.it("mentions vary: the exact label opens well under all of A's sessions", () => {
    let exact = 0,
      total = 0
    const forms = new Set<string>()
    for (const r of rows.filter((x) => x.instance_type === "changing")) {
      for (const s of r.prior_interactions.filter((p) => p.context_factor === r.current_context_factor)) {
        total++
        const first = s.dialogue[0]!.content
        const label = r.current_context_factor.split(",")[0]!
        if (first.includes(label)) exact++
        forms.add(first)
      }
    }
    expect(exact / total).toBeLessThan(0.6)
    expect(exact).toBeGreaterThan(0)
  })

  NodeTest.it("a topic phrase recurs across factors and in the request", () => {
    const all = hard({ personas: 10, seed: 2, topicShare: 1 })
    for (const r of all) {
      const topic = /the [A-Z][\w-]+(?: [\w-]+)*/.exec(r.current_request)
      expect(topic, r.current_request).not.toBeNull()
    }
    const withTopic = (r: Domain.CupidRow) => {
      const phrase = [
        "Hollis",
        "Dalton",
        "harvest",
        "open house",
        "trout",
        "survey",
        "Marlow",
        "member drive",
        "Kestrel",
        "Ashgrove",
        "lakeside",
        "Juniper",
        "Pemberton",
        "recital",
        "Alder Creek",
        "Saffron",
        "Norwood",
        "Beacon",
        "Tamsin",
        "Okoro",
        "Whitlow",
        "Ferris",
        "Copperline",
        "Granger"
      ].find((p) => r.current_request.includes(p))!
      return new Set(
        r.prior_interactions.filter((p) => p.dialogue[0]!.content.includes(phrase)).map((p) => p.context_factor)
      )
    }
    for (const r of all) expect(withTopic(r).size).toBeGreaterThanOrEqual(3)
  })

  NodeTest.it("feedback is composed: far fewer repeated user turns than the fixed strings", () => {
    const repeated = (rs: ReadonlyArray<Domain.CupidRow>) => {
      const seen = new Map<string, number>()
      for (const r of rs.filter((x) => x.instance_type === "consistent")) {
        for (const s of r.prior_interactions)
          for (const m of s.dialogue.slice(2).filter((x) => x.role === "user"))
            seen.set(m.content, (seen.get(m.content) ?? 0) + 1)
      }
      const turns = [...seen.values()].reduce((a, b) => a + b, 0)
      return [...seen.values()].filter((n) => n > 1).reduce((a, b) => a + b, 0) / turns
    }
    const easy = repeated(generate({ personas: 40, seed: 21 }))
    const composed = repeated(rows)
    expect(easy).toBeGreaterThan(0.5)
    expect(composed).toBeLessThan(easy / 2)
  })

  NodeTest.it("similarity 0 draws B from another category of A's kind", () => {
    const categoryOf = (label: string) =>
      categories.find((c) => c.variants.some((v) => label === v || label.endsWith(`, ${v}`)))
    for (const p of byPersona(hard({ personas: 12, seed: 5, similarity: 0 }))) {
      const consistentFactors = new Set(p.consistent.prior_interactions.map((s) => s.context_factor))
      const b = p.contrastive.prior_interactions.find(
        (s) => !consistentFactors.has(s.context_factor) && s.context_factor !== p.contrastive.current_context_factor
      )!.context_factor
      const a = categoryOf(p.contrastive.current_context_factor)!
      expect(categoryOf(b)!.kind).toBe(a.kind)
      expect(categoryOf(b)!.name).not.toBe(a.name)
    }
  })
})
