// Reading YAML configs: aliases that would make a value contain itself, or expand the document
// past the limit (the "billion laughs"), are refused fast, each at its line, column and key path.
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import * as Yaml from "../src/Yaml.js"

const left = (text: string) => {
  const r = Yaml.read(text)
  if (Either.isRight(r)) throw new Error(`expected a problem, got ${JSON.stringify(r.right)}`)
  return r.left
}

/** `levels` anchors, each a list of ten aliases of the one before: 10^levels values. */
const laughs = (levels: number) => {
  const names = "abcdefghijklmnop"
  const lines = [`${names[0]}: &${names[0]} [${Array(10).fill('"lol"').join(", ")}]`]
  for (let i = 1; i < levels; i++)
    lines.push(
      `${names[i]}: &${names[i]} [${Array(10)
        .fill(`*${names[i - 1]}`)
        .join(", ")}]`
    )
  return `${lines.join("\n")}\n`
}

describe("Yaml.read", () => {
  it("reads plain values, aliases included (an alias repeats its anchor's value)", () => {
    expect(Yaml.read("a: &x [1, 2]\nb: *x\nc: [*x, { d: *x }]\n")).toStrictEqual(
      Either.right({ a: [1, 2], b: [1, 2], c: [[1, 2], { d: [1, 2] }] })
    )
    expect(Yaml.read("")).toStrictEqual(Either.right(null))
  })

  it("a billion laughs is refused at once, at the alias where the document passes the limit", () => {
    // 10^9 values written in 10 lines; the expansion passes 100,000 values in the fifth (e), at its eighth alias.
    expect(left(laughs(10))).toStrictEqual({
      line: 5,
      column: 36,
      path: "e[7]",
      reason:
        "the document expands past 100,000 values here (the alias *d repeats its anchor's whole value); nested aliases multiply: write the values out, or use fewer aliases"
    })
    // Refused where the expansion passes the limit, so no value past it is built (an expansion
    // would not end within the test's ceiling). Just under the limit, it reads: 10 + 100 + ... + 10^4 values and the lists holding them.
    expect(Either.isRight(Yaml.read(laughs(4)))).toBe(true)
  })

  it("an alias inside the value its anchor names is refused, with both lines", () => {
    expect(left("name: x\npipeline: &p\n  retriever: all\n  again: *p\n")).toStrictEqual({
      line: 4,
      column: 10,
      path: "pipeline.again",
      reason: "the alias *p is inside the value its anchor &p (line 2) names, so that value would contain itself"
    })
    // Through another anchor, and in a list.
    expect(left("a: &a\n  b: &b\n    c: [1, *a]\n")).toMatchObject({ line: 3, column: 12, path: "a.b.c[1]" })
    expect(left("- &s [1, *s]\n")).toMatchObject({ line: 1, column: 10, path: "[0][1]" })
  })

  it("a syntax error has its line and column", () => {
    expect(left("a: 1\na: 2\n")).toStrictEqual({
      line: 2,
      column: 1,
      path: "",
      reason: "YAML syntax error: Map keys must be unique"
    })
  })
})
