/**
 * `@effect/vitest`'s `it` for tests of what a program runs on Node: `it.effect`, `it.scoped`,
 * `it.live` and `it.scopedLive` provide `NodeContext.layer` (the file system, paths, the terminal)
 * to each test, as a program's entry point would; the rest is vitest's `it`. Library functions
 * and a plugin's `make` require `FileSystem` in their types; a test file imports this `it` instead of
 * providing the platform at every call.
 *
 * @example
 * import { describe, expect } from "@effect/vitest"
 * import { NodeTest } from "@cupid-lab/core/testing"
 * const { it } = NodeTest
 *
 * it.effect("reads the bundled sample", () =>
 *   Effect.map(Dataset.loadAll("sample"), (data) => expect(data.instances.length).toBeGreaterThan(0)))
 */
import { NodeContext } from "@effect/platform-node"
import { it as base, type TestOptions, type Vitest } from "@effect/vitest"
import { Effect } from "effect"

type Node = NodeContext.NodeContext

const provided =
  <A, E, R, Args extends Array<unknown>>(
    self: Vitest.TestFunction<A, E, R | Node, Args>
  ): Vitest.TestFunction<A, E, R, Args> =>
  (...args) =>
    Effect.provide(self(...args), NodeContext.layer)

const withNode = <R>(tester: Vitest.Tester<R>): Vitest.Tester<R | Node> => {
  const test =
    (run: Vitest.Test<R>): Vitest.Test<R | Node> =>
    (name, self, timeout) =>
      run(name, provided(self), timeout)
  const prop: Vitest.Tester<R | Node>["prop"] = (name, arbitraries, self, timeout) =>
    tester.prop(name, arbitraries, provided(self), timeout)
  return Object.assign(test(tester), {
    skip: test(tester.skip),
    skipIf: (condition: unknown) => test(tester.skipIf(condition)),
    runIf: (condition: unknown) => test(tester.runIf(condition)),
    only: test(tester.only),
    each:
      <T>(cases: ReadonlyArray<T>) =>
      <A, E>(name: string, self: Vitest.TestFunction<A, E, R | Node, Array<T>>, timeout?: number | TestOptions) =>
        tester.each(cases)(name, provided(self), timeout),
    fails: test(tester.fails),
    prop
  })
}

/** vitest's `it` (a fresh copy: the shared one is left as it is), with the effect testers on Node. */
export const it = Object.assign(base.extend({}), {
  effect: withNode(base.effect),
  scoped: withNode(base.scoped),
  live: withNode(base.live),
  scopedLive: withNode(base.scopedLive)
})
