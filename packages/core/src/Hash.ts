/**
 * Stable hashing for cache keys, cell ids and session ids.
 *
 * `canonicalJson` sorts object keys recursively so that two structurally equal values always
 * serialize to the same string, whatever order their keys were written in.
 *
 * @example
 * import { Hash } from "@cupid-lab/core"
 * Hash.sha256Hex(Hash.canonicalJson({ b: 1, a: [2, 3] })) // same as for { a: [2, 3], b: 1 }
 */
import { createHash } from "node:crypto"

export const canonicalJson = (value: unknown): string => JSON.stringify(sortKeys(value))

const sortKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(sortKeys)
  if (value !== null && typeof value === "object" && !(value instanceof Uint8Array)) {
    const out: Record<string, unknown> = {}
    for (const key of Object.keys(value).sort()) {
      const v = (value as Record<string, unknown>)[key]
      if (v !== undefined) out[key] = sortKeys(v)
    }
    return out
  }
  return value
}

export const sha256Hex = (text: string | Uint8Array): string => createHash("sha256").update(text).digest("hex")

/** Short content hash (first 16 hex digits of SHA-256) of any JSON-able value. */
export const contentHash = (value: unknown): string => sha256Hex(canonicalJson(value)).slice(0, 16)

/**
 * Content hash of a dialogue (16 hex digits), computed incrementally without building a JSON
 * string: loading hashes every session of every row, so this is on the loader's hot path.
 */
export const dialogueHash = (dialogue: ReadonlyArray<{ readonly role: string; readonly content: string }>): string => {
  const h = createHash("sha256")
  for (const m of dialogue) {
    h.update(m.role)
    h.update("\u0000")
    h.update(m.content)
    h.update("\u0001")
  }
  return h.digest("hex").slice(0, 16)
}
