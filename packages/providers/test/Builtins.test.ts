import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { Builtins } from "@cupid-lab/providers"

const srcDir = path.join(import.meta.dirname, "..", "src")
const heavy = ["openai", "cohere-ai", "@huggingface/transformers", "onnxruntime-node", "onnxruntime-common"]

const sourceFiles = (dir: string): Array<string> =>
  fs
    .readdirSync(dir, { withFileTypes: true })
    .flatMap((e) =>
      e.isDirectory() ? sourceFiles(path.join(dir, e.name)) : e.name.endsWith(".ts") ? [path.join(dir, e.name)] : []
    )

describe("providers package", () => {
  it("ships the openai, cohere and transformers provider plugins, and the http stages", () => {
    expect(Builtins.plugins.map((p) => [p.stage, p.name])).toStrictEqual([
      ["provider", "openai"],
      ["provider", "cohere"],
      ["provider", "transformers"],
      ["retriever", "http"],
      ["inferrer", "http"],
      ["generator", "http"]
    ])
  })

  it("never imports an SDK or the ONNX runtime statically (only `import type` and dynamic `import()`)", () => {
    const offenders: Array<string> = []
    for (const file of sourceFiles(srcDir)) {
      const text = fs.readFileSync(file, "utf8")
      for (const m of text.matchAll(/^\s*(import|export)\s+(?!type\b)[^;]*?from\s+"([^"]+)"/gm)) {
        if (heavy.includes(m[2]!)) offenders.push(`${path.relative(srcDir, file)}: ${m[0].trim()}`)
      }
    }
    expect(offenders).toStrictEqual([])
  })
})
