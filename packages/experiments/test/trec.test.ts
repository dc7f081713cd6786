import { NodeContext, NodeFileSystem } from "@effect/platform-node"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { Config } from "@cupid-lab/runner"
import { Trec, type ResultLine } from "@cupid-lab/results"

import { lines, tempDir } from "./support.js"
import * as Sweeps from "../src/Sweeps.js"

const config = [
  "name: trec",
  "data: { source: 'synthetic:personas=12,seed=3' }",
  "seed: 1",
  "scorers: [ { use: retrieval, ks: [2] } ]",
  "sweep:",
  "  retriever:",
  "    - all",
  "    - { use: recency, k: 2 }",
  "    - { use: bm25, select: { threshold: 0.6 } }",
  "    - { use: context-factor, strategy: offline, policy: most-recent }",
  "    - oracle",
  "bootstrap: { resamples: 50 }"
].join("\n")

/** trec_eval's set_P, set_recall and recip_rank for one query, computed by hand from the files' lines. */
const measures = (run: ReadonlyArray<string>, qrels: ReadonlyMap<string, number>) => {
  const docs = run
    .map((l) => l.split(" "))
    .sort((a, b) => Number(b[4]) - Number(a[4]))
    .map((f) => f[2]!)
  const relevant = [...qrels.values()].filter((r) => r > 0).length
  const found = docs.filter((d) => (qrels.get(d) ?? 0) > 0).length
  const first = docs.findIndex((d) => (qrels.get(d) ?? 0) > 0)
  // nDCG@k as trec_eval's ndcg_cut and ranx define it for binary judgements: DCG over the first k
  // documents of the run (gain 1 at rank i adds 1 / log2(i + 1)), over the DCG of the ideal ranking.
  const ndcg = (k: number) => {
    if (relevant === 0) return null
    let dcg = 0,
      ideal = 0
    docs.slice(0, k).forEach((d, i) => void ((qrels.get(d) ?? 0) > 0 && (dcg += 1 / Math.log2(i + 2))))
    for (let i = 0; i < Math.min(k, relevant); i++) ideal += 1 / Math.log2(i + 2)
    return dcg / ideal
  }
  return {
    precision: docs.length === 0 ? null : found / docs.length,
    recall: relevant === 0 ? null : found / relevant,
    mrr: relevant === 0 ? null : first < 0 ? 0 : 1 / (first + 1),
    ndcg
  }
}

const byQuery = (file: string): Map<string, Array<string>> => {
  const out = new Map<string, Array<string>>()
  for (const l of fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((x) => x !== "")) {
    const q = l.split(" ")[0]!
    out.set(q, [...(out.get(q) ?? []), l])
  }
  return out
}

describe("TREC ids", () => {
  it("percent-encode % and whitespace, so every line keeps its 6 (run) or 4 (qrels) fields; other ids stay as they are", () => {
    expect(Trec.trecId("p1:changing")).toBe("p1:changing")
    expect(Trec.trecId("a b\tc%d\u00a0e")).toBe("a%20b%09c%25d%C2%A0e")
    expect(
      Trec.runLines("q 1", ["s 1", "s2"], "cell")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => l.split(/\s+/).length)
    ).toEqual([6, 6])
    expect(Trec.runLines("q 1", ["s2"], "cell")).toBe("q%201 Q0 s2 1 1 cell\n")
    expect(Trec.qrelLines("q\t1", 2, ["s2"])).toBe("q%091 0 s1 0\nq%091 0 s2 1\n")
  })
})

describe("TREC export", () => {
  it.effect(
    "the set measures of each .run file over qrels.txt are the run's retrieval precision and recall, and the ranking's reciprocal rank and nDCG@k (to 1e-9) its MRR and ndcg@k",
    () =>
      Effect.gen(function* () {
        const dir = tempDir()
        const c = yield* Config.parse(config, path.join(dir, "trec.yaml"), {})
        const outcome = yield* Sweeps.sweep(
          { ...c, out: path.join(dir, "out"), outGiven: true, cacheDir: path.join(dir, "cache") },
          { report: false }
        )
        const written = yield* Trec.write(outcome.out).pipe(Effect.provide(NodeFileSystem.layer))
        expect(written.qrels).toEqual([path.join(outcome.out, "trec", "qrels.txt")])
        const qrels = new Map<string, Map<string, number>>()
        for (const [q, ls] of byQuery(written.qrels[0]!))
          qrels.set(q, new Map(ls.map((l) => [l.split(" ")[2]!, Number(l.split(" ")[3])])))
        const results = lines(outcome.files.results).map((l) => JSON.parse(l) as ResultLine.ResultLine)
        expect(qrels.size).toBe(36)
        let checked = 0,
          ranked = 0
        for (const cell of outcome.grid.cells) {
          const runs = byQuery(path.join(outcome.out, "trec", `${cell.id}.run`))
          // Each line's run tag is the cell's name, as the reports name it (whitespace encoded).
          const tags = new Set(
            fs
              .readFileSync(path.join(outcome.out, "trec", `${cell.id}.run`), "utf8")
              .split("\n")
              .filter((l) => l !== "")
              .map((l) => l.split(" ")[5])
          )
          expect(tags).toEqual(new Set([Trec.trecId(cell.name)]))
          const rankingFile = path.join(outcome.out, "trec", `${cell.id}.ranking.run`)
          const rankings = fs.existsSync(rankingFile) ? byQuery(rankingFile) : undefined
          for (const line of results.filter((r) => r.cell === cell.id && r.status === "ok")) {
            const m = measures(runs.get(line.instance) ?? [], qrels.get(line.instance)!)
            expect(m.precision, `${cell.name} ${line.instance} precision`).toBe(line.scores["retrieval.precision"])
            expect(m.recall, `${cell.name} ${line.instance} recall`).toBe(line.scores["retrieval.recall"])
            if (rankings !== undefined) {
              const r = measures(rankings.get(line.instance) ?? [], qrels.get(line.instance)!)
              expect(r.mrr, `${cell.name} ${line.instance} mrr`).toBe(line.scores["retrieval.mrr"])
              const ndcg = r.ndcg(2),
                reported = line.scores["retrieval.ndcg@2"]
              if (ndcg === null || reported === null || typeof reported !== "number")
                expect(reported, `${cell.name} ${line.instance} ndcg@2`).toBe(ndcg)
              else expect(Math.abs(ndcg - reported), `${cell.name} ${line.instance} ndcg@2`).toBeLessThan(1e-9)
              ranked++
            }
            checked++
          }
        }
        expect(checked).toBe(180)
        expect(ranked).toBeGreaterThan(0)
        // byte-identical on a second export
        const before =
          fs.readFileSync(written.qrels[0]!, "utf8") + written.runs.map((f) => fs.readFileSync(f, "utf8")).join("")
        const again = yield* Trec.write(outcome.out).pipe(Effect.provide(NodeFileSystem.layer))
        expect(
          fs.readFileSync(again.qrels[0]!, "utf8") + again.runs.map((f) => fs.readFileSync(f, "utf8")).join("")
        ).toBe(before)
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it("lists the selection in the ranking's order, and scores by rank so that any tool reads that order", () => {
    expect(
      Trec.selectionOrder({
        selected: ["s3", "s1"],
        ranking: [
          { sessionId: "s1", score: 0.5 },
          { sessionId: "s3", score: 0.5 }
        ]
      })
    ).toEqual(["s1", "s3"])
    expect(Trec.selectionOrder({ selected: ["s3", "s1"], ranking: null })).toEqual(["s3", "s1"])
    expect(Trec.runLines("p1:consistent", ["s1", "s3"], "c1")).toBe(
      "p1:consistent Q0 s1 1 2 c1\np1:consistent Q0 s3 2 1 c1\n"
    )
    expect(Trec.qrelLines("p1:consistent", 3, ["s2"])).toBe(
      "p1:consistent 0 s1 0\np1:consistent 0 s2 1\np1:consistent 0 s3 0\n"
    )
  })
})
