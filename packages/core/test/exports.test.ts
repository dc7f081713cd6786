import { describe, expect, it } from "@effect/vitest"

/** Imported by a computed specifier, so neither the type checker nor the bundler resolves it ahead of time. */
const load = (specifier: string) => import(/* @vite-ignore */ specifier)

describe("package exports", () => {
  it("public modules resolve; internal/ modules are not exported", async () => {
    await expect(load(["@cupid-lab/core", "Transform"].join("/"))).resolves.toHaveProperty("apply")
    await expect(load(["@cupid-lab/core", "internal", "sample", "Build"].join("/"))).rejects.toThrow(/internal/)
    await expect(load(["@cupid-lab/retrievers", "internal", "Memo"].join("/"))).rejects.toThrow(/internal/)
  })
})
