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

/** `a` -> `"a"`; values in messages are shown as JSON so strings are quoted and types are visible. */
export const show = (value: unknown): string => (value === undefined ? "undefined" : JSON.stringify(value))

/** One expanded alternative, and where each of its parts (`""` for the whole, `k`, `embedder.dims`) was written. */
export interface Alt {
  readonly value: unknown
  readonly origins: ReadonlyArray<readonly [string, string]>
}

/** Where an alternative as a whole was written (else `at`), and where each of its parts was. */
export const located = (alt: Pick<Alt, "origins">, at: string): { readonly origin: string; readonly origins: ReadonlyMap<string, string> } => ({
  origin: alt.origins.find(([rel]) => rel === "")?.[1] ?? at,
  origins: new Map(alt.origins.filter(([rel]) => rel !== ""))
})

export const childPath = (key: string, rel: string): string => (rel === "" ? key : rel.startsWith("[") ? `${key}${rel}` : `${key}.${rel}`)

/** A value's alternatives: a list lists them (a list inside it is a literal value), a mapping expands each value. */
export const alternatives = (value: unknown, origin: string): Array<Alt> =>
  Array.isArray(value)
    ? value.flatMap((el, i) => (isRecord(el) ? objectAlternatives(el, `${origin}[${i}]`) : [{ value: el, origins: [["", `${origin}[${i}]`]] }]))
    : isRecord(value)
    ? objectAlternatives(value, origin)
    : [{ value, origins: [["", origin]] }]

/** The product of a mapping's values' alternatives, in key order. */
export const objectAlternatives = (obj: Readonly<Record<string, unknown>>, origin: string): Array<Alt> => {
  let acc: Array<{ value: Record<string, unknown>; origins: ReadonlyArray<readonly [string, string]> }> = [{ value: {}, origins: [["", origin]] }]
  for (const [key, v] of Object.entries(obj)) {
    const options = alternatives(v, `${origin}.${key}`)
    acc = acc.flatMap((a) =>
      options.map((o) => ({
        value: { ...a.value, [key]: o.value },
        origins: [...a.origins, ...o.origins.map(([rel, at]) => [childPath(key, rel), at] as const)]
      }))
    )
  }
  return acc
}

/** How many alternatives {@link alternatives} gives, computed without making them. */
export const countAlternatives = (value: unknown): number =>
  Array.isArray(value)
    ? value.reduce((n: number, el) => n + (isRecord(el) ? countObjectAlternatives(el) : 1), 0)
    : isRecord(value)
    ? countObjectAlternatives(value)
    : 1

/** How many alternatives {@link objectAlternatives} gives, computed without making them. */
export const countObjectAlternatives = (obj: Readonly<Record<string, unknown>>): number =>
  Object.values(obj).reduce((n: number, v) => n * countAlternatives(v), 1)

/** Where a part (at `path` inside a value) was written, given where the value's parts were written. */
export const originOf = (stage: { readonly origin: string; readonly origins: ReadonlyMap<string, string> }, path: ReadonlyArray<PropertyKey>): string => {
  const rel = formatPath(path)
  let best = "", bestAt = stage.origin
  for (const [key, at] of stage.origins) {
    const matches = rel === key || rel.startsWith(`${key}.`) || rel.startsWith(`${key}[`)
    if (matches && key.length > best.length) {
      best = key
      bestAt = at
    }
  }
  const rest = rel.slice(best.length)
  if (best === "") return rest === "" ? bestAt : rest.startsWith("[") ? `${bestAt}${rest}` : `${bestAt}.${rest}`
  return `${bestAt}${rest}`
}
