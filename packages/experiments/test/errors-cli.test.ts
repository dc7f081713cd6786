/**
 * `cupid-lab errors sample | tabulate` on real runs: a sweep of two models (a `models.subject` axis)
 * and one of a single unswept model, both against a loopback OpenAI-compatible server whose answers
 * echo the gold preference for some personas and say something unrelated (with markup, commas and
 * quotes) for others, scored by the offline preference match; and two offline runs. The sheet is
 * read back by a parser written here, coded by the test, and tabulated; the shares and Wilson
 * intervals are checked against values computed by hand.
 */
import { Dataset } from "@cupid-lab/data"
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { ErrorTable, type ResultLine } from "@cupid-lab/results"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Stream } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Commands from "../src/cli/Commands.js"
import { commandIo, lines, runPromise, tempDir } from "./support.js"

const source = "synthetic:personas=6,seed=3"
const unrelated = `zzz <script>alert(1)</script> & "quoted", with commas`

const models = (baseURL: string) => [
  "models:",
  `  small: { provider: openai, model: test-small, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, temperature: 0 }`,
  `  big: { provider: openai, model: test-big, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, temperature: 0 }`
]

const swept = (baseURL: string, cache: string) =>
  [
    "name: errs",
    `data: { source: "${source}" }`,
    "seed: 1",
    `cacheDir: ${JSON.stringify(cache)}`,
    ...models(baseURL),
    "pipeline:",
    "  retriever: all",
    "  inferrer: { use: llm, model: subject }",
    "sweep:",
    "  models.subject: [small, big]",
    "cells:",
    "  - name: full-history",
    "  - name: recent",
    "    retriever: { use: recency, k: 2 }",
    "scorers: [{ use: preference-match }]",
    "report: { baseline: full-history }"
  ].join("\n") + "\n"

const unswept = (baseURL: string, cache: string) =>
  [
    "name: single",
    `data: { source: "${source}" }`,
    "seed: 1",
    `cacheDir: ${JSON.stringify(cache)}`,
    "models:",
    `  subject: { provider: openai, model: test-one, baseURL: ${JSON.stringify(baseURL)}, apiKeyEnv: CUPID_TEST_KEY, temperature: 0 }`,
    "pipeline: { retriever: all, inferrer: { use: llm, model: subject } }",
    "scorers: [{ use: preference-match }]"
  ].join("\n") + "\n"

const offline = (scorer: string) =>
  [
    "name: offline",
    `data: { source: "${source}" }`,
    "pipeline: { retriever: all, inferrer: extractive }",
    `scorers: [{ use: ${scorer} }]`
  ].join("\n") + "\n"

interface Built {
  readonly root: string
  readonly run: string
  readonly single: string
  readonly noModel: string
  readonly noF1: string
  readonly instances: ReadonlyMap<string, { request: string; factor: string; preference: string }>
}

/** The four runs, made once for the whole file. */
const built: Promise<Built> = runPromise(
  Effect.scoped(
    Effect.gen(function* () {
      const opened = yield* Dataset.open(source)
      const all = Chunk.toReadonlyArray(yield* Stream.runCollect(opened.instances)).map((i) => ({
        id: i.id,
        personaId: i.personaId,
        request: i.query.request,
        factor: i.gold.factor,
        preference: i.gold.preference
      }))
      const personas = [...new Set(all.map((i) => i.personaId))]
      const server = yield* OpenAiServer.make({
        chat: (body) => {
          const prompt = body.messages.map((m) => m.content).join("\n")
          const hit = all.find((i) => prompt.includes(i.request))
          const echo = hit !== undefined && personas.indexOf(hit.personaId) % 2 === (body.model === "test-big" ? 1 : 0)
          const consistent = hit === undefined ? undefined : all.find((i) => i.id === `${hit.personaId}:consistent`)
          return `### Analysis\n\nSeen.\n\n### Most Likely Preference\n\n${echo && consistent !== undefined ? consistent.preference : unrelated}`
        }
      })
      const root = tempDir("cupid-errors-")
      const cache = path.join(root, "cache")
      const configs = path.join(root, "configs")
      fs.mkdirSync(configs)
      fs.writeFileSync(path.join(configs, "errs.yaml"), swept(server.baseURL, cache))
      fs.writeFileSync(path.join(configs, "single.yaml"), unswept(server.baseURL, cache))
      fs.writeFileSync(path.join(configs, "no-model.yaml"), offline("preference-match"))
      fs.writeFileSync(path.join(configs, "no-f1.yaml"), offline("retrieval"))
      const { err, io } = commandIo(configs)
      const sweep = (name: string) =>
        Effect.gen(function* () {
          const out = path.join(root, "runs", name)
          const code = yield* Commands.main(["sweep", "--config", name, "--out", out], io)
          if (code !== 0) return yield* Effect.dieMessage(`sweep ${name} exited ${code}: ${err.join("")}`)
          return out
        })
      const runs = {
        run: yield* sweep("errs"),
        single: yield* sweep("single"),
        noModel: yield* sweep("no-model"),
        noF1: yield* sweep("no-f1")
      }
      return { root, ...runs, instances: new Map(all.map((i) => [i.id, i])) }
    })
  )
)

// Each test awaits the runs; a failure to make them fails every test with its message.
built.catch(() => undefined)

/** RFC 4180, written here independently of the package's reader. */
const parseCsv = (text: string): Array<Array<string>> => {
  const records: Array<Array<string>> = []
  let record: Array<string> = []
  let field = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') ((field += '"'), i++)
      else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ",") (record.push(field), (field = ""))
    else if (c === "\r" && text[i + 1] === "\n") {
      ;(record.push(field), records.push(record), (record = []), (field = ""), i++)
    } else field += c
  }
  return records
}

const toCsv = (records: ReadonlyArray<ReadonlyArray<string>>): string =>
  records.map((r) => `${r.map((f) => (/[",\r\n]/.test(f) ? `"${f.replace(/"/g, '""')}"` : f)).join(",")}\r\n`).join("")

const sheetOf = (file: string) => {
  const [header, ...rows] = parseCsv(fs.readFileSync(file, "utf8"))
  return rows.map((r) => Object.fromEntries(header!.map((h, i) => [h, r[i]!])))
}

const run = (argv: ReadonlyArray<string>, dir: string) =>
  Effect.gen(function* () {
    const { out, err, io } = commandIo(dir)
    const code = yield* Commands.main(argv, io)
    return { code, out: out.join(""), err: err.join("") }
  })

const summaryOf = (dir: string) =>
  JSON.parse(fs.readFileSync(path.join(dir, "summary.json"), "utf8")) as ResultLine.Summary

/** The lines a sample of `entry` may draw: its cells' ok lines with an F1 below `below`. */
const eligible = (dir: string, entry: string, below: number) => {
  const cells = new Set(
    summaryOf(dir)
      .cells.filter((c) => c.models?.["subject"]?.entry === entry)
      .map((c) => c.id)
  )
  return lines(path.join(dir, "results.jsonl"))
    .map((l) => JSON.parse(l) as ResultLine.ResultLine)
    .filter((r) => cells.has(r.cell) && r.status === "ok" && (r.scores["inference.f1"] as number) < below)
}

const sample = (b: Built, out: string, extra: ReadonlyArray<string>) =>
  run(["errors", "sample", "--run", b.run, "--out", out, "--viewer-root", path.join(b.root, "runs"), ...extra], b.root)

describe("errors sample", () => {
  it.effect(
    "draws a reproducible sample of the model's low-F1 inferences, at most n, with the texts and a viewer link",
    () =>
      Effect.gen(function* () {
        const b = yield* Effect.promise(() => built)
        const dir = tempDir("cupid-errors-sheet-")
        const f1s = eligible(b.run, "small", 2).map((r) => r.scores["inference.f1"] as number)
        // The fixture has inferences on both sides of 0.5, so --below must leave some out.
        expect(f1s.some((f) => f < 0.5) && f1s.some((f) => f >= 0.5)).toBe(true)
        const low = eligible(b.run, "small", 0.5)
        expect(low.length).toBeGreaterThan(5)

        const a = yield* sample(b, path.join(dir, "a.csv"), [
          "--model",
          "small",
          "--n",
          "5",
          "--below",
          "0.5",
          "--seed",
          "7"
        ])
        expect(a.code, a.err).toBe(0)
        expect(a.out).toContain(`sheet: ${path.join(dir, "a.csv")}`)
        expect(a.out).toContain(`5 of ${low.length} inferences of small with F1 below 0.5 (seed 7)`)
        expect(a.out).toContain("the F1 is heuristic")
        const again = yield* sample(b, path.join(dir, "b.csv"), [
          "--model",
          "small",
          "--n",
          "5",
          "--below",
          "0.5",
          "--seed",
          "7"
        ])
        expect(again.code, again.err).toBe(0)
        for (const ext of [".csv", ".codes.csv", ".html"])
          expect(fs.readFileSync(path.join(dir, `b${ext}`))).toEqual(fs.readFileSync(path.join(dir, `a${ext}`)))

        const rows = sheetOf(path.join(dir, "a.csv"))
        expect(rows.map((r) => r["row"])).toEqual(["1", "2", "3", "4", "5"])
        const byKey = new Map(low.map((r) => [`${r.cell} ${r.instance}`, r]))
        for (const r of rows) {
          const line = byKey.get(`${r["cell"]} ${r["instance"]}`)
          expect(line, `${r["cell"]} ${r["instance"]}`).toBeDefined()
          const gold = b.instances.get(r["instance"]!)!
          expect(r["model"]).toBe("test-small")
          expect(r["cell_name"]).toBe(line!.cellName)
          expect(r["type"]).toBe(line!.type)
          expect(Number(r["f1"])).toBeCloseTo(line!.scores["inference.f1"] as number, 3)
          expect(Number(r["f1"])).toBeLessThan(0.5)
          expect(r["request"]).toBe(gold.request)
          expect(r["gold_preference"]).toBe(gold.preference)
          expect(r["inferred_preference"]).toBe(line!.inference!.preference)
          expect(r["factor"]).toBe(gold.factor)
          expect(r["relevant_sessions"]).toBe(
            line!.meta.relevant.map((s) => `${s.slice(1)} (${gold.factor})`).join("; ")
          )
          expect(r["code"]).toBe("")
          expect(r["note"]).toBe("")
          const link = new URL(r["link"]!)
          expect(`${link.origin}${link.pathname}`).toBe("http://127.0.0.1:8377/")
          const params = new URLSearchParams(link.hash.replace(/^#\/instance\?/, ""))
          expect(link.hash.startsWith("#/instance?")).toBe(true)
          expect([params.get("run"), params.get("id")]).toEqual(["errs", r["instance"]])
        }
        expect(new Set(rows.map((r) => `${r["cell"]} ${r["instance"]}`)).size).toBe(5)
        // The markup in an inference is escaped on the page; the codes are listed there and in their own file.
        const page = fs.readFileSync(path.join(dir, "a.html"), "utf8")
        expect(page).not.toContain("<script>")
        expect(page.match(/class="card"/g)?.length).toBe(5)
        for (const code of ["incorrect-context", "shallow-inference", "vague-inference", "other"]) {
          expect(page).toContain(`<code>${code}</code>`)
        }
        expect(parseCsv(fs.readFileSync(path.join(dir, "a.codes.csv"), "utf8")).map((r) => r[0])).toEqual([
          "code",
          "incorrect-context",
          "shallow-inference",
          "vague-inference",
          "other"
        ])

        // The first k rows of a sample of n are the sample of k; another seed draws another sample.
        const three = yield* sample(b, path.join(dir, "three.csv"), [
          "--model",
          "small",
          "-n",
          "3",
          "--below",
          "0.5",
          "--seed",
          "7"
        ])
        expect(three.code, three.err).toBe(0)
        expect(sheetOf(path.join(dir, "three.csv"))).toEqual(rows.slice(0, 3))
        const other = yield* sample(b, path.join(dir, "other.csv"), [
          "--model",
          "small",
          "--n",
          "5",
          "--below",
          "0.5",
          "--seed",
          "8"
        ])
        expect(other.code, other.err).toBe(0)
        const keyOf = (r: Record<string, string>) => `${r["cell"]} ${r["instance"]}`
        expect(sheetOf(path.join(dir, "other.csv")).map(keyOf)).not.toEqual(rows.map(keyOf))
        // n above the eligible count takes them all.
        const every = yield* sample(b, path.join(dir, "every.csv"), [
          "--model",
          "small",
          "--n",
          "500",
          "--below",
          "0.5",
          "--seed",
          "7"
        ])
        expect(every.code, every.err).toBe(0)
        const all = sheetOf(path.join(dir, "every.csv"))
        expect(new Set(all.map((r) => `${r["cell"]} ${r["instance"]}`))).toEqual(new Set(byKey.keys()))
        // Markup, quotes and commas in an inference survive the CSV and are inert on the page.
        expect(all.filter((r) => r["inferred_preference"] === unrelated).length).toBeGreaterThan(0)
        const everyPage = fs.readFileSync(path.join(dir, "every.html"), "utf8")
        expect(everyPage).toContain("zzz &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot;, with commas")
        expect(everyPage).not.toContain("<script>")
      })
  )

  it.effect(
    "selects the model by entry or model id, with or without a sweep axis, and names the models when none matches",
    () =>
      Effect.gen(function* () {
        const b = yield* Effect.promise(() => built)
        const dir = tempDir("cupid-errors-model-")
        const big = yield* sample(b, path.join(dir, "big.csv"), [
          "--model",
          "test-big",
          "--n",
          "500",
          "--below",
          "1",
          "--seed",
          "1"
        ])
        expect(big.code, big.err).toBe(0)
        const rows = sheetOf(path.join(dir, "big.csv"))
        expect(rows.length).toBe(eligible(b.run, "big", 1).length)
        expect(new Set(rows.map((r) => r["model"]))).toEqual(new Set(["test-big"]))
        expect(rows.every((r) => r["cell_name"]!.endsWith("[big]"))).toBe(true)

        // Without a sweep axis the cells still name the entry their inferrer calls: entry and id both select it.
        for (const model of ["subject", "test-one"]) {
          const one = yield* run(
            [
              "errors",
              "sample",
              "--run",
              b.single,
              "--model",
              model,
              "--seed",
              "3",
              "--out",
              path.join(dir, `${model}.csv`)
            ],
            b.root
          )
          expect(one.code, one.err).toBe(0)
          expect(new Set(sheetOf(path.join(dir, `${model}.csv`)).map((r) => r["model"]))).toEqual(new Set(["test-one"]))
        }
        // The default place is <run>/errors/, and a run outside --viewer-root links as if served from its parent.
        const placed = yield* run(["errors", "sample", "--run", b.single, "--model", "subject", "--seed", "3"], b.root)
        expect(placed.code, placed.err).toBe(0)
        const file = path.join(b.single, "errors", "subject-below0.2-seed3.csv")
        expect(placed.out).toContain(`sheet: ${file}`)
        expect(placed.out).toContain(`the links assume \`cupid-lab view --root ${path.dirname(b.single)}\``)
        expect(fs.readFileSync(file, "utf8")).toBe(fs.readFileSync(path.join(dir, "subject.csv"), "utf8"))

        // Texts from another dataset than the run's are refused.
        const otherData = yield* sample(b, path.join(dir, "other-data.csv"), [
          "--model",
          "small",
          "--seed",
          "1",
          "--below",
          "1",
          "--data",
          "synthetic:personas=6,seed=4"
        ])
        expect(otherData.code).toBe(1)
        expect(otherData.err).toContain("the run's dataset (synthetic:personas=6,seed=4) has changed since the run")
        expect(fs.existsSync(path.join(dir, "other-data.csv"))).toBe(false)
        const wrong = yield* sample(b, path.join(dir, "wrong.csv"), ["--model", "smal", "--seed", "1"])
        expect(wrong.code).toBe(1)
        expect(wrong.err).toContain(
          `no cell of the run is bound to model "smal" (did you mean "small"?); its models (entry and model id): small (openai/test-small), big (openai/test-big)`
        )
        const none = yield* run(["errors", "sample", "--run", b.noModel, "--model", "gpt-4o", "--seed", "1"], b.root)
        expect(none.code).toBe(1)
        expect(none.err).toContain(`no cell of the run is bound to model "gpt-4o": its cells call no model`)
        const noF1 = yield* run(["errors", "sample", "--run", b.noF1, "--model", "gpt-4o", "--seed", "1"], b.root)
        expect(noF1.code).toBe(1)
        expect(noF1.err).toContain(
          `the run has no per-instance inference F1 ("inference.f1", written by the preference-match scorer)`
        )
        const badBelow = yield* run(
          ["errors", "sample", "--run", b.run, "--model", "small", "--seed", "1", "--below", "0"],
          b.root
        )
        expect(badBelow.code).toBe(2)
        expect(badBelow.err).toContain("--below expects an F1 in (0, 1]")
        const noSeed = yield* run(["errors", "sample", "--run", b.run, "--model", "small"], b.root)
        expect(noSeed.code).toBe(2)
      })
  )
})

describe("errors tabulate", () => {
  it("Wilson intervals match values computed by hand", () => {
    // p = k/n, z = 1.959964: centre (p + z²/2n)/(1 + z²/n), half width z·sqrt(p(1-p)/n + z²/4n²)/(1 + z²/n).
    const cases: ReadonlyArray<readonly [number, number, number, number]> = [
      [0, 10, 0, 0.27753],
      [2, 10, 0.05668, 0.50984],
      [3, 10, 0.10779, 0.60322],
      [5, 10, 0.23659, 0.76341],
      [10, 10, 0.72247, 1],
      [1, 4, 0.04559, 0.69936]
    ]
    for (const [k, n, lo, hi] of cases) {
      const [l, h] = ErrorTable.wilson(k, n)
      expect([k, n, l], `${k}/${n}`).toEqual([k, n, expect.closeTo(lo, 5)])
      expect(h, `${k}/${n}`).toBeCloseTo(hi, 5)
    }
    expect(ErrorTable.wilson(0, 0).every(Number.isNaN)).toBe(true)
  })

  it.effect("reads sheets coded by a program, shares per model with Wilson intervals, uncoded rows counted", () =>
    Effect.gen(function* () {
      const b = yield* Effect.promise(() => built)
      const dir = tempDir("cupid-errors-tab-")
      const small = path.join(dir, "small.csv")
      const big = path.join(dir, "big.csv")
      for (const [model, file] of [
        ["small", small],
        ["big", big]
      ] as const) {
        const r = yield* sample(b, file, ["--model", model, "--n", "11", "--below", "1", "--seed", "5"])
        expect(r.code, r.err).toBe(0)
      }
      // small: 10 coded (5 incorrect-context, 3 shallow-inference, 2 vague-inference, in several spellings) and 1 left empty.
      const smallCodes = [
        "incorrect-context",
        "Incorrect Context",
        "incorrect_context",
        " incorrect-context ",
        "INCORRECT-CONTEXT",
        "shallow-inference",
        "Shallow inference",
        "shallow-inference",
        "vague-inference",
        "vague inference",
        ""
      ]
      // big: 4 coded (1 other, 3 incorrect-context) and the rest empty.
      const bigCodes = ["other", "incorrect-context", "incorrect-context", "incorrect-context"]
      const code = (file: string, codes: ReadonlyArray<string>) => {
        const [header, ...rows] = parseCsv(fs.readFileSync(file, "utf8"))
        const at = header!.indexOf("code")
        expect(rows.length).toBeGreaterThanOrEqual(codes.length)
        const coded = rows.map((r, i) =>
          r.map((f, j) => (j === at ? (codes[i] ?? "") : j === at + 1 ? `coded by test, row ${i + 1}` : f))
        )
        fs.writeFileSync(file, toCsv([header!, ...coded]))
        return rows.length
      }
      expect(code(small, smallCodes)).toBe(11)
      const bigRows = code(big, bigCodes)

      const out = path.join(dir, "table.md")
      const t = yield* run(["errors", "tabulate", "--sheet", small, "--sheet", big, "--out", out], dir)
      expect(t.code, t.err).toBe(0)
      expect(t.out).toContain(
        "| model | coded | not coded | incorrect-context | shallow-inference | vague-inference | other |"
      )
      expect(t.out).toContain(
        "| test-small | 10 | 1 | 50.0% [23.7%, 76.3%] (5) | 30.0% [10.8%, 60.3%] (3) | 20.0% [5.7%, 51.0%] (2) | 0.0% [0.0%, 27.8%] (0) |"
      )
      // 3/4: centre (0.75 + 0.48)/1.96 = 0.6276, half 0.3310 -> [30.1%, 95.4%]; 1/4 -> [4.6%, 69.9%]; 0/4 -> [0.0%, 49.0%].
      expect(t.out).toContain(
        `| test-big | 4 | ${bigRows - 4} | 75.0% [30.1%, 95.4%] (3) | 0.0% [0.0%, 49.0%] (0) | 0.0% [0.0%, 49.0%] (0) | 25.0% [4.6%, 69.9%] (1) |`
      )
      expect(t.out).toContain(
        `Not coded yet (in no share): test-small: 1 (${small} row 11); test-big: ${bigRows - 4} (${big} row 5`
      )
      expect(t.out).toContain("## Published shares")
      expect(t.out).toContain("| DeepSeek-R1 | incorrect-context | 86.0% |")
      expect(t.out).toContain("The project holds no published share of `vague-inference` or `other`")
      expect(t.out).toContain(`table: ${out}`)
      expect(fs.readFileSync(out, "utf8")).toBe(t.out.replace(`table: ${out}\n`, ""))

      // A coded sheet is never overwritten by a new sample.
      const before = fs.readFileSync(small, "utf8")
      const again = yield* sample(b, small, ["--model", "small", "--n", "11", "--below", "1", "--seed", "5"])
      expect(again.code).toBe(1)
      expect(again.err).toContain(`${small}: exists with other content (a coded sheet?) and is never overwritten`)
      expect(fs.readFileSync(small, "utf8")).toBe(before)
    })
  )

  it.effect("bad sheets fail naming the file, the row and what is wrong", () =>
    Effect.gen(function* () {
      const b = yield* Effect.promise(() => built)
      const dir = tempDir("cupid-errors-bad-")
      const good = path.join(dir, "good.csv")
      const r = yield* sample(b, good, ["--model", "small", "--n", "3", "--below", "1", "--seed", "2"])
      expect(r.code, r.err).toBe(0)
      const [header, ...rows] = parseCsv(fs.readFileSync(good, "utf8"))
      const at = header!.indexOf("code")
      const variant = (name: string, text: string) => {
        const file = path.join(dir, name)
        fs.writeFileSync(file, text)
        return file
      }
      const withCode = (c: string) =>
        toCsv([header!, ...rows.map((row, i) => row.map((f, j) => (j === at ? (i === 1 ? c : "other") : f)))])
      const tabulate = (...files: ReadonlyArray<string>) =>
        run(["errors", "tabulate", ...files.flatMap((f) => ["--sheet", f])], dir)

      const unknown = yield* tabulate(variant("unknown.csv", withCode("shalow")))
      expect(unknown.code).toBe(1)
      // Row 2 of the data starts on line 3 unless row 1 holds a line break.
      expect(unknown.err).toMatch(
        /unknown\.csv: row 2 \(line \d+\): unknown code "shalow" \(did you mean "shallow-inference"\?\); allowed codes: incorrect-context, shallow-inference, vague-inference, other \(or leave it empty: not coded yet\)/
      )
      const twoCodes = yield* tabulate(variant("two.csv", withCode("other; vague-inference")))
      expect(twoCodes.err).toContain(`unknown code "other; vague-inference"`)

      const noCode = yield* tabulate(
        variant(
          "no-code.csv",
          toCsv([header!.filter((_, j) => j !== at), ...rows.map((row) => row.filter((_, j) => j !== at))])
        )
      )
      expect(noCode.code).toBe(1)
      expect(noCode.err).toContain(
        "no-code.csv: the header lacks the column code; a sheet written by `cupid-lab errors sample` has row, run, cell"
      )

      const short = yield* tabulate(variant("short.csv", `${toCsv([header!])}a,b\r\n`))
      expect(short.err).toContain(`short.csv: row 1 (line 2): 2 fields, the header has ${header!.length}`)

      const unclosed = yield* tabulate(variant("unclosed.csv", `${toCsv([header!])}"a,b\r\n`))
      expect(unclosed.err).toContain("unclosed.csv: line 2: a quoted field is never closed")

      const empty = yield* tabulate(variant("empty.csv", ""))
      expect(empty.err).toContain("empty.csv: is empty")

      const missing = yield* tabulate(path.join(dir, "missing.csv"))
      expect(missing.code).toBe(1)
      expect(missing.err).toContain("missing.csv: cannot read")

      const first = variant("first.csv", withCode("other"))
      const second = variant("second.csv", withCode("other"))
      const twice = yield* tabulate(first, second)
      expect(twice.code).toBe(1)
      expect(twice.err).toContain(`second.csv: row 1 (line 2) codes instance ${rows[0]![header!.indexOf("instance")]}`)
      expect(twice.err).toContain(`(first: ${first} row 1); each inference is counted once`)

      const nothing = yield* run(["errors", "tabulate"], dir)
      expect(nothing.code).toBe(2)
      expect(nothing.err).toContain("tabulate needs at least one --sheet")
    })
  )
})
