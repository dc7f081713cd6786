/**
 * The sweep's exit code when pairs fail: 3 when every pair run failed (or more than
 * --max-failed-share), with the outputs written all the same; 0 with --allow-failures, and 0 when
 * only some failed and no share was given.
 */
import { NodeTest } from "@cupid-lab/core/testing"
import { Plugins } from "@cupid-lab/runner"
import { Dataset } from "@cupid-lab/data"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect } from "vitest"
import * as Commands from "../src/cli/Commands.js"

import { flaky, visibleSignature } from "./support.js"

const configText = `name: exits
data: { source: sample, limit: 4 }
pipeline:
  retriever: flaky
  inferrer: extractive
scorers: [retrieval]
`

const setup = (failing: (signatures: ReadonlyArray<string>) => ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-exit-"))
    fs.writeFileSync(path.join(dir, "exits.yaml"), configText)
    const { instances } = yield* Dataset.loadAll("sample", { limit: 4 })
    const signatures = instances.map((i) => visibleSignature(i.query))
    const state = { failing: new Set(failing(signatures)) }
    const err: Array<string> = []
    const io = {
      configDirs: [dir],
      stdout: () => {},
      stderr: { write: (t: string) => void err.push(t) },
      runner: { plugins: [...Plugins.builtins(), flaky(state)] }
    }
    return { dir, io, err }
  })

describe("the sweep's exit code when pairs fail", () => {
  NodeTest.it.live("every pair failed: 3, the outputs written, the message says how to accept it", () =>
    Effect.gen(function* () {
      const { dir, err, io } = yield* setup((all) => all)
      const out = path.join(dir, "run")
      const code = yield* Commands.main(["sweep", "--config", "exits", "--out", out], io)
      expect(code, err.join("")).toBe(3)
      expect(err.join("")).toMatch(/4 of the 4 pairs run failed.*--allow-failures/s)
      expect(fs.existsSync(path.join(out, "summary.json"))).toBe(true)
      expect(fs.existsSync(path.join(out, "report.md"))).toBe(true)
      // The rerun retries them; accepted with --allow-failures.
      const again = yield* Commands.main(["sweep", "--config", "exits", "--out", out, "--allow-failures"], io)
      expect(again, err.join("")).toBe(0)
    })
  )

  NodeTest.it.live("some failed: 0 by default, 3 past --max-failed-share", () =>
    Effect.gen(function* () {
      const { dir, io } = yield* setup((all) => all.slice(0, 1))
      expect(yield* Commands.main(["sweep", "--config", "exits", "--out", path.join(dir, "a")], io)).toBe(0)
      expect(
        yield* Commands.main(
          ["sweep", "--config", "exits", "--out", path.join(dir, "b"), "--max-failed-share", "0.2"],
          io
        )
      ).toBe(3)
      expect(
        yield* Commands.main(
          ["sweep", "--config", "exits", "--out", path.join(dir, "c"), "--max-failed-share", "0.5"],
          io
        )
      ).toBe(0)
      expect(
        yield* Commands.main(
          ["sweep", "--config", "exits", "--out", path.join(dir, "d"), "--max-failed-share", "2"],
          io
        )
      ).toBe(2)
    })
  )
})
