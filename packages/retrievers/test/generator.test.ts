import { addProjectConfiguration, type Tree } from "@nx/devkit"
import { createTreeWithEmptyWorkspace } from "@nx/devkit/testing"
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { createRequire } from "node:module"

const require = createRequire(import.meta.url)
const generator = require("../generators/retriever/generator.cjs") as (tree: Tree, options: Record<string, unknown>) => Promise<void>

const builtins = `/**
 * The plugins this package ships.
 */
import type { Plugin } from "@cupid-lab/core"
import * as Bm25 from "./Bm25.js"

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = [
  Bm25.plugin
]
`

const workspace = (list = builtins): Tree => {
  const tree = createTreeWithEmptyWorkspace()
  addProjectConfiguration(tree, "retrievers", { root: "packages/retrievers", sourceRoot: "packages/retrievers/src", projectType: "library" })
  tree.write("packages/retrievers/src/Builtins.ts", list)
  tree.write("packages/retrievers/src/index.ts", 'export * as Bm25 from "./Bm25.js"\n')
  return tree
}

describe("retriever generator", () => {
  it("creates the plugin source, its conformance test and its registration", async () => {
    const tree = workspace()
    await generator(tree, { name: "title-match", description: "Sessions whose first message shares the request's title words." })
    const source = tree.read("packages/retrievers/src/TitleMatch.ts", "utf-8")!
    expect(source).toContain(`name: "title-match"`)
    expect(source).toContain(`description: "Sessions whose first message shares the request's title words."`)
    expect(source).toContain("export const options = Schema.Struct({")
    expect(source).not.toContain("<%")
    const test = tree.read("packages/retrievers/test/title-match.test.ts", "utf-8")!
    expect(test).toContain(`import { plugin, score } from "../src/TitleMatch.js"`)
    expect(test).toContain("suite({ plugin })")
    expect(tree.read("packages/retrievers/src/Builtins.ts", "utf-8")).toBe(`/**
 * The plugins this package ships.
 */
import type { Plugin } from "@cupid-lab/core"
import * as Bm25 from "./Bm25.js"
import * as TitleMatch from "./TitleMatch.js"

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = [
  Bm25.plugin,
  TitleMatch.plugin
]
`)
    expect(tree.read("packages/retrievers/src/index.ts", "utf-8")).toBe(
      'export * as Bm25 from "./Bm25.js"\nexport * as TitleMatch from "./TitleMatch.js"\n'
    )
  })

  it("registers into an empty list", async () => {
    const tree = workspace(builtins.replace("[\n  Bm25.plugin\n]", "[]"))
    await generator(tree, { name: "first-one" })
    expect(tree.read("packages/retrievers/src/Builtins.ts", "utf-8")).toContain("= [\n  FirstOne.plugin\n]")
  })

  it("refuses bad names and existing plugins", async () => {
    await expect(generator(workspace(), { name: "MyRetriever" })).rejects.toThrow("not a kebab-case plugin name")
    const tree = workspace()
    await generator(tree, { name: "twice" })
    await expect(generator(tree, { name: "twice" })).rejects.toThrow("Twice.ts already exists")
  })

  it("is declared for Nx: generators.json, schema.json and the package's generators field", () => {
    const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
    expect(pkg.generators).toBe("./generators.json")
    const collection = JSON.parse(fs.readFileSync(new URL("../generators.json", import.meta.url), "utf8"))
    expect(collection.generators.retriever.factory).toBe("./generators/retriever/generator.cjs")
    const schema = JSON.parse(fs.readFileSync(new URL("../generators/retriever/schema.json", import.meta.url), "utf8"))
    expect(schema.properties.name.$default).toEqual({ $source: "argv", index: 0 })
    expect(schema.required).toEqual(["name"])
  })
})
