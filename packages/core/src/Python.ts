/**
 * The few Python behaviours the CUPID authors' evaluation code relies on when it builds a prompt
 * or reads an answer, so that what the project sends and counts is what theirs does: reading a
 * literal (their matcher examples live in a module as a Python list), `str.strip()`,
 * `json.dumps(...)` (with `indent=2` or none) and `float(...)`. Nothing here executes Python.
 *
 * @example
 * import { Python } from "@cupid-lab/core"
 * Python.float(" 7 ") // 7
 * Python.strip("\x1cscore\n") // "score"
 */

export type PyValue = string | number | boolean | null | ReadonlyArray<PyValue> | PyDict
/** A dict keeps its insertion order, as Python's does. */
export interface PyDict {
  readonly entries: ReadonlyArray<readonly [PyValue, PyValue]>
}

const escapes: Readonly<Record<string, string>> = {
  n: "\n",
  t: "\t",
  r: "\r",
  "\\": "\\",
  "'": "'",
  '"': '"',
  "0": "\0",
  a: "\x07",
  b: "\b",
  f: "\f",
  v: "\v"
}

/**
 * Parse the Python literal that starts at `start` (a list, dict, string, number, True, False or
 * None; comments and trailing commas allowed). Returns the value and the offset after it, or why
 * it cannot be read.
 */
export const literalAt = (
  source: string,
  start: number
): { readonly value: PyValue; readonly end: number } | string => {
  let i = start
  const skip = () => {
    for (;;) {
      while (i < source.length && /\s/.test(source[i]!)) i++
      if (source[i] !== "#") return
      while (i < source.length && source[i] !== "\n") i++
    }
  }
  const error = (what: string) => `${what} at offset ${i}: ${JSON.stringify(source.slice(i, i + 30))}`
  const str = (): string | { error: string } => {
    const q = source[i]!
    const triple = source.startsWith(q.repeat(3), i)
    const close = triple ? q.repeat(3) : q
    i += close.length
    let out = ""
    while (i < source.length && !source.startsWith(close, i)) {
      const c = source[i]!
      if (c === "\\") {
        const n = source[i + 1]!
        if (n === "\n") i += 2
        else if (n === "u" || n === "x") {
          const len = n === "u" ? 4 : 2
          out += String.fromCharCode(parseInt(source.slice(i + 2, i + 2 + len), 16))
          i += 2 + len
        } else {
          out += escapes[n] ?? `\\${n}`
          i += 2
        }
      } else if (c === "\n" && !triple) return { error: error("unterminated string") }
      else {
        out += c
        i++
      }
    }
    if (i >= source.length) return { error: error("unterminated string") }
    i += close.length
    return out
  }
  const value = (): PyValue | { error: string } => {
    skip()
    const c = source[i]
    if (c === undefined) return { error: error("unexpected end") }
    if (c === "'" || c === '"') {
      // Adjacent string literals are one string, as in Python.
      let s = ""
      while (source[i] === "'" || source[i] === '"') {
        const part = str()
        if (typeof part !== "string") return part
        s += part
        skip()
      }
      return s
    }
    if (c === "[" || c === "{") {
      const close = c === "[" ? "]" : "}"
      i++
      const items: Array<PyValue> = []
      const entries: Array<readonly [PyValue, PyValue]> = []
      for (;;) {
        skip()
        if (source[i] === close) {
          i++
          return c === "[" ? items : { entries }
        }
        const k = value()
        if (typeof k === "object" && k !== null && "error" in k) return k
        if (c === "{") {
          skip()
          if (source[i] !== ":") return { error: error("expected ':'") }
          i++
          const v = value()
          if (typeof v === "object" && v !== null && "error" in v) return v
          entries.push([k as PyValue, v as PyValue])
        } else items.push(k as PyValue)
        skip()
        if (source[i] === ",") i++
        else if (source[i] !== close) return { error: error(`expected ',' or '${close}'`) }
      }
    }
    const word = /^(?:True|False|None|-?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?)/.exec(source.slice(i, i + 40))
    if (word === null) return { error: error("not a literal") }
    i += word[0].length
    return word[0] === "True" ? true : word[0] === "False" ? false : word[0] === "None" ? null : Number(word[0])
  }
  const v = value()
  if (typeof v === "object" && v !== null && "error" in v) return v.error
  return { value: v as PyValue, end: i }
}

/** The literal assigned to a module-level name (`NAME = [...]`), or why it cannot be read. */
export const assignedLiteral = (source: string, name: string): PyValue | string => {
  const m = new RegExp(`^${name}\\s*=\\s*`, "m").exec(source)
  if (m === null) return `no assignment to ${name}`
  const r = literalAt(source, m.index + m[0].length)
  return typeof r === "string" ? r : r.value
}

// What `str.isspace()` is true for: the characters `str.strip()` removes.
const pyWhitespace = "[\\t\\n\\v\\f\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000]"
const stripRe = new RegExp(`^${pyWhitespace}+|${pyWhitespace}+$`, "g")

/** Python's `str.strip()` (it removes a few characters JavaScript's `trim()` keeps, and keeps U+FEFF). */
export const strip = (text: string): string => text.replace(stripRe, "")

/** `json.dumps(value)` without an indent: one line, `, ` between items and `: ` after keys. */
const oneLine = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(oneLine).join(", ")}]`
  if (value !== null && typeof value === "object")
    return `{${Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => `${JSON.stringify(k)}: ${oneLine(v)}`)
      .join(", ")}}`
  return JSON.stringify(value)
}

/**
 * Python's `json.dumps(value, indent=2)`, or with `indent` null its `json.dumps(value)`;
 * `ensure_ascii` escapes every character outside printable ASCII that JSON does not (DEL and
 * above; a character beyond the BMP as its two surrogates, as Python does). For strings, integers,
 * booleans, null, lists and dicts (Python prints a float such as `1.0` differently).
 */
export const jsonDumps = (value: unknown, indent: number | null = 2): string =>
  (indent === null ? oneLine(value) : JSON.stringify(value, null, indent)).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`
  )

const pyFloat =
  /^[+-]?(?:(?:\d(?:_?\d)*)?\.?\d(?:_?\d)*(?:[eE][+-]?\d(?:_?\d)*)?|(?:\d(?:_?\d)*)\.|inf(?:inity)?|nan)$/i

/** Python's `float(text)`, or undefined where Python raises `ValueError`. */
export const float = (text: string): number | undefined => {
  const t = strip(text)
  if (!pyFloat.test(t)) return undefined
  const plain = t.replace(/_/g, "").toLowerCase()
  const sign = plain.startsWith("-") ? -1 : 1
  const body = plain.replace(/^[+-]/, "")
  if (body.startsWith("inf")) return sign * Infinity
  if (body === "nan") return NaN
  return Number(plain)
}
