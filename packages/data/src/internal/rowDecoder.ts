import { Either, ParseResult, Schema, SchemaAST } from "effect"
import { Domain } from "@cupid-lab/core"

/** Why one row does not decode: the field path (e.g. `prior_interactions[3].dialogue[1].role`) and expected vs found. */
export interface RowProblem {
  readonly field?: string
  readonly reason: string
}

/** A problem with one instance of a row, with the instance's id when it is known. */
export interface Problem extends RowProblem {
  readonly id?: string
}

/**
 * What one row of a source decodes to: its instances (a CUPID row is one instance, a LoCoMo
 * conversation one per question), each decoded or not, or a problem with the whole row. `key`
 * names the row in messages when its position alone is not enough (a LongMemEval question id, a
 * LoCoMo sample id).
 */
export interface DecodedRow {
  readonly row: number | string
  readonly key?: string
  readonly result: Either.Either<ReadonlyArray<Either.Either<Domain.Instance, Problem>>, Problem>
}

const decode = Schema.decodeUnknownEither(Domain.CupidRow)

/** Decode a value with a schema; the problem names the first failing field. */
export const decodeWith = <A, I>(schema: Schema.Schema<A, I>) => {
  const run = Schema.decodeUnknownEither(schema)
  return (value: unknown): Either.Either<A, RowProblem> => Either.mapLeft(run(value), (e) => describeIssue(e.issue))
}

/** A field path under a prefix: `under("qa[3]", { field: "evidence" })` is about `qa[3].evidence`. */
export const under = (prefix: string, problem: RowProblem): RowProblem => ({
  ...problem,
  field:
    problem.field === undefined
      ? prefix
      : problem.field.startsWith("[")
        ? `${prefix}${problem.field}`
        : `${prefix}.${problem.field}`
})

/** Keys by which a row that is not CUPID's says which benchmark it belongs to, for a hint in the message. */
const otherFormats: ReadonlyArray<readonly [string, string]> = [
  ["haystack_sessions", "a LongMemEval question: read the file as longmemeval:<file>"],
  ["conversation", "a LoCoMo conversation: read the file as locomo:<file>"]
]

export const decodeRow = (value: unknown): Either.Either<Domain.CupidRow, RowProblem> => {
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    return Either.left({ reason: `expected a JSON object (one instance), found ${describeValue(value)}` })
  }
  const other = otherFormats.find(([key]) => key in value && !("prior_interactions" in value))
  if (other !== undefined) return Either.left({ reason: `expected a CUPID row; this looks like ${other[1]}` })
  return Either.mapLeft(decode(value), (e) => describeIssue(e.issue))
}

/** `persona_id:instance_type` of a row that does not decode, when it has both. */
const cupidRowId = (value: unknown): string | undefined => {
  if (value === null || typeof value !== "object") return undefined
  const { persona_id, instance_type } = value as Record<string, unknown>
  return typeof persona_id === "string" && typeof instance_type === "string"
    ? `${persona_id}:${instance_type}`
    : undefined
}

/** A CUPID row as a decoded row: one instance. */
export const cupidRow = (value: unknown): DecodedRow["result"] =>
  Either.mapBoth(decodeRow(value), {
    onLeft: (problem): Problem => {
      const id = cupidRowId(value)
      return id === undefined ? problem : { ...problem, id }
    },
    onRight: (row) => [Either.right(Domain.fromRow(row))]
  })

/** Follows the first failing branch of a parse issue down to its leaf, collecting the path on the way. */
export const describeIssue = (root: ParseResult.ParseIssue): RowProblem => {
  const path: Array<PropertyKey> = []
  let issue: ParseResult.ParseIssue = root
  for (;;) {
    switch (issue._tag) {
      case "Pointer":
        path.push(...(Array.isArray(issue.path) ? issue.path : [issue.path]))
        issue = issue.issue
        continue
      case "Refinement":
      case "Transformation":
        issue = issue.issue
        continue
      case "Composite": {
        const literals = literalChoices(issue.ast)
        if (literals !== undefined)
          return at(path, `expected one of ${literals.join(", ")}, found ${describeValue(issue.actual)}`)
        // Of a union's members, follow one the value got into (its issue is deeper than its type).
        const issues: ReadonlyArray<ParseResult.ParseIssue> = Array.isArray(issue.issues)
          ? issue.issues
          : [issue.issues as ParseResult.ParseIssue]
        issue = (SchemaAST.isUnion(issue.ast) ? issues.find((i) => i._tag !== "Type") : undefined) ?? issues[0]!
        continue
      }
      case "Type":
        if (issue.actual === undefined)
          return at(path, `expected ${describeAst(issue.ast)}, found nothing (missing field)`)
        return at(path, `expected ${describeAst(issue.ast)}, found ${describeValue(issue.actual)}`)
      case "Missing":
        return at(path, `expected ${describeAst(missingType(issue))}, found nothing (missing field)`)
      case "Unexpected":
        return at(path, `unexpected value ${describeValue(issue.actual)}`)
      case "Forbidden":
        return at(path, `cannot be decoded here (${describeValue(issue.actual)})`)
    }
  }
}

/** A missing key's (or tuple element's) issue carries its property signature (or element); the expected type is its type. */
const missingType = (issue: ParseResult.Missing): SchemaAST.AST => issue.ast.type

const at = (path: ReadonlyArray<PropertyKey>, reason: string): RowProblem => {
  const field = formatPath(path)
  return field === "" ? { reason } : { field, reason }
}

/** `["prior_interactions", 3, "dialogue", 1, "role"]` -> `prior_interactions[3].dialogue[1].role` (0-based indices). */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>(
    (acc, key) => (typeof key === "number" ? `${acc}[${key}]` : acc === "" ? String(key) : `${acc}.${String(key)}`),
    ""
  )

const literalChoices = (ast: SchemaAST.AST): ReadonlyArray<string> | undefined => {
  if (!SchemaAST.isUnion(ast)) return undefined
  const out: Array<string> = []
  for (const member of ast.types) {
    if (!SchemaAST.isLiteral(member)) return undefined
    out.push(String(member.literal))
  }
  return out
}

const describeAst = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "StringKeyword":
      return "string"
    case "NumberKeyword":
      return "number"
    case "BooleanKeyword":
      return "boolean"
    case "TupleType":
      return "an array"
    case "TypeLiteral":
      return "an object"
    case "Literal":
      return JSON.stringify(ast.literal)
    default: {
      const literals = literalChoices(ast)
      return literals !== undefined ? `one of ${literals.join(", ")}` : String(ast)
    }
  }
}

/** A short, readable rendering of an offending value: strings quoted and cut, containers by kind and size. */
export const describeValue = (value: unknown): string => {
  if (value === null) return "null"
  if (value === undefined) return "nothing"
  if (typeof value === "string") return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}…` : value)
  if (typeof value === "bigint") return `${value}`
  if (Array.isArray(value)) return `an array of ${value.length}`
  if (typeof value === "object") return "an object"
  return String(value)
}
