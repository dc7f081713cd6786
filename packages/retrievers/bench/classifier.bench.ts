/**
 * The factor-classifier: fit time on its default training source, what the fitted weights say, and
 * query throughput (features + probabilities + policy) at 8, 100 and 1,000 sessions per history.
 *
 *   npm run bench -- classifier.bench
 */
import { Dataset, Synthetic } from "@cupid-lab/data"
import { Domain, Memo } from "@cupid-lab/core"
import { NodeContext } from "@effect/platform-node"
import { Effect, Schema } from "effect"
import * as Classifier from "../src/Classifier.js"
import * as Text from "../src/Text.js"

const main = async () => {
  const options = Schema.decodeSync(Classifier.options)({})
  const train = await Effect.runPromise(
    Effect.map(Dataset.loadAll(options.train), (r) => r.instances).pipe(Effect.provide(NodeContext.layer))
  )
  let t0 = performance.now()
  // One memo for the whole run, as in a sweep.
  const analyzer = Text.analyzer(Memo.unsafeMake())
  const fitted = Classifier.fit(train, options, undefined, analyzer)
  const fitMs = performance.now() - t0
  console.log(
    `fit on ${options.train}: ${train.length} instances, ${fitted.pairs} pairs (${fitted.positives} about the current factor) in ${(fitMs / 1000).toFixed(2)} s`
  )
  console.log(`calibrated change contrast: ${fitted.minContrast}`)
  console.log("standardized weights (a unit is one standard deviation of the feature):")
  const order = fitted.weights.map((w, j) => [w, j] as const).sort((a, b) => Math.abs(b[0]) - Math.abs(a[0]))
  for (const [w, j] of order) console.log(`  ${fitted.features[j]!.padEnd(14)} ${w >= 0 ? "+" : ""}${w.toFixed(3)}`)
  console.log(`  ${"(bias)".padEnd(14)} ${fitted.bias >= 0 ? "+" : ""}${fitted.bias.toFixed(3)}`)
  for (const [sessions, personas] of [
    [8, 20],
    [100, 3],
    [1_000, 1]
  ] as const) {
    const instances = [
      ...Synthetic.generate({ ...Synthetic.defaults, personas, sessionsPerHistory: sessions, seed: 4242 })
    ].map(Domain.fromRow)
    t0 = performance.now()
    for (const i of instances) Classifier.probabilities(fitted, Classifier.features(i.query, undefined, analyzer))
    const cold = performance.now() - t0
    t0 = performance.now()
    for (const i of instances) Classifier.probabilities(fitted, Classifier.features(i.query, undefined, analyzer))
    const warm = performance.now() - t0
    console.log(
      `${sessions} sessions per history, ${instances.length} queries: cold ${(instances.length / (cold / 1000)).toFixed(1)} q/s, warm (text memos filled) ${(instances.length / (warm / 1000)).toFixed(1)} q/s`
    )
  }
}

void main()
