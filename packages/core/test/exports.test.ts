import { describe, expect, it } from "@effect/vitest"

/** Imported by a computed specifier, so neither the type checker nor the bundler resolves it ahead of time. */
const load = (...parts: Array<string>) => import(/* @vite-ignore */ parts.join("/"))

describe("package exports", () => {
  it("a package is imported by its index or a named subpath; its modules and internal/ are not exported", async () => {
    await expect(load("@cupid-lab/data")).resolves.toHaveProperty("Transform.apply")
    await expect(load("@cupid-lab/providers", "testing")).resolves.toHaveProperty("OpenAiServer.make")
    await expect(load("@cupid-lab/data", "Transform")).rejects.toThrow(/not (defined|exported)|Missing/)
    await expect(load("@cupid-lab/core", "internal", "stages", "text")).rejects.toThrow(
      /not (defined|exported)|Missing/
    )
    await expect(load("@cupid-lab/retrievers", "internal", "Memo")).rejects.toThrow(/not (defined|exported)|Missing/)
  })
})
