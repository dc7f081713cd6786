/**
 * `transcripts: counts` keeps no model text in calls.jsonl: a canary string in every answer of a
 * loopback model reaches results.jsonl (the pipeline read it) and never the call log, while the
 * counts (calls, tokens, whether each answer could be read) stay.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { Calls } from "@cupid-lab/results"

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Commands from "../src/cli/Commands.js"

import { commandIo, lines, loopbackInferrerConfig, tempDir } from "./support.js"

const canary = "CANARY-7f3a9e"

const config = (dir: string, baseURL: string, transcripts: "full" | "counts") =>
  loopbackInferrerConfig("counts", path.join(dir, `cache-${transcripts}`), baseURL, [`transcripts: ${transcripts}`])

describe("transcripts: counts", () => {
  it.scopedLive("keeps no model text in calls.jsonl; full keeps it", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        chat: () => `### Analysis\n\n${canary} analysis.\n\n### Most Likely Preference\n\n${canary} numbered steps.`
      })
      const dir = tempDir("cupid-counts-")
      const run = (transcripts: "full" | "counts") =>
        Effect.gen(function* () {
          fs.writeFileSync(path.join(dir, "counts.yaml"), config(dir, server.baseURL, transcripts))
          const { err, io } = commandIo(dir)
          const out = path.join(dir, `run-${transcripts}`)
          expect(yield* Commands.main(["sweep", "--config", "counts", "--out", out], io), err.join("")).toBe(0)
          return out
        })
      const counts = yield* run("counts")
      const calls = fs.readFileSync(path.join(counts, "calls.jsonl"), "utf8")
      expect(fs.readFileSync(path.join(counts, "results.jsonl"), "utf8")).toContain(canary)
      expect(calls).not.toContain(canary)
      const parsed = lines(path.join(counts, "calls.jsonl")).flatMap((l) => (JSON.parse(l) as Calls.Line).calls)
      expect(parsed).toHaveLength(3)
      expect(parsed.map((c) => [c.stage, c.read, c.request, c.answer])).toEqual(
        parsed.map(() => ["infer", { ok: true }, undefined, undefined])
      )
      expect(parsed.every((c) => c.promptTokens > 0 && c.completionTokens > 0)).toBe(true)
      // full keeps the messages, the answer and what was read.
      const full = yield* run("full")
      expect(fs.readFileSync(path.join(full, "calls.jsonl"), "utf8")).toContain(canary)
    })
  )
})
