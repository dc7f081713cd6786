/**
 * calls.jsonl keeps each call's wait for its model's rate limiter (`limiterMs`) apart from its
 * latency: a sweep whose inferrer's model has a local `rpm` limit and whose generator's model has
 * none, against a loopback OpenAI server. Only presence is checked, never a duration.
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { Calls } from "@cupid-lab/results"

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Commands from "../src/cli/Commands.js"

import { commandIo, lines, tempDir } from "./support.js"

const config = (dir: string, baseURL: string) =>
  [
    "name: limiter",
    `data: { source: "synthetic:personas=1,seed=9" }`,
    `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
    "models:",
    `  limited: { provider: openai, model: test-limited, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, rpm: 600 }`,
    `  plain: { provider: openai, model: test-plain, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY }`,
    "pipeline:",
    "  retriever: all",
    "  inferrer: { use: llm, model: limited }",
    "  generator: { use: llm, model: plain, preference: gold }",
    "scorers: [{ use: retrieval, ks: [2] }]"
  ].join("\n") + "\n"

describe("calls.jsonl limiterMs", () => {
  it.scopedLive("is on the calls of a model with a limiter, and only on those", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        chat: () => "### Analysis\n\nShort analysis.\n\n### Most Likely Preference\n\nNumbered steps."
      })
      const dir = tempDir("cupid-limiter-")
      fs.writeFileSync(path.join(dir, "limiter.yaml"), config(dir, server.baseURL))
      const { err, io } = commandIo(dir)
      const out = path.join(dir, "run")
      expect(yield* Commands.main(["sweep", "--config", "limiter", "--out", out], io), err.join("")).toBe(0)
      const calls = lines(path.join(out, "calls.jsonl")).flatMap((l) => (JSON.parse(l) as Calls.Line).calls)
      const limited = calls.filter((c) => c.model === "test-limited")
      const plain = calls.filter((c) => c.model === "test-plain")
      expect(limited.length).toBeGreaterThan(0)
      expect(plain.length).toBeGreaterThan(0)
      for (const c of limited) {
        expect(c.cached).toBe(false)
        expect(typeof c.limiterMs).toBe("number")
        expect(c.limiterMs).toBeGreaterThanOrEqual(0)
      }
      for (const c of plain) expect(c).not.toHaveProperty("limiterMs")
      // run.json sums them (rounded), and leaves the field out when no call waited.
      const waited = limited.reduce((t, c) => t + c.limiterMs!, 0)
      const info = JSON.parse(fs.readFileSync(path.join(out, "run.json"), "utf8")) as {
        modelCalls: { limiterMs?: number }
      }
      if (Math.round(waited) > 0) expect(info.modelCalls.limiterMs).toBe(Math.round(waited))
      else expect(info.modelCalls).not.toHaveProperty("limiterMs")

      // A rerun answered by the cache waited for no limiter.
      const again = path.join(dir, "again")
      expect(yield* Commands.main(["sweep", "--config", "limiter", "--out", again], io), err.join("")).toBe(0)
      const cached = lines(path.join(again, "calls.jsonl")).flatMap((l) => (JSON.parse(l) as Calls.Line).calls)
      expect(cached.length).toBeGreaterThan(0)
      for (const c of cached) {
        expect(c.cached).toBe(true)
        expect(c).not.toHaveProperty("limiterMs")
      }
      expect(JSON.parse(fs.readFileSync(path.join(again, "run.json"), "utf8")).modelCalls).not.toHaveProperty(
        "limiterMs"
      )
    })
  )
})
