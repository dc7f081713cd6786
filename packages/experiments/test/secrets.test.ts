/**
 * Keys never reach results: a loopback server that echoes its model's key cut short (all but the
 * last 4 characters) and another model's key in its error messages, through a real sweep; the
 * failed pairs' errors in results.jsonl hold neither.
 */
import { OpenAiServer, LoopbackServer } from "@cupid-lab/providers/testing"
import { Config } from "@cupid-lab/runner"

import { afterEach, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"

import { tempDir } from "./support.js"
import * as Sweeps from "../src/Sweeps.js"

const keyA = "sk-test-A-7Hq2mZx9LpW4vN8rT1cY"
const keyB = "sk-test-B-Qw3eR5tY7uI9oP1aS2dF"

afterEach(() => {
  delete process.env["CUPID_SECRETS_TEST_KEY_A"]
  delete process.env["CUPID_SECRETS_TEST_KEY_B"]
})

describe("secrets in a server's error messages", () => {
  it.scopedLive("a key echoed cut short, and another model's key, are not written to results", () =>
    Effect.gen(function* () {
      process.env["CUPID_SECRETS_TEST_KEY_A"] = keyA
      process.env["CUPID_SECRETS_TEST_KEY_B"] = keyB
      const server = yield* OpenAiServer.make({
        faultFor: () =>
          LoopbackServer.Faults.status(400, {
            error: { message: `Incorrect API key provided: ${keyA.slice(0, -4)}****; the proxy also holds ${keyB}` }
          })
      })
      const dir = tempDir()
      const text = [
        "name: secrets",
        'data: { source: "synthetic:personas=1,seed=3" }',
        `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
        "models:",
        `  subject: { provider: openai, model: echoes, baseURL: "${server.baseURL}", apiKeyEnv: CUPID_SECRETS_TEST_KEY_A, maxRetries: 0 }`,
        `  other: { provider: openai, model: unused, baseURL: "${server.baseURL}", apiKeyEnv: CUPID_SECRETS_TEST_KEY_B }`,
        "pipeline:",
        "  retriever: { use: recency, k: 2 }",
        "  generator: { use: llm, model: subject, preference: gold }",
        "scorers: [{ use: retrieval, ks: [2] }]"
      ].join("\n")
      const config = { ...(yield* Config.parse(text, "secrets.yaml", {})), out: path.join(dir, "run"), outGiven: true }
      const outcome = yield* Sweeps.sweep(config)
      expect(outcome.pairs.failed).toBe(3)
      const results = fs.readFileSync(path.join(outcome.out, "results.jsonl"), "utf8")
      expect(results).toContain(
        "request rejected: Incorrect API key provided: [redacted]****; the proxy also holds [redacted]"
      )
      for (const secret of [keyA.slice(0, -4), keyA.slice(4, 12), keyB]) expect(results).not.toContain(secret)
      for (const file of fs.readdirSync(outcome.out)) {
        const p = path.join(outcome.out, file)
        if (fs.statSync(p).isFile()) expect(fs.readFileSync(p, "utf8"), file).not.toContain(keyA.slice(0, -4))
      }
    }).pipe(Effect.provide(NodeContext.layer))
  )
})
