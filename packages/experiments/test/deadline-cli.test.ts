/**
 * A model server that trickles its answer (headers at once, then a byte every 200 ms), through the
 * compiled CLI a user runs: with `timeoutMs: 2000` and no retries the pair fails at the deadline,
 * not when the body ends (which takes minutes), and the failure says so.
 */
import { OpenAiServer, LoopbackServer } from "@cupid-lab/providers/testing"

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

beforeAll(buildCli)

describe("timeoutMs through the compiled CLI", () => {
  it.scopedLive("a trickling server fails the pair at the deadline, named in results.jsonl", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ faults: [LoopbackServer.Faults.trickle(200)] })
      const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-deadline-"))
      fs.writeFileSync(
        path.join(dir, "slow.yaml"),
        [
          "name: slow",
          'data: { source: "synthetic:personas=1,seed=3", limit: 1 }',
          `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`,
          "models:",
          `  subject: { provider: openai, model: gpt-4o-mini, baseURL: ${JSON.stringify(server.baseURL)}, apiKeyEnv: CUPID_TEST_KEY, timeoutMs: 2000, maxRetries: 0 }`,
          "pipeline:",
          "  retriever: { use: recency, k: 2 }",
          "  inferrer: { use: llm, model: subject }",
          "scorers: [{ use: retrieval, ks: [2] }]"
        ].join("\n") + "\n"
      )
      const r = yield* runProcess(
        process.execPath,
        [
          compiled,
          "sweep",
          "--config",
          path.join(dir, "slow.yaml"),
          "--out",
          path.join(dir, "run"),
          "--allow-failures"
        ],
        {
          cwd: repoRoot,
          env: { ...cleanEnv(), NO_COLOR: "1", CUPID_TEST_KEY: "sk-test-deadline" }
        }
      )
      expect(r.code, r.stderr).toBe(0)
      const line = JSON.parse(fs.readFileSync(path.join(dir, "run", "results.jsonl"), "utf8").split("\n")[0]!) as {
        status: string
        error: { message: string }
      }
      expect(line.status).toBe("failed")
      // Only the deadline writes this reason: the trickled answer would have completed, much later, without it.
      expect(line.error.message).toMatch(/no answer within 2000 ms/)
    })
  )
})
