// The comparison Paired reports for a prepared spec: from its bootstrap interval and permutation
// test, or from its large-sample (normal) forms when n reaches `largeSample` and they apply.
import type { Comparison } from "../Paired.js"
import type * as Prepared from "./Prepared.js"
import { clustersOf } from "./Prepared.js"
import type * as Resampling from "./Resampling.js"

/** The comparison from its bootstrap interval and its permutation test's result. */
export const finish = (
  p: Prepared.Prepared & { readonly _tag: "Spec" },
  ci95: readonly [number, number],
  t: Resampling.TestResult
): Comparison => ({
  n: p.instances,
  ...clustersOf(p),
  delta: p.observed,
  ci95,
  p: t.p,
  test: t.test,
  permutations: t.permutations
})

/** The large-sample comparison when n reaches `largeSample` and the normal forms apply. */
export const largeOf = (
  p: Prepared.Prepared & { readonly _tag: "Spec" },
  largeSample: number | undefined,
  form: Prepared.NormalForm
): Comparison | undefined => {
  if (largeSample === undefined || p.spec.n < largeSample) return undefined
  const normal = p.normal(form)
  return normal === undefined
    ? undefined
    : {
        n: p.instances,
        ...clustersOf(p),
        delta: p.observed,
        ci95: normal.ci95,
        p: normal.p,
        test: "normal",
        permutations: 0
      }
}
