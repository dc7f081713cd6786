import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Schema } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { ResultLine } from "@cupid-lab/results"
import { Config } from "@cupid-lab/runner"

import * as Commands from "../src/cli/Commands.js"
import * as Sweeps from "../src/Sweeps.js"
import { lines, runPromise, tempDir } from "./support.js"

const io = () => {
  const out: Array<string> = [],
    err: Array<string> = []
  return {
    out,
    err,
    io: {
      configDirs: [],
      stdout: (t: string) => void out.push(t),
      stderr: { write: (t: string) => void err.push(t) }
    }
  }
}

const write = (dir: string, rows: ReadonlyArray<unknown>, name = "preds.jsonl"): string => {
  const file = path.join(dir, name)
  fs.writeFileSync(file, rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n")
  return file
}

const score = (args: ReadonlyArray<string>) =>
  Effect.gen(function* () {
    const t = io()
    const code = yield* Commands.main(["score", "--data", "sample", ...args], t.io)
    return { code, out: t.out.join(""), err: t.err.join("") }
  })

// The bundled sample's labels (packages/data/data/sample.jsonl), 8 prior sessions each:
// d01-chemistry-teacher:consistent relevant s2, s4; :changing relevant s5, s7, stale s1, s3;
// d02-data-analyst:consistent relevant s1.
const d01 = "d01-chemistry-teacher"
const d02 = "d02-data-analyst"
const predictions = [
  { persona_id: d01, instance_type: "consistent", selected: [2, 4], system: "A", preference: "numbered steps" },
  {
    persona_id: d01,
    instance_type: "changing",
    selected: [1, 5],
    ranking: [1, 5, 7, 3, 2, 4, 6, 8],
    scores: [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2],
    system: "A",
    preference: "short answers"
  },
  // No ranking: the selection in the order written is the ranking (s3, then s1).
  { persona_id: d02, instance_type: "consistent", selected: [3, 1], system: "A", preference: "tables" },
  { persona_id: d01, instance_type: "consistent", selected: [8], system: "B", preference: "casual tone" }
]

const dir = tempDir("score-")
const file = write(dir, predictions)
const out = path.join(dir, "run")
const ran = await runPromise(score(["--predictions", file, "--out", out]))
const results = lines(path.join(out, "results.jsonl")).map((l) => JSON.parse(l))
const summary = Schema.decodeUnknownSync(ResultLine.Summary)(
  JSON.parse(fs.readFileSync(path.join(out, "summary.json"), "utf8"))
)
const line = (cell: string, instance: string) => results.find((r) => r.cellName === cell && r.instance === instance)

describe("cupid-lab score", () => {
  it("writes an ordinary run directory", () => {
    expect(ran.code).toBe(0)
    for (const f of ["results.jsonl", "summary.json", "report.md", "report.html", "run.json", "run-id.json"])
      expect(fs.existsSync(path.join(out, f))).toBe(true)
  })

  it("scores each instance's selection and ranking as computed by hand", () => {
    const scores = (instance: string) => line("A", instance).scores
    const consistent = scores(`${d01}:consistent`)
    expect(line("A", `${d01}:consistent`).meta.relevant).toEqual(["s2", "s4"])
    expect([consistent["retrieval.precision"], consistent["retrieval.recall"], consistent["retrieval.mrr"]]).toEqual([
      1, 1, 1
    ])
    const changing = scores(`${d01}:changing`)
    expect(line("A", `${d01}:changing`).meta.relevant).toEqual(["s5", "s7"])
    expect(changing["retrieval.precision"]).toBe(0.5)
    expect(changing["retrieval.recall"]).toBe(0.5)
    expect(changing["retrieval.stale_rate"]).toBe(0.5)
    // s5 is ranked second
    expect(changing["retrieval.mrr"]).toBe(0.5)
    expect(changing["retrieval.ndcg@2"]).toBeCloseTo(1 / Math.log2(3) / (1 + 1 / Math.log2(3)), 12)
    expect(line("A", `${d01}:changing`).selected).toEqual(["s1", "s5"])
    const d02c = scores(`${d02}:consistent`)
    expect(line("A", `${d02}:consistent`).meta.relevant).toEqual(["s1"])
    expect([d02c["retrieval.precision"], d02c["retrieval.recall"], d02c["retrieval.mrr"]]).toEqual([0.5, 1, 0.5])
    expect(line("B", `${d01}:consistent`).scores["retrieval.precision"]).toBe(0)
  })

  it("replays the inferred preferences, scored by the offline preference match", () => {
    expect(line("A", `${d01}:consistent`).inference.preference).toBe("numbered steps")
    expect(line("A", `${d01}:changing`).inference.preference).toBe("short answers")
    expect(line("B", `${d01}:consistent`).inference.preference).toBe("casual tone")
    expect(summary.metrics.map((m) => m.name)).toContain("inference.f1")
  })

  it("makes one cell per system", () => {
    expect(summary.cells.map((c) => c.name)).toEqual(["A", "B"])
    expect(results).toHaveLength(2 * 24)
  })

  it("counts an instance without a prediction as a failed pair, never a score", () => {
    const all = (name: string) => summary.cells.find((c) => c.name === name)!.slices.all!
    expect([all("A").n, all("A").failed]).toEqual([3, 21])
    expect([all("B").n, all("B").failed]).toEqual([1, 23])
    const missing = line("A", `${d02}:changing`)
    expect(missing.status).toBe("failed")
    expect(missing.scores).toEqual({})
    expect(missing.error.message).toContain("no prediction for this instance")
  })

  it.effect("--types and --limit choose the instances scored; lines for the others are ignored, counted once", () =>
    Effect.gen(function* () {
      const target = path.join(dir, "filtered")
      // consistent instances, the first of them in file order: d01-chemistry-teacher:consistent
      const r = yield* score(["--predictions", file, "--out", target, "--types", "consistent", "--limit", "1"])
      expect(r.code, r.err).toBe(0)
      expect(r.err).toContain("24 instances in sample, 1 scored (--types consistent --limit 1)")
      expect(r.err.split("\n").filter((l) => l.includes("ignored"))).toEqual([
        `${file}: 2 lines are for instances outside --types consistent --limit 1: ignored, not scored`
      ])
      const kept = lines(path.join(target, "results.jsonl")).map((l) => JSON.parse(l))
      expect(kept.map((l) => [l.cellName, l.instance, l.status])).toEqual([
        ["A", `${d01}:consistent`, "ok"],
        ["B", `${d01}:consistent`, "ok"]
      ])
      const s = JSON.parse(fs.readFileSync(path.join(target, "summary.json"), "utf8"))
      expect(s.dataset.instances).toBe(1)
      // Every line is still checked against the whole data.
      const bad = write(
        dir,
        [...predictions, { persona_id: "nobody", instance_type: "consistent", selected: [1] }],
        "bad.jsonl"
      )
      const refused = yield* score(["--predictions", bad, "--out", path.join(dir, "bad"), "--types", "consistent"])
      expect(refused.code).toBe(1)
      expect(refused.err).toContain("nobody:consistent")
    })
  )

  it.effect("takes the scorers of --config and replaces its cells", () =>
    Effect.gen(function* () {
      const cfg = path.join(dir, "scorers.yaml")
      fs.writeFileSync(
        cfg,
        "name: other\npipeline: { retriever: bm25 }\nscorers:\n  - { use: retrieval, ks: [1] }\nreport: { baseline: bm25 }\n"
      )
      const target = path.join(dir, "with-config")
      const r = yield* score(["--predictions", file, "--out", target, "--config", cfg])
      expect(r.code, r.err).toBe(0)
      expect(r.err).toContain("its pipeline, sweep, cells, out, name are replaced by the predictions")
      const s = JSON.parse(fs.readFileSync(path.join(target, "summary.json"), "utf8"))
      const names = s.metrics.map((m: { name: string }) => m.name)
      expect(names).toContain("retrieval.ndcg@1")
      expect(names).not.toContain("retrieval.ndcg@2")
      expect(names).not.toContain("inference.f1")
      expect(s.cells.map((c: { name: string }) => c.name)).toEqual(["A", "B"])
    })
  )

  it.effect("merges the shards of a score run into the run one machine writes", () =>
    Effect.gen(function* () {
      const shards = [1, 2].map((i) => path.join(dir, `shard-${i}`))
      // Only 4 of the 48 pairs have a prediction, and which shard a pair falls to hashes its cell's id,
      // which holds the predictions file's path (a new temporary directory each run): for about one
      // directory in eight, one shard gets none of the 4, every pair it runs fails, and without
      // --allow-failures it exits 3 (all pairs failed), however fast the machine.
      for (const [i, shard] of shards.entries())
        expect(
          (yield* score(["--predictions", file, "--out", shard, "--shard", `${i + 1}/2`, "--allow-failures"])).code
        ).toBe(0)
      const merged = path.join(dir, "merged")
      const t = io()
      expect(yield* Commands.main(["merge", "--out", merged, ...shards], t.io)).toBe(0)
      expect(fs.readFileSync(path.join(merged, "results.jsonl"), "utf8")).toBe(
        fs.readFileSync(path.join(out, "results.jsonl"), "utf8")
      )
    })
  )

  it.effect("compare runs between a score run and a sweep of the same data", () =>
    Effect.gen(function* () {
      const sweepDir = path.join(dir, "sweep")
      const config = yield* Config.parse(
        JSON.stringify({
          name: "recency",
          data: { source: "sample" },
          pipeline: { retriever: { use: "recency", k: 2 } },
          scorers: [{ use: "retrieval", ks: [2, 4] }],
          out: sweepDir
        }),
        "recency.yaml"
      )
      yield* Sweeps.sweep(config)
      const t = io()
      const target = path.join(dir, "compare")
      const code = yield* Commands.main(
        ["compare", "--runs", `${out},${sweepDir}`, "--cell-a", "A", "--cell-b", "@1", "--out", target],
        t.io
      )
      expect(t.err.join("")).toBe("")
      expect(code).toBe(0)
      expect(fs.readFileSync(path.join(target, "compare.md"), "utf8")).toContain("retrieval")
    }).pipe(Effect.provide(NodeContext.layer))
  )
})

describe("bad predictions are refused with the file, the line and the field", () => {
  const ok = { persona_id: d01, instance_type: "consistent", selected: [2] }
  const refused = (rows: ReadonlyArray<unknown>) =>
    Effect.gen(function* () {
      const d = tempDir("score-bad-")
      const f = write(d, rows)
      const r = yield* score(["--predictions", f, "--out", path.join(d, "run")])
      expect(r.code).toBe(1)
      expect(fs.existsSync(path.join(d, "run", "results.jsonl"))).toBe(false)
      return r.err.replaceAll(f, "preds.jsonl")
    })

  it.effect("a line that is not JSON", () =>
    Effect.map(refused([ok, "{persona_id: x"]), (err) =>
      expect(err).toMatch(/^error: preds\.jsonl: line 2: not JSON \(.+\); expected one JSON object per line\n$/)
    )
  )

  it.effect("a missing key", () =>
    Effect.map(refused([{ persona_id: d01, selected: [1] }]), (err) =>
      expect(err).toContain(
        "preds.jsonl: line 1: instance_type: missing (expected the instance's instance_type, a string such as consistent)"
      )
    )
  )

  it.effect("a misspelt key", () =>
    Effect.map(refused([{ ...ok, preferense: "x" }]), (err) =>
      expect(err).toContain('line 1: unknown field "preferense" (did you mean "preference"?)')
    )
  )

  it.effect("instances not in the data, with how many", () =>
    Effect.map(refused([ok, { ...ok, persona_id: "nobody" }, { ...ok, instance_type: "sideways" }]), (err) =>
      expect(err).toContain(
        "preds.jsonl: 2 lines name instances that are not in the data (sample, 24 instances): line 2 (nobody:consistent), line 3 (d01-chemistry-teacher:sideways); an instance is persona_id:instance_type"
      )
    )
  )

  it.effect("positions out of range, 0 and N + 1", () =>
    Effect.map(
      refused([
        { ...ok, selected: [0] },
        { ...ok, instance_type: "changing", selected: [2], ranking: [9] }
      ]),
      (err) => {
        expect(err).toContain("preds.jsonl: 2 problems:")
        expect(err).toContain(
          `line 1: selected[0]: position 0 is out of range: ${d01}:consistent has 8 prior sessions, so positions go from 1 (the oldest) to 8`
        )
        expect(err).toContain(`line 2: ranking[0]: position 9 is out of range: ${d01}:changing has 8 prior sessions`)
      }
    )
  )

  it.effect("a second line for the same system and instance", () =>
    Effect.map(refused([ok, { ...ok, system: "X" }, { ...ok, selected: [3] }]), (err) =>
      expect(err).toContain(
        `preds.jsonl: line 3: a second line for system "preds" and instance ${d01}:consistent (the first is line 1); expected one line per (system, instance)`
      )
    )
  )

  it.effect("a preference on some lines only", () =>
    Effect.map(
      refused([
        { ...ok, preference: "x" },
        { ...ok, instance_type: "changing" }
      ]),
      (err) => expect(err).toContain("preds.jsonl: line 2: preference: missing, but line 1 gives one")
    )
  )

  it.effect("scores that do not follow the ranking", () =>
    Effect.map(
      refused([
        { ...ok, ranking: [2, 1], scores: [0.1, 0.5] },
        { ...ok, instance_type: "changing", scores: [1] }
      ]),
      (err) => {
        expect(err).toContain("line 1: scores[1]: 0.5 is higher than scores[0] (0.1)")
        expect(err).toContain("line 2: scores: given without ranking")
      }
    )
  )
})
