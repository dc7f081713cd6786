/**
 * The test runner as the repository sets it up: its worker's calls to the main process wait as
 * long as a test may run (patches/vitest+3.2.7.patch, applied on install), so a worker busy for a
 * minute on a loaded machine is not reported as a dead one.
 */
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"

const root = fileURLToPath(new URL("../../../", import.meta.url))
const chunks = path.join(
  path.dirname(createRequire(path.join(root, "package.json")).resolve("vitest")),
  "dist",
  "chunks"
)

describe("the test runner", () => {
  it("gives a worker's calls to the main process 10 minutes, as long as a test may run", () => {
    const runtime = fs
      .readdirSync(chunks)
      .filter((f) => /^rpc\..*\.js$/.test(f))
      .map((f) => fs.readFileSync(path.join(chunks, f), "utf8"))
      .filter((text) => text.includes("function createRuntimeRpc"))
    expect(runtime, `one chunk of ${chunks} defines createRuntimeRpc`).toHaveLength(1)
    expect(runtime[0], "patches/vitest+3.2.7.patch is applied (npm ci runs patch-package)").toMatch(/timeout: 6e5,/)
    const config = fs.readFileSync(path.join(root, "vitest.config.ts"), "utf8")
    expect(config).toMatch(/testTimeout: 600_000/)
  })
})
