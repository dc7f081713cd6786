// The authors' prompt files: read from a checkout or a hash-checked download, refused with a
// message that says how to get them, and rendered as their code renders (checked against values
// written by hand here; the sweep-level comparison with their own code is in experiments'
// reference-fidelity test).
import { describe, expect } from "@effect/vitest"
import { it } from "../src/testing/NodeTest.js"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as PromptTemplate from "../src/PromptTemplate.js"
import * as Python from "../src/Python.js"
import * as ReferencePrompts from "../src/ReferencePrompts.js"
import * as ReferenceCheckout from "../src/testing/ReferenceCheckout.js"

const checkout = ReferenceCheckout.dir
const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "reference-prompts-"))

/** A copy of the pinned files, one of them changed by `edit`. */
const copyWith = (edit?: { file: string; text: string }): string => {
  const dir = tmp()
  for (const f of Object.values(ReferencePrompts.files)) {
    fs.mkdirSync(path.dirname(path.join(dir, f.path)), { recursive: true })
    fs.copyFileSync(path.join(checkout, f.path), path.join(dir, f.path))
  }
  if (edit !== undefined) fs.writeFileSync(path.join(dir, edit.file), edit.text)
  return dir
}

const inferSpec = { plugin: "llm", required: ["curr_request", "interaction_log"] }
const withService = <A, E, R>(service: ReferencePrompts.Service, effect: Effect.Effect<A, E, R>) =>
  Effect.provideService(effect, ReferencePrompts.ReferencePrompts, service)

describe("ReferencePrompts: where the files come from", () => {
  it.effect("reads a checkout whose files match the pinned hashes", () =>
    Effect.gen(function* () {
      ReferenceCheckout.need()
      const service = ReferencePrompts.make({ dir: checkout, cacheDir: tmp() })
      const t = yield* withService(service, ReferencePrompts.template("infer", inferSpec))
      expect(t.placeholders).toEqual(["interaction_log", "curr_request"])
      const [system, user] = PromptTemplate.render(t, { curr_request: "<R>", interaction_log: "<L>" })
      expect(system!.role).toBe("system")
      expect(user!.content.indexOf("<L>")).toBeLessThan(user!.content.indexOf("<R>"))
      // The inference system prompt is sent as written: a checkout is its only source.
      expect(system!.content).toBe(
        fs
          .readFileSync(path.join(checkout, ReferencePrompts.files.infer.path), "utf8")
          .match(/system_prompt: \|-\n([\s\S]*?)\n\nuser_prompt/)![1]!
          .split("\n")
          .map((l) => l.slice(2))
          .join("\n")
      )
    })
  )

  it.effect("refuses a changed file, naming it, both hashes and how to get the pinned one", () =>
    Effect.gen(function* () {
      ReferenceCheckout.need()
      const dir = copyWith({ file: ReferencePrompts.files.judge.path, text: "system_prompt: x\nuser_prompt: y\n" })
      const e = yield* Effect.flip(
        withService(
          ReferencePrompts.make({ dir, cacheDir: tmp() }),
          ReferencePrompts.template("judge", { plugin: "judge", required: [] })
        )
      )
      expect(e.message).toContain(path.join(dir, ReferencePrompts.files.judge.path))
      expect(e.message).toContain(`does not match the pinned ${ReferencePrompts.files.judge.sha256}`)
      expect(e.message).toContain(`git -C CUPID checkout ${ReferencePrompts.commit}`)
    })
  )

  it.effect("refuses a checkout that lacks a file", () =>
    Effect.gen(function* () {
      ReferenceCheckout.need()
      const dir = copyWith()
      fs.rmSync(path.join(dir, ReferencePrompts.files.decompose.path))
      const e = yield* Effect.flip(
        withService(ReferencePrompts.make({ dir, cacheDir: tmp() }), ReferencePrompts.read("decompose"))
      )
      expect(e.message).toMatch(
        /preference_decomposer\.yaml: missing from the checkout .*; get the authors' files at commit a8560ca/
      )
    })
  )

  it.live("downloads the pinned commit's files once, checks them, and keeps them in the cache", () =>
    Effect.gen(function* () {
      ReferenceCheckout.need()
      const requested: Array<string> = []
      const served = copyWith({ file: ReferencePrompts.files.judge.path, text: "tampered" })
      const server = yield* Effect.acquireRelease(
        Effect.async<http.Server>((resume) => {
          const s = http.createServer((req, res) => {
            requested.push(req.url ?? "")
            const rel = (req.url ?? "").replace(`/${ReferencePrompts.commit}/`, "")
            const file = path.join(served, rel)
            if (!fs.existsSync(file)) return void res.writeHead(404).end()
            res.writeHead(200).end(fs.readFileSync(file))
          })
          s.listen(0, "127.0.0.1", () => resume(Effect.succeed(s)))
        }),
        (s) => Effect.sync(() => s.close())
      )
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      const cacheDir = tmp()
      const first = yield* ReferencePrompts.make({ cacheDir, url }).read("infer")
      expect("text" in first && first.text).toBe(
        fs.readFileSync(path.join(checkout, ReferencePrompts.files.infer.path), "utf8")
      )
      expect(requested).toEqual([`/${ReferencePrompts.commit}/${ReferencePrompts.files.infer.path}`])
      // A second service (a later sweep) reads the cached copy without a request.
      yield* ReferencePrompts.make({ cacheDir, url }).read("infer")
      expect(requested).toHaveLength(1)
      // A tampered download is refused and not kept.
      const e = yield* Effect.flip(ReferencePrompts.make({ cacheDir, url }).read("judge"))
      expect(e.message).toContain("does not match the pinned")
      expect(fs.existsSync(path.join(cacheDir, ReferencePrompts.commit, ReferencePrompts.files.judge.path))).toBe(false)
    }).pipe(Effect.scoped)
  )

  it.live("without a checkout or network: an error saying how to get them, or stand-ins for a dry run", () =>
    Effect.gen(function* () {
      const opts = { cacheDir: tmp(), url: "http://127.0.0.1:9" }
      const e = yield* Effect.flip(ReferencePrompts.make(opts).read("match"))
      expect(e.message).toMatch(/set CUPID_REFERENCE_DIR to that directory/)
      const told: Array<string> = []
      const dry = ReferencePrompts.make({ ...opts, placeholders: true, onPlaceholder: (f) => told.push(f) })
      const t = yield* withService(
        dry,
        ReferencePrompts.template("match", { plugin: "m", required: ["examples", "preference", "checklist"] })
      )
      const [system] = PromptTemplate.render(t, { examples: "", preference: "p", checklist: "1. c" })
      expect(system!.content.length).toBeGreaterThan(ReferencePrompts.files.match.bytes - 2)
      expect(told).toEqual([ReferencePrompts.files.match.path])
    })
  )
})

describe("ReferencePrompts: rendering as the authors' code does", () => {
  it("renders the interaction log: sessions from 1, User / AI Assistant headings, --- after each, stripped", () => {
    const log = ReferencePrompts.interactionLog([
      {
        dialogue: [
          { role: "user", content: "Plan a trip." },
          { role: "assistant", content: "Here is a plan." }
        ]
      },
      { dialogue: [{ role: "user", content: "Thanks" }] }
    ])
    expect(log).toBe(
      "### Session 1\n\n#### User\n\nPlan a trip.\n\n#### AI Assistant\n\nHere is a plan.\n\n---\n\n### Session 2\n\n#### User\n\nThanks\n\n---"
    )
    expect(ReferencePrompts.interactionLog([])).toBe("")
  })

  it.effect(
    "reads the matcher's 8 examples from the module's literal and renders them as json.dumps(indent=2) blocks",
    () =>
      Effect.gen(function* () {
        ReferenceCheckout.need()
        const examples = (yield* withService(
          ReferencePrompts.make({ dir: checkout, cacheDir: tmp() }),
          ReferencePrompts.matcherExamples
        ))!
        expect(examples).toHaveLength(8)
        expect(examples.every((e) => e.checklist.length >= 3)).toBe(true)
        const one = ReferencePrompts.renderMatcherExamples([
          {
            preference: "P é",
            checklist: [
              ["Is it A?", 1],
              ["Is it B?", 0.5],
              ["Is it C?", 0]
            ]
          }
        ])
        expect(one).toBe(
          [
            "#### Preference\n\nP é\n\n#### Output\n\n```json",
            '{\n  "results": [\n    {\n      "index": 1,\n      "entry": "Is it A?",\n      "label": "Fully Covered"\n    },',
            '    {\n      "index": 2,\n      "entry": "Is it B?",\n      "label": "Partially Covered"\n    },',
            '    {\n      "index": 3,\n      "entry": "Is it C?",\n      "label": "Not Covered"\n    }\n  ]\n}\n```\n\n---'
          ].join("\n")
        )
        expect(ReferencePrompts.renderMatcherExamples([{ preference: "x", checklist: [["caf\u00e9?", 1]] }])).toContain(
          '"caf\\u00e9?"'
        )
      })
  )
})

describe("Python behaviours", () => {
  it("reads literals: nested lists and dicts in order, both quotes, escapes, comments, trailing commas", () => {
    const v = Python.assignedLiteral(
      'X = 1\nEXAMPLES = [\n  # a note\n  {\'a\': "x\\ny", "b": [1, 0.5, True, None],},\n]\n',
      "EXAMPLES"
    )
    expect(v).toEqual([
      {
        entries: [
          ["a", "x\ny"],
          ["b", [1, 0.5, true, null]]
        ]
      }
    ])
    expect(Python.assignedLiteral("EXAMPLES = [1, 2", "EXAMPLES")).toMatch(/expected ',' or '\]'/)
    expect(Python.assignedLiteral("Y = 1", "EXAMPLES")).toBe("no assignment to EXAMPLES")
  })

  it("strips what str.strip() strips and float() reads what float() reads", () => {
    expect(Python.strip("\x1c\u00a0 x \n\x1f")).toBe("x")
    expect(Python.strip("\ufeffx")).toBe("\ufeffx")
    expect([" 7 ", "7.5", "1_0", "-3e1", "inf", "seven", "7/10", ""].map(Python.float)).toEqual([
      7,
      7.5,
      10,
      -30,
      Infinity,
      undefined,
      undefined,
      undefined
    ])
  })

  it("reads Python format strings as slots and literal braces, and refuses what Python refuses", () => {
    expect(PromptTemplate.fromPythonFormat('{{"a": {x}}}')).toEqual(['{"a": ', { slot: "x" }, "}"])
    expect(PromptTemplate.fromPythonFormat("a } b")).toMatch(/single '\}'/)
    expect(PromptTemplate.fromPythonFormat("{0}")).toMatch(/unsupported format field/)
  })
})
