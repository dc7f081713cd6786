/**
 * The Nx targets that run the CLI (experiments:sweep, report, compare, synthesize, view, data and
 * core:data) go through the workspace executor `@cupid-lab/experiments:cli`, which hands the
 * arguments after the target to the CLI as an argument vector. Through `nx:run-commands` they were
 * joined into one /bin/sh command line, where a cell name such as `bm25(b=0.5,top=4)` was a syntax
 * error. Two real `npx nx run` invocations (about 5 s each, most of it Nx's project graph).
 */
import { Subprocess } from "@cupid-lab/core/testing"
import { describe, expect, it } from "vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { type CellSpec, cellA, cellB, tempDir, writeRun } from "./report-fixtures.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))

/** Named the way the sweep names a cell with several options: parentheses, `=` and a comma. */
const cellC: CellSpec = { ...cellB, id: "cccc000000000003", name: "bm25(b=0.5,top=4)" }

const nx = async (...args: Array<string>) => {
  // --output-style=static: every task's output in full, whatever Nx guesses about the terminal.
  const r = await Subprocess.run("npx", ["nx", "run", ...args, "--output-style=static"], {
    cwd: repo,
    env: { ...process.env, FORCE_COLOR: "0", NX_TUI: "false" },
    timeout: 600_000
  })
  return { code: r.code, out: `${r.stdout}${r.stderr}` }
}

describe("the Nx targets of the CLI", () => {
  it("all run the compiled CLI through the executor, never a shell command line", () => {
    const targets = ["experiments", "data"].flatMap((project) => {
      const json: { targets: Record<string, { executor: string; options?: { command?: unknown } }> } = JSON.parse(
        fs.readFileSync(path.join(repo, "packages", project, "project.json"), "utf8")
      )
      return Object.entries(json.targets).map(([name, t]) => ({ target: `${project}:${name}`, ...t }))
    })
    const cli = targets.filter((t) => t.executor === "@cupid-lab/experiments:cli")
    expect(cli.map((t) => t.target).sort()).toEqual([
      "data:data",
      "experiments:compare",
      "experiments:data",
      "experiments:errors",
      "experiments:merge",
      "experiments:report",
      "experiments:score",
      "experiments:sweep",
      "experiments:synthesize",
      "experiments:view"
    ])
    expect(targets.filter((t) => JSON.stringify(t.options ?? {}).includes("dist/cli.mjs"))).toEqual([])
  })

  it("pass a cell name with parentheses, and shell syntax, to the CLI unchanged", async () => {
    const run = tempDir("nx-args")
    writeRun(run, { name: "nx-args", cells: [cellA, cellB, cellC] })

    const chosen = await nx("experiments:report", "--run", run, "--baseline", cellC.name)
    expect(chosen.code, chosen.out).toBe(0)
    expect(chosen.out).not.toContain("Syntax error")
    expect(fs.readFileSync(path.join(run, "report.md"), "utf8")).toContain(
      `- Baseline: ${cellC.name} (chosen on the command line)`
    )

    // Quotes, `$`, `;`, a backquote and spaces arrive as typed: the CLI's own message names them,
    // and the executor adds no line of its own (no command echo, no "exited with non-zero status").
    const odd = `a b; $HOME "c" 'd' \`id\``
    const unknown = await nx("experiments:report", "--run", run, "--baseline", odd)
    expect(unknown.code).not.toBe(0)
    expect(unknown.out).toContain(`error: ${run}: baseline "${odd}" is not a cell of this run: no cell "${odd}"`)
    expect(unknown.out).not.toMatch(/> node |exited with non-zero status/)
  })
})
