/**
 * A bad data row in the middle or at the end of a file, through the compiled CLI a user runs: the
 * sweep stops with an error naming the file, the row and (where there is one) the field, exits 1
 * (not 130, an interruption), before any pair runs (every row is checked first, so no result line
 * is written for the rows before it); a rerun says the same, never "interrupted".
 */
import { it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll, describe, expect } from "vitest"
import { buildCli, cleanEnv, runProcess } from "./support.js"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const compiled = path.join(repoRoot, "packages", "experiments", "dist", "cli.mjs")
const sample = fs
  .readFileSync(path.join(repoRoot, "packages", "data", "data", "sample.jsonl"), "utf8")
  .split("\n")
  .filter((l) => l !== "")

beforeAll(buildCli)

/** The sample's first `rows` rows with row 6 replaced (with 6 rows, the last line of the file). */
const withRow6 = (row6: (row: Record<string, unknown>, text: string) => string, rows = 12): string =>
  sample
    .slice(0, rows)
    .map((line, i) => (i === 5 ? row6(JSON.parse(line) as Record<string, unknown>, line) : line))
    .join("\n") + "\n"

const cases: ReadonlyArray<{
  readonly name: string
  readonly data: string
  readonly says: RegExp
}> = [
  { name: "cut short", data: withRow6((_, text) => text.slice(0, 200)), says: /row 6: malformed JSON/ },
  {
    name: "the last line cut short, with no newline",
    data: withRow6((_, text) => text.slice(0, text.length / 2), 6).trimEnd(),
    says: /row 6: malformed JSON/
  },
  {
    name: "missing a field",
    data: withRow6((r) => JSON.stringify({ ...r, current_request: undefined })),
    says: /row 6.*current_request/
  },
  {
    name: "a field of the wrong type",
    data: withRow6((r) => JSON.stringify({ ...r, current_request: 42 })),
    says: /row 6.*current_request/
  }
]

describe("a bad data row through the compiled CLI", () => {
  for (const c of cases) {
    it.live(`${c.name}: named, exit 1, never an interruption, and the same on a rerun`, () =>
      Effect.gen(function* () {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-bad-row-"))
        const data = path.join(dir, "bad.jsonl")
        fs.writeFileSync(data, c.data)
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
        // Every row is checked before the first pair: nothing ran, no result line was written.
        const results = path.join(dir, "run", "results.jsonl")
        expect(fs.existsSync(results) ? fs.readFileSync(results, "utf8") : "").toBe("")
      })
    )
  }
})
