// calls.jsonl read back: the totals over every attempt, one instance's latest calls per cell, and
// lines that do not decode counted as such (never dropped silently).
import { NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as Calls from "../src/Calls.js"

const call = (requests: number, cached = false, failed = false): Calls.Call => ({
  stage: "infer",
  provider: "openai",
  model: "m",
  kind: "complete",
  cached,
  requests,
  failed,
  latencyMs: 5,
  promptTokens: 10,
  completionTokens: 2
})
const line = (cell: string, instance: string, calls: ReadonlyArray<Calls.Call>) =>
  `${JSON.stringify({ cell, instance, ranAt: "t", calls })}\n`

describe("calls.jsonl read back", () => {
  it.effect(
    "totals count calls, cache answers, requests and retries by hand; an unreadable line is counted apart",
    () =>
      Effect.gen(function* () {
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-calls-"))
        const file = path.join(dir, Calls.fileName)
        fs.writeFileSync(
          file,
          [
            line("a", "i1", [call(1), call(3)]), // 4 requests, 2 retries
            line("b", "i1", [call(0, true), call(2, false, true)]), // 1 cached; 2 requests, 1 retry, failed
            '{"cell":"a","instance":"i1","calls":[{"stage":\n', // damaged: mentions i1
            line("a", "i1", [call(1)]) // a retried pair: its latest attempt
          ].join("")
        )
        expect(yield* Calls.tally(file)).toEqual({
          attempts: 3,
          calls: 5,
          cached: 1,
          requests: 7,
          retries: 3,
          failed: 1,
          unreadable: 1
        })
        const { byCell, unreadable } = yield* Calls.ofInstance(file, "i1")
        expect(unreadable).toBe(1)
        expect(byCell.get("a")).toMatchObject({ attempts: 2, line: { calls: [{ requests: 1 }] } })
        expect(byCell.get("b")!.attempts).toBe(1)
        expect((yield* Calls.ofInstance(file, "i2")).byCell.size).toBe(0)
        expect(yield* Calls.tally(path.join(dir, "none.jsonl"))).toEqual(Calls.emptyTotals)
      }).pipe(Effect.provide(NodeFileSystem.layer))
  )
})
