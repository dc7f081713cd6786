/**
 * The paper's path checked against the CUPID authors' own code. A sweep with the authors' prompts
 * (`prompts: reference`) runs through the compiled CLI (`npx cupid-lab`) against a loopback OpenAI-compatible server that
 * answers every call from a script keyed by the call's messages. The same answers, by the same
 * keys, are then given to the authors' evaluation code (tools/reference/harness.py runs their
 * evaluate() and aggregate_results() on the same instances). Their code only finds an answer when
 * it sends byte for byte the messages the project sent, so:
 * - every call of theirs is answered (none missing) and the two sets of calls are equal: the
 *   messages are identical for inference (full history and oracle sessions), generation, the
 *   decomposer, the matcher (GPT-4o style and PrefMatcher) and the judge;
 * - the parameters each call carries (temperature, token limit and its name) are the same;
 * - per cell the project makes their calls, call for call, and fails exactly the instances their
 *   code drops;
 * - pooled precision, recall and F1 and the judge mean are identical.
 *
 * The data is generated with a seed no other test uses. Three scripts: one answers only in the
 * authors' formats (compared under `accounting: strict`, the harness's non-defective path); one
 * adds what their harness counts as 0 or truncates (unreadable matcher answers, labels that are not
 * exact, surplus entries, decimal and unlabelled judge scores), compared under `accounting:
 * reference`; one gives inference answers their reader and the project's read differently,
 * unreadable decompositions and replies with reasoning, compared under `accounting: reference`
 * with `thinking: keep`.
 */
import { Domain } from "@cupid-lab/core"
import { Synthetic } from "@cupid-lab/data"
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { ReferenceHarness } from "@cupid-lab/scorers/testing"
import { Calls, type ResultLine } from "@cupid-lab/results"
import { NodeFileSystem } from "@effect/platform-node"

import { beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

import { parse as parseYaml, stringify as stringifyYaml } from "yaml"

import { type ChatBody, kindOf } from "./fixtures/paperModel.js"
import { buildCli, cleanEnv, lines, runProcess, tempDir } from "./support.js"

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))
const compiled = path.join(repoRoot, "packages", "experiments", "dist", "cli.mjs")
const subject = "test-subject"
const gpt4o = "gpt-4o-2024-11-20"
const prefmatcher = "kixlab/prefmatcher-7b"

type Script = "formats" | "defects" | "reading"
interface Variant {
  readonly name: string
  readonly script: Script
  readonly accounting: "strict" | "reference"
  readonly matcher: typeof gpt4o | typeof prefmatcher
  /** The inferrer's and generator's `thinking` option (absent: the default, strip). */
  readonly thinking?: "keep"
  /**
   * Run configs/paper-ablations.yaml as shipped (its models, pipeline and scorers, so its defaults:
   * reference accounting, thinking kept), with only its first two cells, data and endpoints set.
   */
  readonly shipped?: true
}

const labels = ["Fully Covered", "Partially Covered", "Not Covered"] as const

/** The scripted answer to one call, a function of its messages alone. */
const answerOf = (body: ChatBody, key: string, script: Script): string => {
  const h = parseInt(key.slice(0, 8), 16)
  const user = body.messages
    .filter((m) => m.role === "user")
    .map((m) => m.content)
    .join("\n")
  const defects = script === "defects"
  const reading = script === "reading"
  switch (kindOf(body)) {
    case "infer":
      if (reading && h % 6 < 3) return readingAnswers[h % 6]!(h, key)
      return `### Analysis\n\nThe user wanted care in session ${h % 8}.\n\n### Most Likely Preference\n\nAnswers should follow rule ${h % 97} (${key.slice(0, 6)}).\nA second line the authors' parser drops.`
    case "generate":
      return reading && h % 2 === 0
        ? `<think>\nThe user wants care ${h % 5}.\n</think>\n\nReply ${key.slice(0, 8)}.`
        : `Reply ${key.slice(0, 8)}.`
    case "decompose": {
      if (reading && h % 5 === 0) return "The preference is too vague to split into checks."
      const items = Array.from(
        { length: 1 + (h % 4) },
        (_, i) => `Does the answer meet part ${i + 1} of ${key.slice(0, 6)}?`
      )
      return `**Analysis**\n\nSplit in ${items.length}.\n\n**Checklist**\n\n\`\`\`json\n${JSON.stringify({ checklist: items }, null, 2)}\n\`\`\``
    }
    case "match": {
      const n = (user.match(/^\d+\. /gm) ?? []).length
      if (defects && h % 7 === 0) return "I cannot tell which entries are covered."
      const entries = Array.from({ length: defects && h % 7 === 2 ? n + 1 : n }, (_, i) => ({
        index: i + 1,
        label: defects && h % 7 === 1 && i === 0 ? "Partially covered" : labels[Math.floor(h / 3 ** i) % 3]!
      }))
      const isPrefmatcher = body.model === prefmatcher
      return isPrefmatcher
        ? JSON.stringify(entries)
        : `\`\`\`json\n${JSON.stringify({ results: entries }, null, 2)}\n\`\`\``
    }
    case "judge": {
      const score = 1 + (h % 10)
      const written = !defects
        ? `${score}`
        : [`${score - 0.5 < 1 ? 1.5 : score - 0.5}`, `${score}/10`, `**${score}**`, `${score}`, `${score}`][h % 5]!
      return defects && h % 5 === 3
        ? `The answer meets most items.\n\nScore: ${score}`
        : `### Evaluation of AI Assistant's Response\n\n1. Checked.\n\n### Evaluation Label\n\nGood\n\n### Evaluation Score\n\n${written}`
    }
    default:
      throw new Error(`unrecognized call: ${JSON.stringify(body.messages).slice(0, 200)}`)
  }
}

/**
 * The `reading` script's inference answers that the authors' reader and the project's lenient one
 * read differently: no `### Most Likely Preference` heading (their code drops the instance), the
 * heading with nothing after it (they decompose an empty preference), and a reasoning block that
 * holds the heading before the final answer does (they read the first one, inside the block).
 */
const readingAnswers: ReadonlyArray<(h: number, key: string) => string> = [
  (h, key) =>
    `### Analysis\n\nThe user wanted care.\n\n### Preference\n\nAnswers should follow rule ${h % 97} (${key.slice(0, 6)}).`,
  () => "### Analysis\n\nNothing in the sessions bears on this request.\n\n### Most Likely Preference\n\n",
  (h, key) =>
    `<think>\nA first draft.\n### Most Likely Preference\n\nDrafts should follow rule ${h % 89} (${key.slice(0, 6)}).\n</think>\n\n### Analysis\n\nOn reflection.\n\n### Most Likely Preference\n\nAnswers should follow rule ${h % 97}.`
]

/** The shipped paper-ablations.yaml with its full-history and oracle-sessions cells only, on `data`. */
const shippedText = (data: string, dir: string): string => {
  const shipped = parseYaml(fs.readFileSync(path.join(repoRoot, "configs", "paper-ablations.yaml"), "utf8")) as {
    data: Record<string, unknown>
    cells: ReadonlyArray<{ readonly name: string }>
  }
  return stringifyYaml({
    ...shipped,
    name: "fidelity",
    data: { ...shipped.data, source: data },
    cacheDir: path.join(dir, "cache"),
    cells: shipped.cells.filter((c) => c.name === "full-history" || c.name === "oracle-sessions")
  })
}

const configText = (v: Variant, data: string, baseURL: string, dir: string) =>
  v.shipped === true ? shippedText(data, dir) : explicitText(v, data, baseURL, dir)

const explicitText = (v: Variant, data: string, baseURL: string, dir: string) => `
name: fidelity
data: { source: ${JSON.stringify(data)} }
seed: 7
cacheDir: ${JSON.stringify(path.join(dir, "cache"))}
models:
  subject: { provider: openai, model: ${subject}, baseURL: "${baseURL}", temperature: 0 }
  evaluator: { provider: openai, model: ${gpt4o}, baseURL: "${baseURL}", temperature: 0, systemRole: developer, maxTokensParam: max_completion_tokens }
  matcher:
    provider: openai
    model: ${v.matcher}
    baseURL: "${baseURL}"
    temperature: 0
    systemRole: ${v.matcher === prefmatcher ? "system" : "developer"}
    maxTokensParam: ${v.matcher === prefmatcher ? "max_tokens" : "max_completion_tokens"}
pipeline:
  retriever: all
  inferrer: { use: llm, model: subject, prompts: reference${v.thinking === undefined ? "" : `, thinking: ${v.thinking}`} }
  generator: { use: llm, model: subject, preference: none, prompts: reference${v.thinking === undefined ? "" : `, thinking: ${v.thinking}`} }
cells:
  - name: full-history
  - name: oracle-sessions
    retriever: oracle
scorers:
  - use: preference-match
    decomposer: { model: evaluator, prompts: reference }
    matcher: { model: matcher, prompts: reference }
    accounting: ${v.accounting}
  - { use: judge, model: evaluator, prompts: reference, accounting: ${v.accounting} }
`

/**
 * The key of a call from the run's transcript, whose messages carry the roles the stage asked for:
 * the evaluator's system message went out as `developer`, so the key is whichever the server saw.
 */
const wireKey = (messages: ReadonlyArray<ReferenceHarness.Message>, served: ReadonlyMap<string, string>): string => {
  const asSent = ReferenceHarness.keyOf(messages)
  const developer = ReferenceHarness.keyOf(
    messages.map((m) => (m.role === "system" ? { role: "developer", content: m.content } : m))
  )
  return served.has(asSent) ? asSent : developer
}

/** The compiled CLI a user runs (`npx cupid-lab`), rebuilt first when a source is newer. */
const runCli = (args: ReadonlyArray<string>, env: Record<string, string>) =>
  runProcess(process.execPath, [compiled, ...args], { cwd: repoRoot, env })

const childEnv = (): Record<string, string> => ({
  ...cleanEnv(),
  NO_COLOR: "1",
  OPENAI_API_KEY: "sk-test-fidelity",
  CUPID_REFERENCE_DIR: ReferenceHarness.referenceDir
})

const dataOf = (row: Domain.CupidRow) => ({
  current_request: row.current_request,
  current_contextual_preference: row.current_contextual_preference,
  current_checklist: row.current_checklist,
  prior_interactions: row.prior_interactions
})

const variants: ReadonlyArray<Variant> = [
  {
    name: "authors' formats, strict accounting, GPT-4o matcher",
    script: "formats",
    accounting: "strict",
    matcher: gpt4o
  },
  {
    name: "defective answers, reference accounting, GPT-4o matcher",
    script: "defects",
    accounting: "reference",
    matcher: gpt4o
  },
  {
    name: "defective answers, reference accounting, PrefMatcher-7B",
    script: "defects",
    accounting: "reference",
    matcher: prefmatcher
  },
  {
    name: "answers the two readers read differently, the shipped paper-ablations.yaml with only endpoints set",
    script: "reading",
    accounting: "reference",
    matcher: gpt4o,
    thinking: "keep",
    shipped: true
  }
]

beforeAll(buildCli)

describe("the authors' prompts, parsing and arithmetic, against their own code", () => {
  // Three personas of a seed no other test uses: 9 instances, 3 of each type.
  const rows = [...Synthetic.generate({ ...Synthetic.defaults, personas: 3, seed: 61_803 })]

  for (const v of variants) {
    it.scopedLive(v.name, () =>
      Effect.gen(function* () {
        ReferenceHarness.need()
        const table = new Map<string, string>()
        const bodies = new Map<string, ChatBody & Record<string, unknown>>()
        const server = yield* OpenAiServer.make({
          chat: (raw) => {
            const body = raw as ChatBody & Record<string, unknown>
            const key = ReferenceHarness.keyOf(body.messages)
            const text = answerOf(body, key, v.script)
            table.set(key, text)
            bodies.set(key, body)
            return text
          }
        })
        const dir = tempDir("cupid-fidelity-")
        const data = path.join(dir, "data.jsonl")
        fs.writeFileSync(data, rows.map((r) => JSON.stringify(r)).join("\n") + "\n")
        const config = path.join(dir, "fidelity.yaml")
        fs.writeFileSync(config, configText(v, data, server.baseURL, dir))
        const out = path.join(dir, "run")
        const endpoints =
          v.shipped === true
            ? {
                CUPID_MODEL: subject,
                CUPID_BASE_URL: server.baseURL,
                CUPID_EVAL_BASE_URL: server.baseURL,
                CUPID_MATCHER_BASE_URL: server.baseURL
              }
            : {}
        const run = yield* runCli(["sweep", "--config", config, "--out", out], { ...childEnv(), ...endpoints })
        expect(run.code, run.stderr + run.stdout).toBe(0)

        const results = lines(path.join(out, "results.jsonl")).map((l) => JSON.parse(l) as ResultLine.ResultLine)
        const failed = results.filter((r) => r.status === "failed")
        if (v.script !== "reading") expect(failed.map((r) => r.error?.message)).toEqual([])
        const summary = JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8")) as ResultLine.Summary

        // The oracle's sessions, as the authors' code would be given them: the filtered history.
        const oracleOf = new Map(
          results.filter((r) => r.cellName === "oracle-sessions").map((r) => [r.instance, r.selected ?? []])
        )
        const instances = (oracle: boolean) =>
          rows.map((row) => {
            const id = Domain.fromRow(row).id
            const keep = new Set((oracleOf.get(id) ?? []).map((s) => Number(s.slice(1)) - 1))
            const d = dataOf(row)
            return {
              name: id,
              data: oracle ? { ...d, prior_interactions: d.prior_interactions.filter((_, i) => keep.has(i)) } : d
            }
          })
        const answers = Object.fromEntries(table)
        const theirs = (oracle: boolean) =>
          Effect.promise((): Promise<ReferenceHarness.Evaluated> =>
            ReferenceHarness.run("evaluate", {
              subject,
              evaluator: gpt4o,
              use_matcher: v.matcher === prefmatcher,
              task: "both",
              instances: instances(oracle),
              answers
            })
          )
        const full = yield* theirs(false)
        const oracle = yield* theirs(true)

        // Every call of theirs found its answer: the messages are byte-identical.
        expect(full.missing).toEqual([])
        expect(oracle.missing).toEqual([])
        expect(full.errors).toEqual({})
        const theirCalls = [...full.calls, ...oracle.calls]
        expect(new Set(theirCalls.map((c) => c.key))).toEqual(new Set(table.keys()))
        // Call for call, per cell: the same requests, as often (the cache's answers included).
        const cellNames = new Map(results.map((r) => [r.cell, r.cellName]))
        const ours = new Map<string, Array<string>>()
        // Read as the viewer reads them: a call that refers to its first record gets its request back.
        const callsFile = path.join(out, "calls.jsonl")
        for (const instance of new Set(lines(callsFile).map((l) => (JSON.parse(l) as Calls.Line).instance))) {
          const { byCell } = yield* Calls.ofInstance(callsFile, instance).pipe(Effect.provide(NodeFileSystem.layer))
          for (const { line: l } of byCell.values()) {
            const keys = ours.get(cellNames.get(l.cell)!) ?? []
            for (const c of l.calls) keys.push(wireKey(c.request!.messages!, table))
            ours.set(cellNames.get(l.cell)!, keys)
          }
        }
        expect(ours.get("full-history")!.sort()).toEqual(full.calls.map((c) => c.key).sort())
        expect(ours.get("oracle-sessions")!.sort()).toEqual(oracle.calls.map((c) => c.key).sort())
        // The pairs the project failed are the instances their code dropped (no results file).
        for (const [cell, ref] of [
          ["full-history", full],
          ["oracle-sessions", oracle]
        ] as const) {
          expect(
            failed
              .filter((r) => r.cellName === cell)
              .map((r) => r.instance)
              .sort()
          ).toEqual(
            rows
              .map((row) => Domain.fromRow(row).id)
              .filter((id) => !(id in ref.files))
              .sort()
          )
        }
        const stages = new Set(theirCalls.map((c) => kindOf({ messages: c.messages })))
        expect(stages).toEqual(new Set(["infer", "generate", "decompose", "match", "judge"]))
        // ... and carry the same parameters (the model of the decomposer is fixed in their code).
        for (const c of theirCalls) {
          const body = bodies.get(c.key)!
          for (const [k, value] of Object.entries(c.params))
            expect([c.key.slice(0, 8), k, body[k]]).toEqual([c.key.slice(0, 8), k, value])
          expect(body.temperature === undefined).toBe(c.params["temperature"] === undefined)
          expect(body.model).toBe(kindOf({ messages: c.messages }) === "decompose" ? gpt4o : c.model)
        }

        // Their pooled P, R, F1 and judge mean equal the project's, per cell.
        const metric = (cell: string, name: string) =>
          summary.cells.find((c) => c.name === cell)!.slices.all.metrics[name]?.mean
        for (const [cell, ref] of [
          ["full-history", full],
          ["oracle-sessions", oracle]
        ] as const) {
          const agg = ref.aggregate as {
            inference: { precision: number; recall: number; f1: number }
            generation: { average_score: number; n_instances: number }
          }
          expect(agg.generation.n_instances).toBe(Object.keys(ref.files).length)
          expect([
            cell,
            metric(cell, "inference.precision_micro"),
            metric(cell, "inference.recall_micro"),
            metric(cell, "inference.f1_micro"),
            metric(cell, "generation.score")
          ]).toEqual([
            cell,
            agg.inference.precision,
            agg.inference.recall,
            agg.inference.f1,
            agg.generation.average_score
          ])
        }
        if (v.script === "defects") {
          // The defects were served, so the comparison covered the authors' zero and truncation rules.
          const served = [...table.values()]
          expect(served.some((a) => a.startsWith("I cannot tell"))).toBe(true)
          expect(served.some((a) => a.includes("Partially covered"))).toBe(true)
          expect(served.some((a) => /Score\n\n\d+\.5$/.test(a) || /Score\n\n\d+\/10$/.test(a))).toBe(true)
        }
        if (v.script === "reading") {
          // Each case was served and took its course: instances dropped for a missing heading and
          // for an unreadable decomposition, an empty preference decomposed, the first heading read.
          const reasons = failed.map((r) => r.error?.message ?? "")
          expect(reasons.some((m) => m.includes('no "### Most Likely Preference" heading'))).toBe(true)
          expect(reasons.some((m) => m.includes("decomposer") && m.includes("no response is generated"))).toBe(true)
          expect(reasons.every((m) => m.includes("no response is generated"))).toBe(true)
          const rendered = yield* Effect.promise(() =>
            ReferenceHarness.run("render", {
              subject,
              evaluator: gpt4o,
              calls: [{ stage: "decompose", args: { preference: "" } }]
            })
          )
          const [emptyDecomposition] = rendered.calls as ReadonlyArray<ReferenceHarness.Call>
          expect(theirCalls.some((c) => c.key === emptyDecomposition!.key)).toBe(true)
          const decomposed = theirCalls.filter((c) => kindOf({ messages: c.messages }) === "decompose")
          expect(decomposed.some((c) => c.messages[1]!.content.includes("Drafts should follow rule"))).toBe(true)
          // The replies kept their reasoning, and the judge read it as the authors' judge does.
          const judged = theirCalls.filter((c) => kindOf({ messages: c.messages }) === "judge")
          expect(judged.some((c) => c.messages[1]!.content.includes("<think>"))).toBe(true)
        }
      })
    )
  }
})
