import { describe, expect, it } from "@effect/vitest"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as Plugin from "../src/Plugin.js"
import * as Stage from "../src/Stage.js"

const inferrer = (name: string) =>
  Plugin.inferrer({
    name,
    description: "",
    options: Schema.Struct({}),
    make: () => Effect.succeed({ infer: () => Effect.succeed({ preference: name, analysis: "" }) })
  })

describe("the stage table", () => {
  it("lists the stages in pipeline order, with the cell stages and steps derived from it", () => {
    expect(Stage.names).toEqual(["retriever", "summarizer", "inferrer", "generator", "scorer"])
    expect(Stage.cellStages).toEqual(["retriever", "summarizer", "inferrer", "generator"])
    expect(Stage.steps).toEqual(["retrieve", "summarize", "infer", "generate", "score"])
    for (const name of Stage.names) {
      expect(Stage.info[name].name).toBe(name)
      expect(Stage.info[name].span).toBe(`stage.${Stage.info[name].step}`)
    }
    expect(Object.keys(Stage.byCellStage((s) => s))).toEqual(Stage.cellStages)
  })

  it("orders trace labels by stage, unknown labels last", () => {
    expect(["score", "other", "retrieve", "infer"].sort((a, b) => Stage.order(a) - Stage.order(b))).toEqual([
      "retrieve",
      "infer",
      "score",
      "other"
    ])
  })

  it("is what the registry holds plugins by", () =>
    Effect.gen(function* () {
      expect(Plugin.stages).toEqual([...Stage.names, "provider"])
      const registry = Plugin.makeRegistry([inferrer("b"), inferrer("a")])
      expect(registry.names("inferrer")).toEqual(["a", "b"])
      for (const stage of Plugin.stages.filter((s) => s !== "inferrer")) expect(registry.names(stage)).toEqual([])
      expect((yield* registry.get("inferrer", "a")).name).toBe("a")
      const missing = yield* Effect.flip(registry.get("generator", "a"))
      expect(missing.message).toContain("no generator plugin of this name; valid choices: none")
      expect(() => Plugin.makeRegistry([inferrer("a"), inferrer("a")])).toThrow(`two inferrer plugins are named "a"`)
    }).pipe(Effect.runPromise))

  it("is the table docs/stages.md shows", () => {
    const doc = fs.readFileSync(new URL("../../../docs/stages.md", import.meta.url), "utf8")
    const rows = Stage.table.map(
      (s) => `| \`${s.name}\` | \`${s.step}\` | ${s.description} | ${s.consumes} | ${s.produces} |`
    )
    expect(doc).toContain(
      ["| stage | step | what it does | consumes | produces |", "|---|---|---|---|---|", ...rows].join("\n")
    )
  })
})
