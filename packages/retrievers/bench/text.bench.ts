/**
 * Text analysis for indexing: the linear tokenizer with Porter2 stems (`Text.terms`) against
 * running wink-nlp's pipeline per text (what `Text.terms` did before), on the same session texts:
 * speed, and whether BM25 rankings stay the same (top-2 and top-5 sets per instance). Then the cost
 * of one unbroken string, which wink's tokenizer handles in quadratic time.
 *
 *   npm run bench -- text.bench
 */
import { Dataset, Synthetic } from "@cupid-lab/data"
import { Domain, Memo } from "@cupid-lab/core"
import { NodeContext } from "@effect/platform-node"
import { Effect } from "effect"
import { createRequire } from "node:module"
import type { ItemToken, ItsFunction, Model } from "wink-nlp"
import type WinkNlp from "wink-nlp"
import * as Bm25 from "../src/Bm25.js"
import * as Text from "../src/Text.js"

const require = createRequire(import.meta.url)
const winkNLP = require("wink-nlp") as typeof WinkNlp
const nlp = winkNLP(require("wink-eng-lite-web-model") as Model, [])
const its = nlp.its

/** The previous `Text.terms`: wink's tokenizer, stopword flags and stems, per text. */
const winkTerms = (text: string): Array<string> => {
  const out: Array<string> = []
  nlp
    .readDoc(text)
    .tokens()
    .each((t: ItemToken) => {
      const type = t.out(its.type) as string
      if (t.out(its.stopWordFlag) === true || !(type === "word" || type === "number" || type === "hashtag")) return
      const normal = t.out(its.normal) as string
      out.push(/^[a-z]+$/.test(normal) ? (t.out(its.stem as unknown as ItsFunction<string>) as string) : normal)
    })
  return out
}

const load = (source: string) =>
  Effect.runPromise(Effect.map(Dataset.loadAll(source), (r) => r.instances).pipe(Effect.provide(NodeContext.layer)))

const top = (scores: ReadonlyArray<number>, k: number) =>
  new Set(
    scores
      .map((s, i) => [s, i] as const)
      .sort((a, b) => b[0] - a[0] || b[1] - a[1])
      .slice(0, k)
      .map(([, i]) => i)
  )
const same = (a: Set<number>, b: Set<number>) => a.size === b.size && [...a].every((x) => b.has(x))

const time = (f: () => void): number => {
  const t0 = performance.now()
  f()
  return performance.now() - t0
}

const main = async () => {
  // Both load wink's model on first use: pay that before timing.
  winkTerms("warm up the model")
  Text.terms("warm up the model")
  const sets: ReadonlyArray<readonly [string, ReadonlyArray<Domain.Instance>]> = [
    ["sample + sample-test", [...(await load("sample")), ...(await load("sample-test"))]],
    [
      "synthetic hard, 100 personas",
      [...Synthetic.generate({ ...Synthetic.defaults, personas: 100, seed: 101 })].map(Domain.fromRow)
    ]
  ]
  for (const [name, instances] of sets) {
    const texts = [...new Set(instances.flatMap((i) => i.query.sessions.map((s) => Domain.sessionText(s, "dialogue"))))]
    const chars = texts.reduce((n, t) => n + t.length, 0)
    const old = new Map<string, Array<string>>()
    const tOld = time(() => {
      for (const t of texts) old.set(t, winkTerms(t))
    })
    const fresh = new Map<string, ReadonlyArray<string>>()
    // One memo for the set, as in a sweep: stopword flags and stems are learned once per word.
    const analyzer = Text.analyzer(Memo.unsafeMake())
    const tNew = time(() => {
      for (const t of texts) fresh.set(t, analyzer.terms(t))
    })
    let agree2 = 0,
      agree5 = 0,
      sameTokens = 0
    for (const t of texts) if (old.get(t)!.join(" ") === fresh.get(t)!.join(" ")) sameTokens++
    for (const i of instances) {
      const docs = i.query.sessions.map((s) => Domain.sessionText(s, "dialogue"))
      const params = { k1: 1.2, b: 0.75 }
      const a = Bm25.scores(
        winkTerms(i.query.request),
        docs.map((d) => Bm25.document(old.get(d)!)),
        params
      )
      const b = Bm25.scores(
        analyzer.terms(i.query.request),
        docs.map((d) => Bm25.document(fresh.get(d)!)),
        params
      )
      if (same(top(a, 2), top(b, 2))) agree2++
      if (same(top(a, 5), top(b, 5))) agree5++
    }
    const pct = (x: number) => `${((100 * x) / instances.length).toFixed(1)}%`
    console.log(
      `${name}: ${texts.length} distinct session texts, ${(chars / 1e6).toFixed(2)} M characters, ${instances.length} instances`
    )
    console.log(`  wink pipeline per text   ${tOld.toFixed(0)} ms (${(chars / tOld / 1000).toFixed(2)} M chars/s)`)
    console.log(
      `  linear tokenizer+Porter2 ${tNew.toFixed(0)} ms (${(chars / tNew / 1000).toFixed(2)} M chars/s), ${(tOld / tNew).toFixed(1)}x faster, cold (stopword and stem memos empty at first)`
    )
    console.log(
      `  identical term lists: ${sameTokens}/${texts.length} texts; BM25 top-2 sets equal: ${pct(agree2)}; top-5 sets equal: ${pct(agree5)}`
    )
  }
  for (const n of [20_000, 200_000, 5_000_000]) {
    const blob = "x".repeat(n)
    const tTerms = time(() => Text.terms(blob))
    const tAnalyze = time(() => Text.analyze(blob))
    console.log(
      `one unbroken ${n.toLocaleString("en")}-character string: terms ${tTerms.toFixed(1)} ms, analyze ${tAnalyze.toFixed(1)} ms`
    )
  }
  const wink20k = time(() => winkTerms("y".repeat(20_000)))
  console.log(
    `  (wink pipeline on a 20,000-character one: ${wink20k.toFixed(0)} ms; quadratic, so about 100x that at 200,000)`
  )
}

void main()
