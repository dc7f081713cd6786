/**
 * Plugin files as a user writes them: the compiled CLI (packages/experiments/dist/cli.mjs, plain
 * Node) and the Nx target load a config's `plugins:` in TypeScript or JavaScript from a folder of
 * the checkout outside the packages, importing `@cupid-lab/core` and `effect` as docs/config.md
 * shows (the plugin is that page's example, read from it). Errors in a plugin file name the file
 * and say what was expected.
 */
import { Subprocess } from "@cupid-lab/core/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { buildCli } from "./support.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(repo, "packages", "experiments", "dist", "cli.mjs")
// Inside the checkout (where a plugin finds the lab's packages), outside the packages; ignored by git.
fs.mkdirSync(path.join(repo, ".scratch"), { recursive: true })
const dir = fs.mkdtempSync(path.join(repo, ".scratch", "plugin-files-"))

/** The fenced block of `lang` that follows `heading` in a docs page. */
const docsBlock = (page: string, heading: string, lang: string): string => {
  const text = fs.readFileSync(path.join(repo, "docs", page), "utf8")
  const section = text.slice(text.indexOf(heading))
  const block = section.match(new RegExp("```" + lang + "\\n([\\s\\S]*?)```"))
  if (block === null) throw new Error(`docs/${page}: no ${lang} block after "${heading}"`)
  return block[1]!
}

const write = (file: string, text: string) => {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, text)
  return file
}

/** A retriever plugin named `name` in the docs' style, ranking sessions by recency. */
const retriever = (name: string) =>
  [
    `import { Plugin, Retriever } from "@cupid-lab/core"`,
    `import { Effect, Schema } from "effect"`,
    `export default Plugin.retriever({`,
    `  name: ${JSON.stringify(name)},`,
    `  description: "The most recent session.",`,
    `  options: Schema.Struct({}),`,
    `  make: () => Effect.succeed({ needsSummaries: false, retrieve: ({ query }) => Effect.succeed(Retriever.fromScores(query.sessions.map((s) => [s.id, s.index]), 1)) })`,
    `})`,
    ``
  ].join("\n")

const config = (name: string, body: string) =>
  write(path.join(dir, `${name}.yaml`), `name: ${name}\ndata: { source: sample, limit: 3 }\n${body}`)

interface Done {
  readonly code: number | null
  readonly out: string
}

const cupid = async (...args: Array<string>): Promise<Done> => {
  const r = await Subprocess.run(process.execPath, [cli, ...args], {
    cwd: dir,
    env: { ...process.env, FORCE_COLOR: "0" },
    timeout: 600_000
  })
  return { code: r.code, out: `${r.stdout}${r.stderr}` }
}

const lines = (file: string): Array<Record<string, unknown>> =>
  fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l))

beforeAll(buildCli)

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("the compiled CLI loads plugin files", () => {
  it("runs a sweep with the TypeScript plugin of docs/config.md, which imports @cupid-lab/core and effect", async () => {
    write(path.join(dir, "plugins", "newest.ts"), docsBlock("config.md", "## Your own plugins", "ts"))
    const yaml = docsBlock("config.md", "## Your own plugins", "yaml")
    expect(yaml).toContain("plugins: [./plugins/newest.ts]")
    const file = config("docs-plugin", `${yaml}scorers: [{ use: retrieval, ks: [2] }]\n`)
    const out = path.join(dir, "runs", "docs-plugin")

    const r = await cupid("sweep", "--config", file, "--out", out)
    expect(r.code, r.out).toBe(0)
    const results = lines(path.join(out, "results.jsonl"))
    expect(results).toHaveLength(3)
    for (const line of results) {
      // The plugin scores each session by its position, and the config keeps k = 2: the two newest.
      const n = (line.meta as { sessions: number }).sessions
      const ranking = line.ranking as Array<{ sessionId: string; score: number }>
      expect(ranking.map((s) => s.score)).toEqual(Array.from({ length: n }, (_, i) => n - 1 - i))
      expect(line.selected).toEqual([ranking[1]!.sessionId, ranking[0]!.sessionId])
      expect(line.status).toBe("ok")
    }
    const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"))
    expect(summary.cells.map((c: { plugins: unknown }) => c.plugins)).toEqual([
      [
        {
          stage: "retriever",
          name: "newest",
          readsGold: false,
          heuristic: false,
          package: "./plugins/newest.ts",
          version: "local"
        }
      ]
    ])
  })

  it("loads .mts, .js and .mjs plugin files too", async () => {
    const files = ["mts", "js", "mjs"].map((ext) =>
      write(path.join(dir, "plugins", `latest-${ext}.${ext}`), retriever(`latest-${ext}`))
    )
    const file = config(
      "formats",
      `plugins: ${JSON.stringify(files.map((f) => `./plugins/${path.basename(f)}`))}\npipeline: { retriever: all }\n` +
        "sweep: { retriever: [latest-mts, latest-js, latest-mjs] }\n"
    )
    const r = await cupid("sweep", "--config", file, "--dry-run")
    expect(r.code, r.out).toBe(0)
    expect(r.out).toMatch(
      /grid: 3 cells\n {2}\w+ {2}latest-mts {2}\(baseline\)\n {2}\w+ {2}latest-js\n {2}\w+ {2}latest-mjs\n/
    )
  })
})

describe("an error in a plugin file names the file and what was expected", () => {
  const failing = async (name: string, plugin: string) => {
    // Given relative to the working directory, the config is named so in messages.
    const file = path.basename(config(name, `plugins: [${plugin}]\npipeline: { retriever: all }\n`))
    const r = await cupid("sweep", "--config", file, "--dry-run")
    expect(r.code, r.out).toBe(1)
    return { file, out: r.out }
  }

  it("a syntax error: the file, line and column, and what the parser expected", async () => {
    const plugin = write(
      path.join(dir, "plugins", "broken.ts"),
      `import { Plugin } from "@cupid-lab/core"\nexport default Plugin.retriever({ name: "x",, })\n`
    )
    const { file, out } = await failing("broken", "./plugins/broken.ts")
    expect(out).toContain(
      `error: ${file}: plugins[0]: cannot import ./plugins/broken.ts (${plugin}): Transform failed with 1 error:\n`
    )
    expect(out).toContain(`${plugin}:2:44: ERROR: Expected identifier but found ","`)
  })

  it("no default export: what the file exports instead, and what it must export", async () => {
    write(
      path.join(dir, "plugins", "named.ts"),
      retriever("named").replace("export default Plugin.retriever(", "export const plugin = Plugin.retriever(")
    )
    const { file, out } = await failing("named", "./plugins/named.ts")
    expect(out).toContain(
      `error: ${file}: plugins[0]: ./plugins/named.ts: has no default export (it exports plugin); ` +
        "the default export must be a plugin built with Plugin.retriever(...), Plugin.scorer(...) etc., or an array of them"
    )
  })

  it("a file outside the checkout, where @cupid-lab/core cannot be found, and a CommonJS file", async () => {
    const outside = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-plugin-"))
    const plugin = write(path.join(outside, "newest.ts"), retriever("newest"))
    const far = await failing("outside", JSON.stringify(plugin))
    expect(far.out).toContain(
      `error: ${far.file}: plugins[0]: cannot import ${plugin} (${plugin}): it cannot find @cupid-lab/core: a plugin file finds ` +
        "@cupid-lab/core and effect from its own folder upward, like any Node module, so it must be inside the cupid-lab checkout (e.g. configs/plugins/)"
    )
    fs.rmSync(outside, { recursive: true, force: true })

    write(path.join(dir, "plugins", "old.cts"), retriever("old"))
    const cjs = await failing("commonjs", "./plugins/old.cts")
    expect(cjs.out).toContain(
      `error: ${cjs.file}: plugins[0]: ./plugins/old.cts: a plugin file must be an ES module ending in .ts, .mts, .js, .mjs`
    )
  })
})

describe("through Nx", () => {
  it("experiments:sweep loads a TypeScript plugin file", async () => {
    write(path.join(dir, "plugins", "nx-latest.ts"), retriever("nx-latest"))
    const file = config("nx-plugin", "plugins: [./plugins/nx-latest.ts]\npipeline: { retriever: nx-latest }\n")
    // --output-style=static: every task's output in full, whatever Nx guesses about the terminal.
    const r = await Subprocess.run(
      "npx",
      ["nx", "run", "experiments:sweep", "--config", file, "--dry-run", "--output-style=static"],
      {
        cwd: repo,
        env: { ...process.env, FORCE_COLOR: "0", NX_TUI: "false" },
        timeout: 600_000
      }
    )
    const out = `${r.stdout}${r.stderr}`
    expect(r.code, out).toBe(0)
    expect(out).toMatch(/grid: 1 cells?\n {2}\w+ {2}nx-latest/)
  })
})
