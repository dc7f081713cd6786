/**
 * Reading a YAML config into plain values, with every problem at a line, a column and a key path:
 * syntax errors, an alias inside the value its anchor names (a value that would contain itself),
 * and aliases that expand the document past {@link maxValues} values (an "alias bomb": each alias
 * repeats its anchor's whole value, so a few nested ones make billions). Both are found on the
 * parsed document before any value is built, in time linear in the file.
 *
 * @example
 * import { Yaml } from "@cupid-lab/core"
 * Yaml.read("a: &x [1, 2]\nb: *x\n")              // Either.right({ a: [1, 2], b: [1, 2] })
 * Yaml.read("p: &p { again: *p }\n")              // Either.left({ line: 1, column: 17, path: "p.again", reason: "the alias *p is inside ..." })
 */
import { Either } from "effect"
import { isAlias, isCollection, isPair, isScalar, LineCounter, parseDocument } from "yaml"

/** The most values a document may expand to, aliases expanded: far beyond any config. */
export const maxValues = 100_000

export interface Problem {
  /** 1-based. */
  readonly line: number
  readonly column: number
  /** Where in the document (`sweep.retriever[2]`); empty for the whole file. */
  readonly path: string
  readonly reason: string
}

/** A node of the parsed document (scalar, mapping, sequence, alias or pair). */
type Node = object

class Found extends Error {
  constructor(readonly problem: Problem) {
    super(problem.reason)
  }
}

const range = (node: Node): number => {
  const r = (node as { range?: ReadonlyArray<number> | null }).range
  return r?.[0] ?? 0
}

/** Parse `text`; its values, or the first problem. */
export const read = (text: string): Either.Either<unknown, Problem> => {
  const lines = new LineCounter()
  const doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true, lineCounter: lines })
  const syntax = doc.errors[0]
  if (syntax !== undefined) {
    const pos = syntax.linePos?.[0]
    return Either.left({
      line: pos?.line ?? 1,
      column: pos?.col ?? 1,
      path: "",
      reason: `YAML syntax error: ${syntax.message.split(" at line ")[0]}`
    })
  }
  const at = (node: Node, path: string, reason: string): Found => {
    const pos = lines.linePos(range(node))
    return new Found({ line: pos.line, column: pos.col, path, reason })
  }
  // Where each node of the document's tree was written, for messages.
  const paths = new Map<Node, string>()
  const children = (node: Node): Array<readonly [Node, string]> => {
    if (!isCollection(node)) return []
    const out: Array<readonly [Node, string]> = []
    node.items.forEach((item, i) => {
      if (isPair(item)) {
        const key = isScalar(item.key) ? String(item.key.value) : String(i)
        if (item.key !== null && typeof item.key === "object") out.push([item.key, key])
        if (item.value !== null && typeof item.value === "object") out.push([item.value, key])
      } else if (item !== null && typeof item === "object") out.push([item, `[${i}]`])
    })
    return out
  }
  const join = (base: string, part: string) =>
    part.startsWith("[") || base === "" ? `${base}${part}` : `${base}.${part}`
  // Expanded sizes, each node's once; `open` holds the nodes being sized, so reaching one again is a cycle.
  const sizes = new Map<Node, number>()
  const open = new Set<Node>()
  const sizeOf = (node: Node): number => {
    const known = sizes.get(node)
    if (known !== undefined) return known
    let size = 1
    if (isAlias(node)) {
      const target = node.resolve(doc)
      if (target !== undefined) {
        if (open.has(target)) {
          // The anchor is written before its value (which is where the node's range starts).
          const anchor = lines.linePos(Math.max(0, text.lastIndexOf(`&${node.source}`, range(target))))
          throw at(
            node,
            paths.get(node) ?? "",
            `the alias *${node.source} is inside the value its anchor &${node.source} (line ${anchor.line}) names, so that value would contain itself`
          )
        }
        size = sizeOf(target)
      }
    } else {
      open.add(node)
      for (const [child] of children(node)) size += sizeOf(child)
      open.delete(node)
    }
    sizes.set(node, size)
    return size
  }
  // The document in file order, aliases expanded: the first node past the limit is where it blows up.
  let total = 0
  const visit = (node: Node, path: string): void => {
    paths.set(node, path)
    total += isAlias(node) ? sizeOf(node) : 1
    if (total > maxValues) {
      throw at(
        node,
        path,
        `the document expands past ${maxValues.toLocaleString("en-US")} values here${isAlias(node) ? ` (the alias *${node.source} repeats its anchor's whole value)` : ""}; ` +
          "nested aliases multiply: write the values out, or use fewer aliases"
      )
    }
    if (!isAlias(node)) for (const [child, part] of children(node)) visit(child, join(path, part))
  }
  try {
    if (doc.contents !== null) visit(doc.contents, "")
  } catch (e) {
    if (e instanceof Found) return Either.left(e.problem)
    throw e
  }
  // Bounded and acyclic now, so the library's own alias limit is not needed.
  return Either.right(doc.toJS({ maxAliasCount: -1 }))
}
