/**
 * A grid's size through the compiled CLI (packages/experiments/dist/cli.mjs): a grid over the limit
 * is refused at once with its size, the limit and how to raise it; a grid expanding under a raised
 * limit stops on SIGTERM.
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect, it } from "vitest"
import { buildCli, cleanEnv, runProcess, tempDir, writeConfig } from "./support.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(repo, "packages", "experiments", "dist", "cli.mjs")

const values = (n: number, f: (i: number) => string) => `[${Array.from({ length: n }, (_, i) => f(i)).join(", ")}]`
/** Four axes of 40 values: 2,560,000 cells. */
const hugeGrid =
  [
    "name: huge",
    "data: { source: sample, limit: 1 }",
    "pipeline: { retriever: { use: bm25, k: 2 } }",
    "scorers: [{ use: retrieval, ks: [2] }]",
    "sweep:",
    `  retriever.k: ${values(40, (i) => String(i + 1))}`,
    `  retriever.k1: ${values(40, (i) => String((i + 1) / 20))}`,
    `  retriever.b: ${values(40, (i) => String(i / 40))}`,
    `  transform.pad: ${values(40, (i) => String(i + 8))}`
  ].join("\n") + "\n"

beforeAll(buildCli)

describe("a large grid through the CLI", () => {
  it("over the limit, a dry run is refused before any work, with the size, the limit and how to raise it", async () => {
    const dir = tempDir()
    const file = writeConfig(dir, hugeGrid, "huge.yaml")
    const r = await Effect.runPromise(
      runProcess(process.execPath, [cli, "sweep", "--config", file, "--dry-run"], { cwd: dir, env: cleanEnv() })
    )
    expect(r.code).toBe(1)
    expect(r.stdout).toBe("")
    expect(r.stderr).toContain(
      "error: huge.yaml: sweep: the grid has 2,560,000 cells (sweep.retriever.k 40 x sweep.retriever.k1 40 x sweep.retriever.b 40 x sweep.transform.pad 40), " +
        "more than the limit of 10,000 (maxCells); sweep fewer alternatives, or raise the limit with `maxCells: 2560000` in the config or `--max-cells 2560000` on the command line"
    )
    // Refused from the axes' sizes without expanding anything (an expansion would not end within the test's ceiling).
  })

  it("a grid expanding under a raised limit says its size first and stops on SIGTERM (exit 130)", async () => {
    const dir = tempDir()
    const file = writeConfig(dir, hugeGrid, "huge.yaml")
    const child = spawn(process.execPath, [cli, "sweep", "--config", file, "--dry-run", "--max-cells", "2560000"], {
      cwd: dir,
      env: cleanEnv(),
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    const announced = new Promise<void>((resolve) =>
      child.stderr.on("data", (d: Buffer) => {
        stderr += d.toString("utf8")
        if (stderr.includes("building them before any pair runs")) resolve()
      })
    )
    const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)))
    await announced
    expect(stderr).toContain(
      "grid: 2,560,000 cells (sweep.retriever.k 40 x sweep.retriever.k1 40 x sweep.retriever.b 40 x sweep.transform.pad 40)"
    )
    // Well into the expansion (which would take many minutes and gigabytes), then the signal.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    child.kill("SIGTERM")
    const code = await exited
    expect(code).toBe(130)
  })
})
