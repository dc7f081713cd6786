/**
 * A bad data row in the middle of a file, through the compiled CLI a user runs: the sweep stops
 * with an error naming the file, the row and (where there is one) the field, exits 1 (not 130, an
 * interruption), and the lines already written stay; a rerun says the same, never "interrupted".
 */
import { it } from "@effect/vitest"
import { Effect } from "effect"
import { spawnSync } from "node:child_process"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect } from "vitest"
import { cleanEnv, runProcess } from "./support.js"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const compiled = path.join(repoRoot, "packages", "experiments", "dist", "cli.mjs")
const sample = fs
  .readFileSync(path.join(repoRoot, "packages", "data", "data", "sample.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l !== "")

beforeAll(() => {
  const built = spawnSync(process.execPath, [path.join(repoRoot, "tools", "build-cli.mjs"), "--if-stale", "--quiet"], {
    encoding: "utf8"
  })
  if (built.status !== 0) throw new Error(`building the CLI failed: ${built.stderr}`)
}, 120_000)

/** The sample's first 12 rows with row 5 replaced. */
const withRow5 = (row5: (row: Record<string, unknown>, text: string) => string): string =>
  sample
    .slice(0, 12)
    .map((line, i) => (i === 4 ? row5(JSON.parse(line) as Record<string, unknown>, line) : line))
    .join("\n") + "\n"

const cases: ReadonlyArray<{
  readonly name: string
  readonly row: (row: Record<string, unknown>, text: string) => string
  readonly says: RegExp
}> = [
  { name: "cut short", row: (_, text) => text.slice(0, 200), says: /row 5: malformed JSON/ },
  {
    name: "missing a field",
    row: (r) => JSON.stringify({ ...r, current_request: undefined }),
    says: /row 5.*current_request/
  },
  {
    name: "a field of the wrong type",
    row: (r) => JSON.stringify({ ...r, current_request: 42 }),
    says: /row 5.*current_request/
  }
]

describe("a bad data row through the compiled CLI", () => {
  for (const c of cases) {
    it.live(
      `${c.name}: named, exit 1, never an interruption, and the same on a rerun`,
      () =>
        Effect.gen(function* () {
          const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-bad-row-"))
          const data = path.join(dir, "bad.jsonl")
          fs.writeFileSync(data, withRow5(c.row))
          const args = [
            compiled,
            "sweep",
            "--config",
            "smoke",
            "--data",
            data,
            "--limit",
            "10",
            "--out",
            path.join(dir, "run")
          ]
          for (const attempt of [1, 2]) {
            const r = yield* runProcess(process.execPath, args, {
              cwd: repoRoot,
              env: { ...cleanEnv(), NO_COLOR: "1" }
            })
            expect(r.code, `attempt ${attempt}: ${r.stderr}`).toBe(1)
            expect(r.stderr).toContain(data)
            expect(r.stderr).toMatch(c.says)
            expect(r.stderr).not.toMatch(/interrupted/)
          }
          // The rows before the bad one were run and written.
          const lines = fs
            .readFileSync(path.join(dir, "run", "results.jsonl"), "utf8")
            .split("\n")
            .filter((l) => l !== "")
          expect(lines.length).toBeGreaterThan(0)
        }),
      60_000
    )
  }
})
