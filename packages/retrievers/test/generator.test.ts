import { Subprocess } from "@cupid-lab/core/testing"
import { addProjectConfiguration, type Tree } from "@nx/devkit"
import { createTreeWithEmptyWorkspace } from "@nx/devkit/testing"
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import { format } from "../generators/retriever/Format.js"
import { retrieverGenerator as generator } from "../generators/retriever/generator.js"
import { addToBuiltins, definedNames } from "../generators/retriever/Registration.js"

const builtins = `/**
 * The plugins this package ships.
 */
import type { Plugin } from "@cupid-lab/core"
import * as Bm25 from "./Bm25.js"
import * as Simple from "./Simple.js"

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = [
  Simple.all,
  Bm25.plugin
]
`

const bm25 = `import { Plugin } from "@cupid-lab/core"
export const plugin = Plugin.retriever({ name: "bm25", description: "", options, make })
`

const workspace = (list = builtins): Tree => {
  const tree = createTreeWithEmptyWorkspace()
  addProjectConfiguration(tree, "retrievers", {
    root: "packages/retrievers",
    sourceRoot: "packages/retrievers/src",
    projectType: "library"
  })
  tree.write("packages/retrievers/src/Builtins.ts", list)
  tree.write("packages/retrievers/src/Bm25.ts", bm25)
  tree.write("packages/retrievers/src/index.ts", 'export * as Bm25 from "./Bm25.js"\n')
  return tree
}

describe("retriever generator", () => {
  it("writes a ranker and its conformance test, and registers it in order", async () => {
    const tree = workspace()
    await generator(tree, {
      name: "title-match",
      description: "Sessions whose first message shares the request's title words."
    })
    const source = tree.read("packages/retrievers/src/TitleMatch.ts", "utf-8")!
    expect(source).toContain('export const plugin = Ranker.plugin({\n  name: "title-match",')
    expect(source).toContain(`description: "Sessions whose first message shares the request's title words."`)
    expect(source).toContain("score: (query, session, { minCount }) => {")
    expect(source).not.toContain("<%")
    const test = tree.read("packages/retrievers/test/title-match.test.ts", "utf-8")!
    expect(test).toContain(`import { plugin } from "../src/TitleMatch.js"`)
    expect(test).toContain("suite({ plugin })")
    expect(tree.read("packages/retrievers/src/Builtins.ts", "utf-8")).toBe(`/**
 * The plugins this package ships.
 */
import type { Plugin } from "@cupid-lab/core"
import * as Bm25 from "./Bm25.js"
import * as Simple from "./Simple.js"
import * as TitleMatch from "./TitleMatch.js"

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = [
  Simple.all,
  Bm25.plugin,
  TitleMatch.plugin
]
`)
    expect(tree.read("packages/retrievers/src/index.ts", "utf-8")).toBe(
      'export * as Bm25 from "./Bm25.js"\nexport * as TitleMatch from "./TitleMatch.js"\n'
    )
    // What it wrote is formatted: formatting it again changes nothing.
    for (const file of ["src/TitleMatch.ts", "test/title-match.test.ts", "src/Builtins.ts"].map(
      (f) => `packages/retrievers/${f}`
    )) {
      const text = tree.read(file, "utf-8")!
      expect(format(file, text)).toBe(text)
    }
  })

  it("keeps the imports in order of module path, and registers into an empty list", async () => {
    const tree = workspace(builtins.replace("[\n  Simple.all,\n  Bm25.plugin\n]", "[]"))
    await generator(tree, { name: "cosine-match" })
    const text = tree.read("packages/retrievers/src/Builtins.ts", "utf-8")!
    expect(text).toContain(
      'import * as Bm25 from "./Bm25.js"\nimport * as CosineMatch from "./CosineMatch.js"\nimport * as Simple from "./Simple.js"\n'
    )
    expect(text).toContain("= [\n  CosineMatch.plugin\n]")
  })

  it("edits the list by its syntax, whatever its layout, and only once", () => {
    const odd = `import * as A from "./A.js"\nexport const plugins = [A.plugin, /* the last */ A.other,]\nexport const others = [1]\n`
    const once = addToBuiltins("B.ts", odd, "Zed")
    expect(once).toBe(
      `import * as A from "./A.js"\nimport * as Zed from "./Zed.js"\nexport const plugins = [\n  A.plugin,\n  A.other,\n  Zed.plugin\n]\nexport const others = [1]\n`
    )
    expect(addToBuiltins("B.ts", once, "Zed")).toBe(once)
    expect(() => addToBuiltins("B.ts", "export const list = []\n", "Zed")).toThrow(
      "B.ts has no `export const plugins = [...]` list to add Zed.plugin to"
    )
  })

  it("finds the names plugins are defined with", () => {
    expect(
      definedNames(
        "X.ts",
        `${bm25}export const r = Ranker.plugin({ name: 'shared-words', score })\nconst n = { name: "not-a-plugin" }\n`
      )
    ).toEqual(["bm25", "shared-words"])
  })

  it("refuses bad names, existing files and names already defined", async () => {
    await expect(generator(workspace(), { name: "MyRetriever" })).rejects.toThrow("not a kebab-case plugin name")
    const tree = workspace()
    await generator(tree, { name: "twice" })
    await expect(generator(tree, { name: "twice" })).rejects.toThrow("Twice.ts already exists")
    const named = workspace()
    named.write(
      "packages/retrievers/src/Lexical.ts",
      `export const plugin = Ranker.plugin({ name: "word-match", description: "", options, score })\n`
    )
    await expect(generator(named, { name: "word-match" })).rejects.toThrow(
      `a retriever named "word-match" is already defined in packages/retrievers/src/Lexical.ts`
    )
  })

  it("is declared for Nx: generators.json points at the entry that loads the TypeScript generator", () => {
    const pkg = JSON.parse(fs.readFileSync(new URL("../package.json", import.meta.url), "utf8"))
    expect(pkg.generators).toBe("./generators.json")
    const collection = JSON.parse(fs.readFileSync(new URL("../generators.json", import.meta.url), "utf8"))
    expect(collection.generators.retriever.factory).toBe("./generators/retriever/index.cjs")
    const schema = JSON.parse(fs.readFileSync(new URL("../generators/retriever/schema.json", import.meta.url), "utf8"))
    expect(schema.properties.name.$default).toEqual({ $source: "argv", index: 0 })
    expect(schema.required).toEqual(["name"])
    const entry = createRequire(import.meta.url)("../generators/retriever/index.cjs")
    expect(typeof entry).toBe("function")
    expect(entry.default).toBe(entry)
  })

  it("runs through Nx as a user runs it (nx g ... --dry-run)", async () => {
    const root = new URL("../../../", import.meta.url).pathname
    const run = await Subprocess.run(
      "npx",
      ["nx", "g", "@cupid-lab/retrievers:retriever", "dry-run-probe", "--dry-run", "--no-interactive"],
      {
        cwd: root,
        env: { ...process.env, NX_DAEMON: "false", NX_NO_CLOUD: "true", FORCE_COLOR: "0", NO_COLOR: "1" }
      }
    )
    // (Nx colours its output where CI is set: the codes are dropped before matching)
    // eslint-disable-next-line no-control-regex
    const out = `${run.stdout}${run.stderr}`.replace(/\u001b\[[0-9;]*m/g, "")
    expect(run.code, out).toBe(0)
    expect(out).toContain("CREATE packages/retrievers/src/DryRunProbe.ts")
    expect(out).toContain("CREATE packages/retrievers/test/dry-run-probe.test.ts")
    expect(out).toContain("UPDATE packages/retrievers/src/Builtins.ts")
    expect(out).toContain("UPDATE packages/retrievers/src/index.ts")
    expect(fs.existsSync(`${root}packages/retrievers/src/DryRunProbe.ts`)).toBe(false)
  })
})
