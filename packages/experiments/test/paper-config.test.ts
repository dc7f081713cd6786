/**
 * configs/paper.yaml as shipped, through the compiled CLI, with nothing but endpoints and keys set:
 * every model's variables point at one loopback OpenAI-compatible server that answers each prompt
 * type deterministically (fixtures/paperModel.ts). On one instance it must send the inference of
 * all ten models of the paper's Table 8 with their decoding, send every evaluation call to
 * gpt-4o-2024-11-20 as the authors' code does, price the whole grid per cell in a dry run, and
 * write paper.md with the published values beside the measured ones.
 */
import { ReferenceCheckout } from "@cupid-lab/core/testing"
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { ResultLine } from "@cupid-lab/results"

import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import { answer, type ChatBody, kindOf, referenceDir } from "./fixtures/paperModel.js"
import { buildCli, cleanEnv, lines, runProcess, tempDir } from "./support.js"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const compiled = path.join(repoRoot, "packages", "experiments", "dist", "cli.mjs")
const shipped = path.join(repoRoot, "configs", "paper.yaml")

/** Table 8's models: the id each is sent under and the decoding it must carry. */
const table8: ReadonlyArray<{ readonly id: string; readonly decoding: Record<string, unknown> }> = [
  { id: "gpt-4o-2024-08-06", decoding: { temperature: 0 } },
  { id: "o3-mini-2025-01-31", decoding: { temperature: undefined } },
  {
    id: "claude-3-7-sonnet-20250219",
    decoding: { temperature: 1, thinking: { type: "enabled", budget_tokens: 1024 } }
  },
  { id: "claude-3-5-sonnet-20240620", decoding: { temperature: 0 } },
  { id: "meta-llama/Meta-Llama-3.1-405B-Instruct-Turbo", decoding: { temperature: 0 } },
  { id: "mistralai/Mistral-7B-Instruct-v0.3", decoding: { temperature: 0 } },
  { id: "Qwen/Qwen2.5-72B-Instruct-Turbo", decoding: { temperature: 0 } },
  { id: "deepseek-ai/DeepSeek-R1", decoding: { temperature: 0 } },
  { id: "gemini-2.0-flash-thinking-exp-01-21", decoding: { temperature: 0 } },
  { id: "gemini-2.0-pro-exp-02-05", decoding: { temperature: 0 } }
]
const prefixes = [
  "GPT4O",
  "O3MINI",
  "CLAUDE37",
  "CLAUDE35",
  "LLAMA405B",
  "MISTRAL7B",
  "QWEN72B",
  "DEEPSEEKR1",
  "GEMINIFLASH",
  "GEMINIPRO",
  "EVAL",
  "MATCHER"
]

const env = (baseURL: string): Record<string, string> => ({
  ...cleanEnv(),
  NO_COLOR: "1",
  OPENAI_API_KEY: "sk-test-openai",
  ANTHROPIC_API_KEY: "sk-test-anthropic",
  TOGETHER_API_KEY: "sk-test-together",
  GEMINI_API_KEY: "sk-test-gemini",
  CUPID_REFERENCE_DIR: referenceDir,
  ...Object.fromEntries(prefixes.map((p) => [`CUPID_${p}_BASE_URL`, baseURL]))
})

beforeAll(buildCli)

describe("configs/paper.yaml: the paper's ten models in one command", () => {
  it.scopedLive("prices every cell, sends Table 8's decoding and the authors' evaluator, and writes paper.md", () =>
    Effect.gen(function* () {
      ReferenceCheckout.need()
      const server = yield* OpenAiServer.make({ chat: (body) => answer(body as ChatBody).text })
      const dir = tempDir("cupid-paper-")
      const config = path.join(dir, "paper.yaml")
      fs.writeFileSync(
        config,
        `${fs.readFileSync(shipped, "utf8")}\ncacheDir: ${JSON.stringify(path.join(dir, "cache"))}\n`
      )
      const out = path.join(dir, "run")
      const args = ["sweep", "--config", config, "--limit", "1", "--out", out]
      const run = (extra: ReadonlyArray<string>) =>
        runProcess(process.execPath, [compiled, ...args, ...extra], { cwd: repoRoot, env: env(server.baseURL) })

      const dry = yield* run(["--dry-run"])
      expect(dry.code, dry.stderr).toBe(0)
      expect(server.requests).toHaveLength(0)
      expect(dry.stdout).toContain("grid: 50 cells")
      expect(dry.stdout).toContain("estimated cost per cell")
      for (const setting of ["full-history", "oracle-sessions", "summaries"])
        expect(dry.stdout).toMatch(new RegExp(`  ${setting} \\[mistral-7b\\]: \\d+ calls to send, \\$`))
      expect(dry.stdout).not.toContain("no price")

      const real = yield* run([])
      expect(real.code, real.stderr + real.stdout).toBe(0)
      const bodies = server.requests.map((r) => r.body as ChatBody & Record<string, unknown>)
      const infers = bodies.filter((b) => kindOf(b) === "infer")
      expect(new Set(infers.map((b) => b.model))).toEqual(new Set(table8.map((m) => m.id)))
      for (const m of table8) {
        const sent = infers.filter((b) => b.model === m.id)
        for (const b of sent) {
          for (const [k, v] of Object.entries(m.decoding)) expect([m.id, k, b[k]]).toEqual([m.id, k, v])
          expect(b.messages.map((x) => x.role)).toEqual([m.id.startsWith("o3") ? "developer" : "system", "user"])
        }
      }
      // Decomposer, matcher and judge: the authors' evaluator, in the developer role, max_completion_tokens.
      const evaluation = bodies.filter((b) => ["decompose", "match", "judge"].includes(kindOf(b) ?? ""))
      expect(evaluation.length).toBeGreaterThan(0)
      expect(new Set(evaluation.map((b) => b.model))).toEqual(new Set(["gpt-4o-2024-11-20"]))
      expect(new Set(evaluation.map((b) => [b.messages[0]!.role, b["temperature"], b["max_tokens"]].join()))).toEqual(
        new Set(["developer,0,"])
      )

      const results = lines(path.join(out, "results.jsonl")).map((l) => JSON.parse(l) as ResultLine.ResultLine)
      expect(results).toHaveLength(50)
      expect(results.filter((r) => r.status !== "ok").map((r) => [r.cellName, r.error?.message])).toEqual([])

      const paper = fs.readFileSync(path.join(out, "paper.md"), "utf8")
      expect(paper).toContain("the CUPID paper's tables beside this run")
      // GPT-4o's row: its published full-history P / R / F1 (36.6 / 52.1 / 43.0) beside the measured ones.
      const gpt4o = paper.split("\n").find((l) => l.startsWith("| GPT-4o "))!
      expect(gpt4o).toContain("| 43.0 |")
      expect(paper).toContain("| Mistral 7B ")
      expect(paper).toContain("Gemini 2.0 Flash Thinking")
      expect(fs.readFileSync(path.join(out, "paper.tex"), "utf8")).toContain("\\begin{table}")
    })
  )
})
