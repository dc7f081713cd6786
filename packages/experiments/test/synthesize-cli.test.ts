/**
 * `cupid-lab synthesize` through the compiled CLI (packages/experiments/dist/cli.mjs) against a
 * loopback OpenAI-compatible server whose every answer fails: no persona completes, and the run
 * still writes failures.json and validation.json, then exits with 1 and a message pointing at them.
 */
import { OpenAiServer, LoopbackServer } from "@cupid-lab/providers/testing"

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { beforeAll } from "vitest"
import { buildCli, cleanEnv, runProcess, tempDir, writeConfig } from "./support.js"

const repo = fileURLToPath(new URL("../../../", import.meta.url))
const cli = path.join(repo, "packages", "experiments", "dist", "cli.mjs")

beforeAll(buildCli)

const synthConfig = (baseURL: string) =>
  [
    "seed: 1",
    "out: out",
    "cacheDir: cache",
    "models:",
    `  writer: { provider: openai, model: failing-writer, baseURL: "${baseURL}", maxRetries: 0 }`,
    "roles: { persona: writer, user: writer, assistant: writer }",
    "personas:",
    "  count: 2",
    '  seeds: ["A hospital pharmacist who checks prescriptions.", "A restaurant chef who plans menus."]',
    "concurrency: { personas: 1, sessions: 1 }"
  ].join("\n") + "\n"

describe("synthesize, when no persona completes", () => {
  it.scopedLive("writes failures.json and validation.json and exits with 1, naming them", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        faultFor: () => LoopbackServer.Faults.serverError(500, "the model is down")
      })
      const dir = tempDir()
      writeConfig(dir, synthConfig(server.baseURL), "synth.yaml")
      const r = yield* runProcess(process.execPath, [cli, "synthesize", "--config", "synth.yaml"], {
        cwd: dir,
        env: { ...cleanEnv(), OPENAI_API_KEY: "sk-test" }
      })
      expect(r.code, r.stderr).toBe(1)
      expect(r.stderr).not.toContain("WriteZero")
      const out = path.join(dir, "out")
      expect(r.stderr).toContain(
        `error: ${out}: no persona is complete (0 of 2), so no instance was built: 2 units failed this run ` +
          "(the first: persona of persona_001: persona model: openai/failing-writer: server error: the model is down (HTTP 500)); " +
          `every failure is in ${out}/failures.json; the counts are in ${out}/validation.json. Rerun the same command to retry the failed units\n`
      )
      expect(r.stdout).toContain("personas: 0/2 complete")
      // Both persona calls were sent and failed; nothing else was asked.
      expect(server.requests).toHaveLength(2)

      const failures = JSON.parse(fs.readFileSync(path.join(out, "failures.json"), "utf8")) as {
        failures: Array<{ stage: string; persona: string; reason: string }>
      }
      expect(failures.failures.map((f) => [f.stage, f.persona])).toEqual([
        ["persona", "persona_001"],
        ["persona", "persona_002"]
      ])
      expect(failures.failures[0]!.reason).toContain("the model is down")
      const validation = JSON.parse(fs.readFileSync(path.join(out, "validation.json"), "utf8")) as {
        summary: Record<string, unknown>
      }
      expect(validation.summary).toMatchObject({ personas: 2, complete: 0, instances: 0, valid: 0, excluded: 0 })
      // The instance files hold no instance.
      expect(fs.readFileSync(path.join(out, "instances.jsonl"), "utf8")).toBe("")
      expect(fs.existsSync(path.join(out, "instances.parquet"))).toBe(true)
    })
  )
})
