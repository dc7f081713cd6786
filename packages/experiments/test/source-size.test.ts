import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

/** A source file should read in one sitting: at most this many lines (as `wc -l` counts them). */
const maxLines = 400

const packages = fileURLToPath(new URL("../../", import.meta.url))

describe("source files", () => {
  it(`under packages/*/src are at most ${maxLines} lines each`, () => {
    const files = fs.readdirSync(packages).flatMap((pkg) => {
      const src = path.join(packages, pkg, "src")
      if (!fs.existsSync(src)) return []
      const names = fs.readdirSync(src, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts"))
      return names.map((f) => path.join(pkg, "src", f))
    })
    expect(files.length).toBeGreaterThan(0)
    const counted = files.map((file) => ({
      file,
      lines: fs.readFileSync(path.join(packages, file), "utf8").split("\n").length - 1
    }))
    const tooLong = counted.filter((c) => c.lines > maxLines).map((c) => `packages/${c.file}: ${c.lines} lines`)
    expect(tooLong).toEqual([])
  })
})
