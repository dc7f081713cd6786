// A decoder compiled once from a Schema's AST into plain checks, for the lines of a run directory
// (tens of thousands per file). It only ever accepts what the Schema accepts, with the same output
// (the same values, the same key order): structs, records, arrays, tuples, unions whose members
// cannot accept the same value, literals and the keyword types. Any other node, and any value the
// plain checks do not accept, goes to the Schema's own decoder, which also writes every error. The
// Schema stays the one definition of the record.
import { Either, ParseResult, Schema, type SchemaAST as AST } from "effect"

/** Not accepted by the plain checks: the Schema's decoder decides. */
const miss: unique symbol = Symbol("miss")
type Plain = (input: unknown) => unknown

/** What a node can accept, for telling whether a union's members overlap. */
type Kind = "string" | "number" | "boolean" | "null" | "undefined" | "object" | "array" | "any"

const hasOwn = (o: object, k: PropertyKey) => Object.prototype.hasOwnProperty.call(o, k)

/** `input` has the keys of `out` (`n` of them) and no other, in the same order. */
const sameKeys = (input: object, out: object, n: number): boolean => {
  const a = Object.keys(input)
  if (a.length !== n) return false
  const b = Object.keys(out)
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return false
  return true
}

const kindsOf = (ast: AST.AST): ReadonlyArray<Kind | { readonly literal: unknown }> | undefined => {
  switch (ast._tag) {
    case "StringKeyword":
      return ["string"]
    case "NumberKeyword":
      return ["number"]
    case "BooleanKeyword":
      return ["boolean"]
    case "UndefinedKeyword":
      return ["undefined"]
    case "Literal":
      return [{ literal: ast.literal }]
    case "TypeLiteral":
      return ast.propertySignatures.length === 0 && ast.indexSignatures.length === 0 ? undefined : ["object"]
    case "TupleType":
      return ["array"]
    case "Union": {
      const all = ast.types.map(kindsOf)
      return all.every((k) => k !== undefined) ? all.flat() : undefined
    }
    default:
      return undefined
  }
}

const typeOfLiteral = (v: unknown): Kind => (v === null ? "null" : (typeof v as Kind))

/** Members no value can satisfy two of: then the one that accepts is the one the Schema picks. */
const disjoint = (members: ReadonlyArray<AST.AST>): boolean => {
  const seen: Array<Kind | { readonly literal: unknown }> = []
  for (const m of members) {
    const ks = kindsOf(m)
    if (ks === undefined) return false
    for (const k of ks) {
      const clash = seen.some((s) =>
        typeof s === "string"
          ? typeof k === "string"
            ? s === k
            : typeOfLiteral(k.literal) === s
          : typeof k === "string"
            ? typeOfLiteral(s.literal) === k
            : Object.is(s.literal, k.literal)
      )
      if (clash) return false
    }
    seen.push(...ks)
  }
  return true
}

const compile = (ast: AST.AST, slow: (ast: AST.AST) => Plain): Plain => {
  switch (ast._tag) {
    case "StringKeyword":
      return (u) => (typeof u === "string" ? u : miss)
    case "NumberKeyword":
      return (u) => (typeof u === "number" ? u : miss)
    case "BooleanKeyword":
      return (u) => (typeof u === "boolean" ? u : miss)
    case "UndefinedKeyword":
      return (u) => (u === undefined ? u : miss)
    case "UnknownKeyword":
    case "AnyKeyword":
      return (u) => u
    case "Literal": {
      const literal = ast.literal
      return typeof literal === "bigint" ? slow(ast) : (u) => (u === literal ? u : miss)
    }
    case "Union": {
      if (!disjoint(ast.types)) return slow(ast)
      const members = ast.types.map((t) => compile(t, slow))
      return (u) => {
        for (const m of members) {
          const out = m(u)
          if (out !== miss) return out
        }
        return miss
      }
    }
    case "TupleType": {
      const optional = ast.elements.some((e) => e.isOptional)
      if (optional || ast.rest.length > 1) return slow(ast)
      const elements = ast.elements.map((e) => compile(e.type, slow))
      const rest = ast.rest.length === 1 ? compile(ast.rest[0]!.type, slow) : undefined
      return (u) => {
        if (!Array.isArray(u)) return miss
        if (rest === undefined ? u.length !== elements.length : u.length < elements.length) return miss
        let out: Array<unknown> | undefined
        for (let i = 0; i < u.length; i++) {
          const v = (i < elements.length ? elements[i]! : rest!)(u[i])
          if (v === miss) return miss
          if (out === undefined && v !== u[i]) out = u.slice(0, i)
          if (out !== undefined) out[i] = v
        }
        return out ?? u
      }
    }
    case "TypeLiteral": {
      const { indexSignatures, propertySignatures } = ast
      if (propertySignatures.length === 0 && indexSignatures.length === 0) return slow(ast)
      // A record whose keys are also named properties, or keyed by anything but strings: the Schema decides.
      if (indexSignatures.length > 1 || (indexSignatures.length === 1 && propertySignatures.length > 0))
        return slow(ast)
      if (indexSignatures.length === 1) {
        if (indexSignatures[0]!.parameter._tag !== "StringKeyword") return slow(ast)
        const value = compile(indexSignatures[0]!.type, slow)
        return (u) => {
          if (typeof u !== "object" || u === null || Array.isArray(u)) return miss
          const input = u as Record<string, unknown>
          let out: Record<string, unknown> | undefined
          const keys = Object.keys(input)
          for (let i = 0; i < keys.length; i++) {
            const v = value(input[keys[i]!])
            if (v === miss) return miss
            if (out === undefined && v !== input[keys[i]!]) {
              out = {}
              for (let j = 0; j < i; j++) out[keys[j]!] = input[keys[j]!]
            }
            if (out !== undefined) out[keys[i]!] = v
          }
          return out ?? input
        }
      }
      if (propertySignatures.some((p) => typeof p.name !== "string")) return slow(ast)
      const props = propertySignatures.map((p) => ({
        name: p.name as string,
        optional: p.isOptional,
        type: compile(p.type, slow)
      }))
      return (u) => {
        if (typeof u !== "object" || u === null || Array.isArray(u)) return miss
        const input = u as Record<string, unknown>
        const out: Record<string, unknown> = {}
        // The input itself when it holds exactly these properties, in this order, each unchanged.
        let same = true,
          present = 0
        for (const p of props) {
          if (!hasOwn(input, p.name)) {
            if (p.optional) continue
            return miss
          }
          const v = p.type(input[p.name])
          if (v === miss) return miss
          if (v !== input[p.name]) same = false
          out[p.name] = v
          present++
        }
        return same && sameKeys(input, out, present) ? input : out
      }
    }
    default:
      return slow(ast)
  }
}

/**
 * The Schema's `decodeUnknownEither` with excess properties ignored (what every reader of a run
 * directory uses), answered by plain checks when they accept the value.
 */
export const decoder = <A, I>(
  schema: Schema.Schema<A, I>,
  options: { readonly errors?: "first" | "all" } = {}
): ((input: unknown) => Either.Either<A, ParseResult.ParseError>) => {
  const parseOptions = { onExcessProperty: "ignore", ...options } as const
  const full = Schema.decodeUnknownEither(schema, parseOptions)
  const slow = (node: AST.AST): Plain => {
    const decode = ParseResult.decodeUnknownEither(Schema.make<unknown>(node), parseOptions)
    return (u) => {
      const r = decode(u)
      return r._tag === "Right" ? r.right : miss
    }
  }
  const plain = compile(schema.ast, slow)
  return (input) => {
    const out = plain(input)
    return out === miss ? full(input) : Either.right(out as A)
  }
}
