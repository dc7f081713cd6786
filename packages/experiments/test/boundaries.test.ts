/**
 * The repository's boundaries, read from its imports: packages import only packages before them in
 * one order, only through a package's public face (its index, or a named subpath such as
 * `testing`), and inside a package no two folders import each other (its root modules and
 * `internal/` count as one).
 */
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const order = [
  "core",
  "data",
  "retrievers",
  "scorers",
  "providers",
  "synthesis",
  "results",
  "runner",
  "report",
  "viewer",
  "experiments"
]
const packagesDir = fileURLToPath(new URL("../../", import.meta.url))

interface Import {
  readonly file: string // relative to packages/
  readonly pkg: string
  readonly spec: string
}

const sourceFiles = (pkg: string): Array<string> => {
  const src = path.join(packagesDir, pkg, "src")
  if (!fs.existsSync(src)) return []
  return fs
    .readdirSync(src, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".ts"))
    .map((f) => path.join(pkg, "src", f))
}

// Static `import … from`, `export … from`, dynamic `import("…")` and `import("…")` types.
const specifiers = (text: string): Array<string> => [
  ...[...text.matchAll(/^\s*(?:import|export)\b[^;'"]*?\bfrom\s+"([^"]+)"/gm)].map((m) => m[1]!),
  ...[...text.matchAll(/^\s*import\s+"([^"]+)"/gm)].map((m) => m[1]!),
  ...[...text.matchAll(/\bimport\(\s*"([^"]+)"\s*\)/g)].map((m) => m[1]!)
]

const importsOf = (pkg: string): Array<Import> =>
  sourceFiles(pkg).flatMap((file) =>
    specifiers(fs.readFileSync(path.join(packagesDir, file), "utf8")).map((spec) => ({ file, pkg, spec }))
  )

const all = order.flatMap(importsOf)

/** The folder of a source file inside its package: "" for the root modules and `internal/`. */
const folderOf = (file: string): string => {
  const parts = file.split(path.sep).slice(2, -1)
  return parts[0] === undefined || parts[0] === "internal" ? "" : parts[0]
}

/** Pairs of folders that import each other, directly or through other folders of the package. */
const folderCycles = (pkg: string): Array<string> => {
  const edges = new Map<string, Set<string>>()
  for (const i of all.filter((i) => i.pkg === pkg && i.spec.startsWith("."))) {
    const target = path.relative(packagesDir, path.resolve(path.dirname(path.join(packagesDir, i.file)), i.spec))
    const from = folderOf(i.file)
    const to = folderOf(target)
    if (from !== to) edges.set(from, (edges.get(from) ?? new Set()).add(to))
  }
  const reaches = (from: string, to: string, seen = new Set<string>()): boolean =>
    [...(edges.get(from) ?? [])].some((n) => n === to || (!seen.has(n) && (seen.add(n), reaches(n, to, seen))))
  const out: Array<string> = []
  for (const [from, tos] of edges)
    for (const to of tos)
      if (from < to && reaches(to, from)) out.push(`${pkg}: ${from || "(root)"} <-> ${to || "(root)"}`)
  return out
}

/** Imports of a package at or after the importer's place in the order. */
const backward = (imports: ReadonlyArray<Import>): Array<string> =>
  imports
    .map((i) => ({ ...i, target: /^@cupid-lab\/([^/]+)/.exec(i.spec)?.[1] }))
    .filter((i) => i.target !== undefined && i.target !== i.pkg && order.indexOf(i.target) >= order.indexOf(i.pkg))
    .map((i) => `${i.file} imports ${i.spec}`)

describe("package boundaries", () => {
  it("every package directory is in the order, and the scan sees imports in each", () => {
    const dirs = fs.readdirSync(packagesDir).filter((d) => fs.existsSync(path.join(packagesDir, d, "package.json")))
    expect([...dirs].sort()).toEqual([...order].sort())
    for (const pkg of order)
      expect(
        all.some((i) => i.pkg === pkg),
        pkg
      ).toBe(true)
  })

  it("a package imports only packages before it in the order", () => {
    expect(backward(all)).toEqual([])
  })

  it("a package never imports itself by name, nor reaches into another package's files", () => {
    const wrong = all
      .filter(
        (i) =>
          i.spec === `@cupid-lab/${i.pkg}` ||
          i.spec.startsWith(`@cupid-lab/${i.pkg}/`) ||
          (i.spec.startsWith(".") &&
            path
              .relative(packagesDir, path.resolve(path.dirname(path.join(packagesDir, i.file)), i.spec))
              .split(path.sep)[0] !== i.pkg)
      )
      .map((i) => `${i.file} imports ${i.spec}`)
    expect(wrong).toEqual([])
  })

  it("other packages are imported through their public face only, which package.json exports", () => {
    const faces = new Map(
      order.map((pkg) => {
        const json = JSON.parse(fs.readFileSync(path.join(packagesDir, pkg, "package.json"), "utf8")) as {
          exports?: Record<string, string | null>
        }
        return [pkg, Object.keys(json.exports ?? {})] as const
      })
    )
    for (const [pkg, keys] of faces)
      expect(
        keys.filter((k) => k.includes("*")),
        pkg
      ).toEqual([])
    const wrong = all
      .filter((i) => i.spec.startsWith("@cupid-lab/"))
      .filter((i) => {
        const [, pkg = "", sub] = /^@cupid-lab\/([^/]+)(\/.+)?$/.exec(i.spec) ?? []
        return !(faces.get(pkg) ?? []).includes(sub === undefined ? "." : `.${sub}`)
      })
      .map((i) => `${i.file} imports ${i.spec}`)
    expect(wrong).toEqual([])
  })

  it("inside a package, no two folders import each other", () => {
    expect(order.flatMap(folderCycles)).toEqual([])
  })

  it("the scan finds a cycle and a backward import when there is one", () => {
    // The checks above on a made-up graph: two folders that import each other, and core importing runner.
    const fake: Array<Import> = [
      { file: path.join("x", "src", "a", "A.ts"), pkg: "x", spec: "../b/B.js" },
      { file: path.join("x", "src", "b", "B.ts"), pkg: "x", spec: "../a/A.js" }
    ]
    all.push(...fake)
    try {
      expect(folderCycles("x")).toEqual(["x: a <-> b"])
    } finally {
      all.splice(all.length - fake.length, fake.length)
    }
    const core = path.join("core", "src", "Pipeline.ts")
    expect(
      backward([
        { file: core, pkg: "core", spec: "@cupid-lab/runner" },
        { file: core, pkg: "core", spec: "effect" },
        { file: path.join("runner", "src", "Runner.ts"), pkg: "runner", spec: "@cupid-lab/core" }
      ])
    ).toEqual([`${core} imports @cupid-lab/runner`])
  })
})
