/**
 * The `embedding` retriever fits its offline embedder on the whole data file before any pair runs.
 * A valid instance with a 10,000-session history is a JSONL line of about 13 MB here (32 MB with
 * CUPID-sized sessions): it is read and ranked, not refused; a corpus that cannot be read says
 * which file, row and problem, through the retriever's build error.
 */
import { Config } from "@cupid-lab/runner"
import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { lines, tempDir } from "./support.js"
import * as Sweeps from "../src/Sweeps.js"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const sampleRow = JSON.parse(
  fs.readFileSync(path.join(repoRoot, "packages", "data", "data", "sample.jsonl"), "utf8").split("\n")[0]!
) as { persona_id: string; prior_interactions: ReadonlyArray<{ dialogue: ReadonlyArray<unknown> }> }

/** The sample's first instance with its history padded to `sessions` (200 distinct dialogues, cycled). */
const longHistoryRow = (sessions: number): string => {
  const base = sampleRow.prior_interactions
  const prior = Array.from({ length: sessions }, (_, i) => {
    const s = base[i % base.length]!
    const [first, second] = s.dialogue as ReadonlyArray<{ role: string; content: string }>
    return {
      ...s,
      dialogue: [{ ...first!, content: `(variant ${i % 200}) ${first!.content}` }, second!]
    }
  })
  return JSON.stringify({ ...sampleRow, prior_interactions: prior })
}

const sweepOn = (data: string, dir: string) =>
  Effect.flatMap(
    Config.parse(
      [
        "name: long-history",
        `data: { source: ${JSON.stringify(data)} }`,
        "seed: 1",
        "pipeline: { retriever: all, inferrer: extractive }",
        "scorers: [{ use: retrieval, ks: [2] }]",
        "sweep:",
        "  retriever:",
        "    - { use: embedding, k: 2 }",
        "bootstrap: { resamples: 100 }"
      ].join("\n"),
      "long-history.yaml",
      {}
    ),
    (c) => Sweeps.sweep({ ...c, out: path.join(dir, "out"), outGiven: true, cacheDir: path.join(dir, "cache") })
  )

describe("the embedding retriever on a long history", () => {
  it.live("a 10,000-session history, a row over the old 8 MB limit, is fitted on and ranked", () =>
    Effect.gen(function* () {
      const dir = tempDir("cupid-long-history-")
      const data = path.join(dir, "long.jsonl")
      fs.writeFileSync(data, longHistoryRow(10_000) + "\n")
      // The row must be larger than the limit that used to refuse it, or this test proves nothing.
      expect(fs.statSync(data).size).toBeGreaterThan(8 * 1024 * 1024)
      const outcome = yield* sweepOn(data, dir)
      expect(outcome.pairs.failed).toBe(0)
      const results = lines(path.join(dir, "out", "results.jsonl")).map(
        (l) => JSON.parse(l) as { cellName: string; instance: string; status: string; meta: { sessions: number } }
      )
      expect(results.map((r) => [r.cellName, r.instance, r.status, r.meta.sessions])).toEqual([
        ["embedding", `${sampleRow.persona_id}:consistent`, "ok", 10_000]
      ])
    }).pipe(Effect.provide(NodeContext.layer))
  )

  it.live("a corpus that cannot be read fails the build with the file, the row and the problem", () =>
    Effect.gen(function* () {
      const dir = tempDir("cupid-long-history-")
      const data = path.join(dir, "cut.jsonl")
      fs.writeFileSync(data, longHistoryRow(3) + "\n" + longHistoryRow(3).slice(0, 100) + "\n")
      const error = yield* Effect.flip(sweepOn(data, dir))
      expect(error.message).toContain(
        `cannot build retriever "embedding": could not read the corpus to fit on: ${data}, row 2: malformed JSON`
      )
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
