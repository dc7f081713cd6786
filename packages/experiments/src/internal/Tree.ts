/** Helpers for walking decoded YAML trees and naming positions in them. */

export type PathSegment = string | number

export const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value)

/** `["sweep", "retriever", 2, "use"]` -> `sweep.retriever[2].use` */
export const formatPath = (path: ReadonlyArray<PropertyKey>): string => {
  let out = ""
  for (const segment of path) {
    if (typeof segment === "number") out += `[${segment}]`
    else out += out === "" ? String(segment) : `.${String(segment)}`
  }
  return out
}

/** Append a relative dotted path (`a.b`) to a formatted path. */
export const joinPath = (base: string, rest: string): string => (rest === "" ? base : base === "" ? rest : `${base}.${rest}`)

/** `a` -> `"a"`; values in messages are shown as JSON so strings are quoted and types are visible. */
export const show = (value: unknown): string => (value === undefined ? "undefined" : JSON.stringify(value))
