import { Plugin } from "@cupid-lab/core"
import { Bm25 } from "@cupid-lab/retrievers"
import { Config, Grid } from "@cupid-lab/runner"

import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Fiber } from "effect"

import { testPlugins } from "./support.js"

const registry = Plugin.makeRegistry(testPlugins)
const grid = (text: string) => Effect.flatMap(Config.parse(text, "cfg.yaml", {}), (c) => Grid.expand(c, registry))
const summary = (g: Grid.Grid) => g.cells.map((c) => [c.name, c.params.retriever, c.params.inferrer])

describe("grid expansion", () => {
  it.effect("without a sweep the base pipeline is the one cell, with defaults filled in", () =>
    Effect.gen(function* () {
      const g = yield* grid("pipeline: { retriever: latest, inferrer: echo }\n")
      expect(g.cells).toHaveLength(1)
      expect(g.cells[0]!.name).toBe("latest")
      expect(g.cells[0]!.params).toEqual({
        retriever: { use: "latest", k: 2, representation: "dialogue", tags: [] },
        summarizer: null,
        inferrer: { use: "echo" },
        generator: null
      })
      expect(g.baseline.id).toBe(g.cells[0]!.id)
    })
  )

  it.effect("axes multiply in file order; list values inside an alternative expand too", () =>
    Effect.gen(function* () {
      const g = yield* grid(
        [
          "pipeline: { inferrer: echo }",
          "sweep:",
          "  retriever:",
          "    - first",
          "    - { use: latest, k: [1, 3], representation: [dialogue] }",
          "  inferrer: [echo, null]"
        ].join("\n")
      )
      expect(g.cells.map((c) => c.name)).toEqual([
        "first + echo",
        "first",
        "latest(k=1) + echo",
        "latest(k=1)",
        "latest(k=3) + echo",
        "latest(k=3)"
      ])
      expect(g.cells.map((c) => c.params.inferrer?.use ?? null)).toEqual(["echo", null, "echo", null, "echo", null])
      expect(g.cells.map((c) => c.params.retriever?.k ?? null)).toEqual([1, 1, 1, 1, 3, 3])
    })
  )

  it.effect("a dotted option axis sets one option; [[a, b]] is a literal list", () =>
    Effect.gen(function* () {
      const g = yield* grid(
        ["pipeline: { retriever: latest }", "sweep:", "  retriever.k: [1, 2]", "  retriever.tags: [[x, y], [z]]"].join(
          "\n"
        )
      )
      expect(g.cells.map((c) => [c.params.retriever?.k, c.params.retriever?.tags])).toEqual([
        [1, ["x", "y"]],
        [1, ["z"]],
        [2, ["x", "y"]],
        [2, ["z"]]
      ])
      expect(g.cells.map((c) => c.name)).toEqual([
        `latest(k=1,tags=["x","y"])`,
        `latest(k=1,tags=["z"])`,
        `latest(k=2,tags=["x","y"])`,
        `latest(k=2,tags=["z"])`
      ])
      const literal = yield* grid("sweep:\n  retriever:\n    - { use: latest, tags: [[a, b]] }\n")
      expect(literal.cells.map((c) => c.params.retriever?.tags)).toEqual([["a", "b"]])
    })
  )

  it.effect("null removes a stage", () =>
    Effect.gen(function* () {
      const g = yield* grid("pipeline: { retriever: first, inferrer: echo }\nsweep:\n  retriever: [null, first]\n")
      expect(g.cells.map((c) => [c.name, c.params.retriever?.use ?? null])).toEqual([
        ["no retriever", null],
        ["first", "first"]
      ])
      expect(g.cells[0]!.stages.retriever).toBeUndefined()
    })
  )

  it.effect("explicit cells merge over the pipeline and follow the sweep's cells", () =>
    Effect.gen(function* () {
      const g = yield* grid(
        [
          "pipeline: { retriever: first, inferrer: echo }",
          "sweep:",
          "  retriever: [first, latest]",
          "cells:",
          "  - { name: oracle, retriever: gold }",
          "  - { retriever: { use: latest, k: 4 }, inferrer: null }",
          "  - { name: also-first, retriever: first }"
        ].join("\n")
      )
      expect(summary(g)).toEqual([
        // the third explicit cell is the first sweep cell: one cell, with the explicit name
        ["also-first", { use: "first", k: 1 }, { use: "echo" }],
        ["latest(k=2) + echo", { use: "latest", k: 2, representation: "dialogue", tags: [] }, { use: "echo" }],
        ["oracle", { use: "gold" }, { use: "echo" }],
        ["latest(k=4)", { use: "latest", k: 4, representation: "dialogue", tags: [] }, null]
      ])
      expect(g.cells.map((c) => c.index)).toEqual([0, 1, 2, 3])
    })
  )

  it.effect("with cells and no sweep, the grid is the cells alone", () =>
    Effect.gen(function* () {
      const g = yield* grid(
        "pipeline: { inferrer: echo }\ncells:\n  - { retriever: first }\n  - { retriever: latest }\n"
      )
      expect(g.cells.map((c) => c.name)).toEqual(["first", "latest"])
    })
  )

  it.effect("the baseline is the named cell, else the `all` retriever's, else the first", () =>
    Effect.gen(function* () {
      expect((yield* grid("sweep: { retriever: [first, latest] }\nreport: { baseline: latest }\n")).baseline.name).toBe(
        "latest"
      )
      expect((yield* grid("sweep: { retriever: [first, latest] }\n")).baseline.name).toBe("first")
    })
  )
})

describe("cell ids", () => {
  it.effect("do not depend on key order or on spelling out defaults", () =>
    Effect.gen(function* () {
      const a = yield* grid("pipeline: { retriever: latest, inferrer: echo }\nscorers: [hits]\n")
      const b = yield* grid(
        "scorers: [{ use: hits }]\npipeline:\n  inferrer: { use: echo }\n  retriever: { representation: dialogue, k: 2, use: latest }\n"
      )
      expect(a.cells[0]!.id).toBe(b.cells[0]!.id)
      expect(a.cells[0]!.id).toMatch(/^[0-9a-f]{16}$/)
    })
  )

  it.effect("change with any parameter and with the scorers", () =>
    Effect.gen(function* () {
      const base = (yield* grid("pipeline: { retriever: latest }\nscorers: [hits]\n")).cells[0]!.id
      const k = (yield* grid("pipeline: { retriever: { use: latest, k: 3 } }\nscorers: [hits]\n")).cells[0]!.id
      const noScorer = (yield* grid("pipeline: { retriever: latest }\n")).cells[0]!.id
      const inferrer = (yield* grid("pipeline: { retriever: latest, inferrer: echo }\nscorers: [hits]\n")).cells[0]!.id
      expect(new Set([base, k, noScorer, inferrer]).size).toBe(4)
    })
  )

  it.effect("are the same for equal cells written differently, which then count once", () =>
    Effect.gen(function* () {
      const g = yield* grid(
        "sweep:\n  retriever:\n    - latest\n    - { use: latest, k: 2 }\n    - { use: latest, k: 3 }\n"
      )
      expect(g.cells.map((c) => c.name)).toEqual(["latest(k=2)", "latest(k=3)"])
    })
  )
})

describe("names", () => {
  it("show only the stages and options that vary", () => {
    const p = (retriever: Record<string, unknown> | null, inferrer: Record<string, unknown> | null = { use: "echo" }) =>
      ({ retriever, summarizer: null, inferrer, generator: null }) as Parameters<typeof Grid.names>[0][number]
    expect(
      Grid.names([
        p({ use: "cf", strategy: "offline", policy: "a", m: 2 }),
        p({ use: "cf", strategy: "offline", policy: "b", m: 2 }),
        p({ use: "bm25", k: 2 }),
        p({ use: "bm25", k: 2 }, { use: "llm", model: "x" })
      ])
    ).toEqual(["cf(policy=a) + echo", "cf(policy=b) + echo", "bm25 + echo", "bm25 + llm"])
    expect(Grid.names([p({ use: "bm25", k: 2 })])).toEqual(["bm25"])
  })
})

describe("history transforms in the grid", () => {
  it.effect(
    "transform axes multiply the cells; names show the parts that vary; ids keep cells without one stable",
    () =>
      Effect.gen(function* () {
        const plain = yield* grid("pipeline: { retriever: latest }\n")
        const g = yield* grid(
          [
            "pipeline: { retriever: latest }",
            "sweep:",
            "  retriever: [latest, first]",
            "  transform.position: [early, late]",
            "  transform.pad: [0, 24]"
          ].join("\n")
        )
        expect(g.cells.map((c) => c.name)).toEqual([
          "latest @ pad=0,position=early",
          "latest @ pad=24,position=early",
          "latest @ pad=0,position=late",
          "latest @ pad=24,position=late",
          "first @ pad=0,position=early",
          "first @ pad=24,position=early",
          "first @ pad=0,position=late",
          "first @ pad=24,position=late"
        ])
        expect(g.cells[1]!.transform).toEqual({ pad: 24, position: "early" })
        // pad 0 is normalized away; a transform-free cell has no transform and the id it always had.
        expect(g.cells[0]!.transform).toEqual({ position: "early" })
        expect(Grid.identityParams(g.cells[1]!)).toMatchObject({ transform: { pad: 24, position: "early" } })
        const none = yield* grid("pipeline: { retriever: latest }\ndata: { transform: { pad: 0 } }\n")
        expect(none.cells[0]!.transform).toBeNull()
        expect(none.cells[0]!.id).toBe(plain.cells[0]!.id)
        expect(new Set(g.cells.map((c) => c.id)).size).toBe(8)
      })
  )

  it.effect("data.transform is the base; a whole-transform axis and an explicit cell replace it", () =>
    Effect.gen(function* () {
      const g = yield* grid(
        [
          "data: { transform: { drop: stale } }",
          "pipeline: { retriever: latest }",
          "sweep:",
          "  transform: [{}, { pad: 8 }]",
          "cells:",
          "  - { name: moved, transform: { position: 3 } }",
          "  - { name: inherits }"
        ].join("\n")
      )
      expect(g.cells.map((c) => [c.name, c.transform])).toEqual([
        ["drop=none,pad=0,position=none", null],
        ["drop=none,pad=8,position=none", { pad: 8 }],
        ["moved", { position: 3 }],
        ["inherits", { drop: ["stale"] }]
      ])
      expect(g.cells.find((c) => c.name === "inherits")!.transform).toEqual({ drop: ["stale"] })
      expect(g.cells.find((c) => c.name === "moved")!.transform).toEqual({ position: 3 })
    })
  )

  it.effect("a bad transform names where it was written and what is valid", () =>
    Effect.gen(function* () {
      const bad = (text: string) => Effect.flip(grid(text)).pipe(Effect.map((e) => e.message))
      expect(yield* bad("pipeline: { retriever: latest }\nsweep:\n  transform.pad: [-1]\n")).toMatch(
        /cfg\.yaml: sweep\.transform\.pad\[0\]: expected a whole number of sessions, 0 to 100000/
      )
      expect(yield* bad("pipeline: { retriever: latest }\nsweep:\n  transform.position: [first]\n")).toMatch(
        /sweep\.transform\.position\[0\]: .*expected early, middle, late or a 1-based position|sweep\.transform\.position\[0\].*"first"/
      )
      expect(yield* bad("pipeline: { retriever: latest }\nsweep:\n  transform: [{ padd: 2 }]\n")).toMatch(
        /sweep\.transform\[0\]: unknown key "padd" \(did you mean "pad"\?\); valid keys: drop, pad, position/
      )
      expect(yield* bad("pipeline: { retriever: latest }\nsweep:\n  transform.size: [2]\n")).toMatch(
        /sweep\.transform\.size: unknown transform axis; use transform or transform\.<part> with part one of drop, pad, position/
      )
      expect(yield* bad("pipeline: { retriever: latest }\ndata: { transform: { pad: x } }\n")).toMatch(
        /cfg\.yaml: data\.transform\.pad/
      )
    })
  )
})

describe("selectors in the grid", () => {
  it.effect("a select axis crosses rankers with selectors; names show the selector; params keep it", () =>
    Effect.gen(function* () {
      const g = yield* grid(
        [
          "pipeline: { retriever: latest }",
          "sweep:",
          "  retriever: [latest, first]",
          "  retriever.select: [{ top: 1 }, { recent: 2 }]",
          "cells:",
          "  - { name: plain, retriever: latest }"
        ].join("\n")
      )
      expect(g.cells.map((c) => c.name)).toEqual([
        "latest(top=1)",
        "latest(recent=2,cut=0.6)",
        "first(top=1)",
        "first(recent=2,cut=0.6)",
        "plain"
      ])
      expect(g.cells[1]!.params.retriever).toMatchObject({ use: "latest", select: { recent: 2, cut: 0.6 } })
      expect(g.cells[1]!.stages.retriever!.select).toEqual({ recent: 2, cut: 0.6 })
      expect(g.cells[4]!.stages.retriever!.select).toBeUndefined()
    })
  )

  it.effect("a bad selector names where it was written and what is valid; only retrievers take one", () =>
    Effect.gen(function* () {
      const bad = (text: string) => Effect.flip(grid(text)).pipe(Effect.map((e) => e.message))
      expect(yield* bad("pipeline: { retriever: { use: latest, select: { bottom: 2 } } }\n")).toMatch(
        /pipeline\.retriever\.select: expected one of \{ top: k \}/
      )
      expect(yield* bad("pipeline: { retriever: { use: latest, select: { top: 0 } } }\n")).toMatch(
        /pipeline\.retriever\.select\.top: expected a whole number >= 1/
      )
      expect(yield* bad("pipeline: { inferrer: { use: echo, select: { top: 1 } } }\n")).toMatch(
        /`select` \(a selector\) is only for retrievers/
      )
    })
  )
})

describe("rankers: k is short for select: { top: k }", () => {
  const withRankers = Plugin.makeRegistry([...testPlugins, Bm25.plugin])
  const rankerGrid = (text: string) =>
    Effect.flatMap(Config.parse(text, "cfg.yaml", {}), (c) => Grid.expand(c, withRankers))

  it.effect("k becomes a top-k selector; without one the ranker's default cut applies", () =>
    Effect.gen(function* () {
      const g = yield* rankerGrid(
        "pipeline: { retriever: bm25 }\nsweep:\n  retriever.k: [2, 4]\ncells:\n  - { name: plain, retriever: bm25 }\n"
      )
      // The explicit cell without k has the default cut ({ top: 2 }): the same cell as k: 2, so it names it.
      expect(g.cells.map((c) => c.name)).toEqual(["plain", "bm25(top=4)"])
      expect(g.cells[1]!.params.retriever).toMatchObject({ use: "bm25", select: { top: 4 } })
      expect(g.cells[1]!.params.retriever).not.toHaveProperty("k")
      expect(g.cells[0]!.id).toBe((yield* rankerGrid("pipeline: { retriever: bm25 }\n")).cells[0]!.id)
    })
  )

  it.effect("k and select together, or a bad k, are errors at the key", () =>
    Effect.gen(function* () {
      const bad = (text: string) => Effect.flip(rankerGrid(text)).pipe(Effect.map((e) => e.message))
      expect(yield* bad("pipeline: { retriever: { use: bm25, k: 2, select: { top: 3 } } }\n")).toMatch(
        /pipeline\.retriever\.k: give either k \(shorthand for select: \{ top: k \}\) or select, not both/
      )
      expect(yield* bad("pipeline: { retriever: { use: bm25, k: 0 } }\n")).toMatch(
        /pipeline\.retriever\.k: k must be a whole number >= 1/
      )
    })
  )
})

describe("the grid's size", () => {
  const parse = (text: string) => Config.parse(text, "cfg.yaml", {})
  const values = (n: number, from = 1) => `[${Array.from({ length: n }, (_, i) => i + from).join(", ")}]`
  /** 40 x 40 x 40 x 40 = 2,560,000 cells. */
  const huge = (extra = "") =>
    [
      "pipeline: { retriever: latest, inferrer: echo }",
      "sweep:",
      `  retriever.k: ${values(40)}`,
      `  retriever.tags: [${Array.from({ length: 40 }, (_, i) => `[t${i}]`).join(", ")}]`,
      `  transform.pad: ${values(40, 8)}`,
      `  inferrer: [${Array.from({ length: 40 }, () => "echo").join(", ")}]`,
      extra
    ].join("\n")

  it.effect("is counted from the axes without making the cells, and equals the cells made", () =>
    Effect.gen(function* () {
      const config = yield* parse(
        [
          "pipeline: { retriever: latest, inferrer: echo }",
          "sweep:",
          "  retriever:",
          "    - first",
          "    - { use: [latest, first], k: [1, 3, 5], tags: [[a], [b]] }",
          "    - { use: latest, k: [2, 4] }",
          "  retriever.k: [1, { x: [1, 2] }, [7, 8]]",
          "  transform.pad: [0, 16]",
          "  inferrer: [echo, null]",
          "cells:",
          "  - { retriever: gold }"
        ].join("\n")
      )
      const size = Grid.size(config)
      // retriever: 1 + 2 * 3 * 2 + 2 = 15; retriever.k: 1 + 2 + 1 = 4; pad 2; inferrer 2; one explicit cell
      expect(size.axes).toEqual([
        { key: "retriever", alternatives: 15 },
        { key: "retriever.k", alternatives: 4 },
        { key: "transform.pad", alternatives: 2 },
        { key: "inferrer", alternatives: 2 }
      ])
      expect(size.cells).toBe(15 * 4 * 2 * 2 + 1)
      const made = [...Grid.rawCells(config)]
      expect(made.filter((c) => c instanceof Error)).toEqual([])
      expect(made.length).toBe(size.cells)
      expect(Grid.describeSize(size)).toBe(
        "241 cells (sweep.retriever 15 x sweep.retriever.k 4 x sweep.transform.pad 2 x sweep.inferrer 2 + 1 explicit)"
      )
    })
  )

  it.effect("over maxCells, the grid is refused at once with its size, the limit and how to raise it", () =>
    Effect.gen(function* () {
      const config = yield* parse(huge())
      expect(config.maxCells).toBe(10_000)
      // Refused from the axes' sizes, before any cell is made (making 2,560,000 would not end within the test's ceiling).
      const error = yield* Effect.flip(Grid.expand(config, registry))
      expect(error.message).toBe(
        "cfg.yaml: sweep: the grid has 2,560,000 cells (sweep.retriever.k 40 x sweep.retriever.tags 40 x sweep.transform.pad 40 x sweep.inferrer 40), " +
          "more than the limit of 10,000 (maxCells); sweep fewer alternatives, or raise the limit with `maxCells: 2560000` in the config or `--max-cells 2560000` on the command line"
      )
      // The config key and the command-line override both raise (or lower) it.
      const small = "pipeline: { retriever: latest }\nsweep:\n  retriever.k: [1, 2, 3]\n"
      expect(
        (yield* Effect.flip(Effect.flatMap(parse(`${small}maxCells: 2\n`), (c) => Grid.expand(c, registry)))).reason
      ).toContain("the grid has 3 cells")
      expect(
        (yield* Effect.flatMap(parse(`${small}maxCells: 3\n`), (c) => Grid.expand(c, registry))).cells
      ).toHaveLength(3)
      const lowered = Config.withOverrides(yield* parse(small), { maxCells: 2 })
      expect((yield* Effect.flip(Grid.expand(lowered, registry))).reason).toContain(
        "more than the limit of 2 (maxCells)"
      )
    })
  )

  it.effect("maxCells is not part of the run's identity", () =>
    Effect.gen(function* () {
      const text = "pipeline: { retriever: latest }\n"
      expect(Config.hash(yield* parse(`${text}maxCells: 50000\n`))).toBe(Config.hash(yield* parse(text)))
    })
  )

  it.live("a grid expanding under a raised limit stops when interrupted", () =>
    Effect.gen(function* () {
      const config = yield* parse(huge("maxCells: 2560000"))
      const fiber = yield* Effect.fork(Grid.expand(config, registry))
      yield* Effect.sleep("300 millis")
      // The whole grid would take minutes: that the interruption returns at all, inside the test's ceiling, is the check.
      const exit = yield* Fiber.interrupt(fiber)
      expect(Exit.isInterrupted(exit)).toBe(true)
    })
  )
})
