/**
 * Turns Effect Schema parse errors into short, per-path messages: the noise an optional field adds
 * ("Expected undefined") is dropped, literal alternatives are joined, and the unknown keys of one
 * mapping are reported together, each with the close valid keys, likeliest first (see {@link rank}),
 * followed by the valid keys. Shared by every config reader (sweep and synthesis configs, plugin options).
 *
 * @example
 * import { Issues } from "@cupid-lab/core"
 * Issues.decode(Schema.Struct({ source: Schema.String }), { sorce: "x" }, "key")
 * // Either.left([{ path: [], message: 'unknown key "sorce" (did you mean "source"?); valid keys: source' }, ...])
 * Issues.suggest("retreiver", ["retriever", "inferrer"]) // "retriever"
 * Issues.rank("kk", ["k1", "k", "select"]) // ["k", "k1"]
 */
import { Either, ParseResult, type Schema } from "effect"

export interface Issue {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

const expected = /^Expected (.*), actual (.*)$/s
const unexpectedKeys = /^is unexpected, expected: (.*)$/s

/**
 * Edit distance with transpositions (optimal string alignment), ignoring case: `sorce` -> `source`
 * is 1, `retreiver` -> `retriever` is 1 (a swap).
 */
export const distance = (a: string, b: string): number => {
  const s = a.toLowerCase(),
    t = b.toLowerCase()
  const d: Array<Array<number>> = Array.from({ length: s.length + 1 }, (_, i) =>
    Array.from({ length: t.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0))
  )
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const cost = s[i - 1] === t[j - 1] ? 0 : 1
      let best = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost)
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  }
  return d[s.length]![t.length]!
}

const keyboardRows = ["1234567890-=", "qwertyuiop[]", "asdfghjkl;'", "zxcvbnm,./"]
const keyAt = new Map<string, readonly [number, number]>()
keyboardRows.forEach((row, r) => [...row].forEach((c, col) => keyAt.set(c, [r, col])))

/**
 * Whether two characters are neighbours on a QWERTY keyboard (case ignored): on one row side by
 * side, or on adjacent rows as the rows are staggered (`q` touches `1`, `2`, `w`, `a`).
 */
export const adjacentKeys = (a: string, b: string): boolean => {
  const p = keyAt.get(a.toLowerCase()),
    q = keyAt.get(b.toLowerCase())
  if (p === undefined || q === undefined || a.toLowerCase() === b.toLowerCase()) return false
  const [r1, c1] = p,
    [r2, c2] = q
  if (r1 === r2) return Math.abs(c1 - c2) === 1
  if (r2 === r1 - 1) return c2 === c1 || c2 === c1 + 1
  if (r2 === r1 + 1) return c2 === c1 || c2 === c1 - 1
  return false
}

/**
 * How likely a typist makes `typed` when meaning `meant`, as an edit cost that weighs the usual
 * slips lower: the edit distance of {@link distance}, but a neighbouring key hit instead of the
 * right one costs 0.5, and so does a doubled or a dropped doubled letter (`kk` for `k`, `selct`
 * is a full 1). Lower is likelier.
 */
export const typoCost = (typed: string, meant: string): number => {
  const s = typed.toLowerCase(),
    t = meant.toLowerCase()
  // An extra character of `x` at i is a slip when it repeats a neighbour.
  const doubled = (x: string, i: number) => (i > 0 && x[i] === x[i - 1]) || (i + 1 < x.length && x[i] === x[i + 1])
  const d: Array<Array<number>> = Array.from({ length: s.length + 1 }, () => new Array<number>(t.length + 1).fill(0))
  for (let i = 1; i <= s.length; i++) d[i]![0] = d[i - 1]![0]! + (doubled(s, i - 1) ? 0.5 : 1)
  for (let j = 1; j <= t.length; j++) d[0]![j] = d[0]![j - 1]! + (doubled(t, j - 1) ? 0.5 : 1)
  for (let i = 1; i <= s.length; i++) {
    for (let j = 1; j <= t.length; j++) {
      const sub = s[i - 1] === t[j - 1] ? 0 : adjacentKeys(s[i - 1]!, t[j - 1]!) ? 0.5 : 1
      let best = Math.min(
        d[i - 1]![j]! + (doubled(s, i - 1) ? 0.5 : 1),
        d[i]![j - 1]! + (doubled(t, j - 1) ? 0.5 : 1),
        d[i - 1]![j - 1]! + sub
      )
      if (i > 1 && j > 1 && s[i - 1] === t[j - 2] && s[i - 2] === t[j - 1]) best = Math.min(best, d[i - 2]![j - 2]! + 1)
      d[i]![j] = best
    }
  }
  return d[s.length]![t.length]!
}

/**
 * The valid names a misspelt one may have meant, likeliest first: those within edit distance 2
 * (case ignored, a swap of neighbours counts 1) and closer than the name is long, so that short
 * names do not match everything; ordered by that distance, then by {@link typoCost} (neighbouring
 * keys and doubled letters are likelier slips), then by how much the lengths differ, then by
 * `valid`'s order. `kk` among `k1, k` gives `k, k1`; `k2` gives `k1, k` (1 and 2 are neighbours).
 */
export const rank = (word: string, valid: ReadonlyArray<string>): Array<string> =>
  valid
    .map((v, i) => ({ v, i, d: distance(word, v), cost: typoCost(word, v), len: Math.abs(v.length - word.length) }))
    .filter((c) => c.d <= 2 && c.d < word.length)
    .sort((a, b) => a.d - b.d || a.cost - b.cost || a.len - b.len || a.i - b.i)
    .map((c) => c.v)

/** The valid name a misspelt one most likely meant: the first of {@link rank}, if any. */
export const suggest = (word: string, valid: ReadonlyArray<string>): string | undefined => rank(word, valid)[0]

const quotedList = (names: ReadonlyArray<string>): string =>
  names.length === 1
    ? `"${names[0]}"`
    : `${names
        .slice(0, -1)
        .map((n) => `"${n}"`)
        .join(", ")} or "${names.at(-1)}"`

/**
 * `"sorce" (did you mean "source"?)`, `"kk" (did you mean "k" or "k1"?)` (at most three, likeliest
 * first), or just `"xyz"` when nothing is close. `candidates` (default `valid`) are the names worth
 * suggesting, e.g. without those already given.
 */
export const unknownName = (
  word: string,
  valid: ReadonlyArray<string>,
  candidates: ReadonlyArray<string> = valid
): string => {
  const close = rank(word, candidates).slice(0, 3)
  return close.length === 0 ? `"${word}"` : `"${word}" (did you mean ${quotedList(close)}?)`
}

/**
 * `unknown key "sorce" (did you mean "source"?); valid keys: limit, source` (plural for several);
 * `what` names the unknown ones when it says more than `noun` (`top-level key`). Keys in
 * `present` (already given) are listed but never suggested.
 */
export const unknownKeys = (
  keys: ReadonlyArray<string>,
  valid: ReadonlyArray<string>,
  noun: string,
  what: string = noun,
  present: ReadonlyArray<string> = []
): string => {
  const sorted = [...new Set(valid)].sort()
  const candidates = sorted.filter((v) => !present.includes(v))
  const listed = keys.map((k) => unknownName(k, sorted, candidates)).join(", ")
  return `unknown ${what}${keys.length > 1 ? "s" : ""} ${listed}; valid ${noun}s: ${sorted.join(", ")}`
}

/**
 * Keys accepted beside a schema's own at the root of the decoded value (shorthands a caller takes
 * out before decoding, such as a retriever's `k` and `select`), and the keys the value holds:
 * unknown root keys are then matched against both sets, and never against a key already given.
 */
export interface Accepted {
  readonly also: ReadonlyArray<string>
  readonly present: ReadonlyArray<string>
}

/**
 * `noun` names what the keys are in messages: "option" for plugin options, "key" for config keys;
 * `rootNoun` names unknown keys of the value itself (path `[]`), e.g. "top-level key".
 */
export const clean = (
  issues: ReadonlyArray<Issue>,
  noun: string,
  rootNoun: string = noun,
  accepted?: Accepted
): Array<Issue> => {
  const byPath = new Map<string, { path: ReadonlyArray<PropertyKey>; messages: Array<string> }>()
  // Unknown keys are reported at the enclosing mapping, which is where they have to be fixed.
  const unknown = new Map<string, { path: ReadonlyArray<PropertyKey>; keys: Array<string>; valid: Array<string> }>()
  const order: Array<readonly ["path" | "unknown", string]> = []
  // An optional field that fails inside also fails its `undefined` alternative: that issue is noise
  // whenever a deeper one says what is wrong.
  const deeper = new Set<string>()
  for (const issue of issues) {
    for (let n = 0; n < issue.path.length; n++) deeper.add(JSON.stringify(issue.path.slice(0, n).map(String)))
  }
  for (const issue of issues) {
    if (/^Expected undefined, actual /.test(issue.message) && deeper.has(JSON.stringify(issue.path.map(String))))
      continue
    const match = unexpectedKeys.exec(issue.message)
    if (match !== null) {
      const parent = issue.path.slice(0, -1)
      const k = JSON.stringify(parent.map(String))
      const entry = unknown.get(k)
      if (entry === undefined) {
        const valid = match[1]!.split(" | ").map((s) => s.replace(/^"|"$/g, ""))
        unknown.set(k, { path: parent, keys: [String(issue.path.at(-1))], valid })
        order.push(["unknown", k])
      } else entry.keys.push(String(issue.path.at(-1)))
      continue
    }
    const k = JSON.stringify(issue.path.map(String))
    const entry = byPath.get(k)
    if (entry === undefined) {
      byPath.set(k, { path: issue.path, messages: [issue.message] })
      order.push(["path", k])
    } else entry.messages.push(issue.message)
  }
  const out: Array<Issue> = []
  for (const [kind, k] of order) {
    if (kind === "unknown") {
      const { path, keys, valid } = unknown.get(k)!
      const root = path.length === 0 && accepted !== undefined
      out.push({
        path,
        message: root
          ? unknownKeys(keys, [...valid, ...accepted.also], noun, rootNoun, accepted.present)
          : unknownKeys(keys, valid, noun, path.length === 0 ? rootNoun : noun)
      })
      continue
    }
    const { path, messages } = byPath.get(k)!
    const useful = messages.length > 1 ? messages.filter((m) => !/^Expected undefined, actual /.test(m)) : messages
    const parsed = useful.map((m) => expected.exec(m))
    if (useful.length > 1 && parsed.every((p) => p !== null && p[2] === parsed[0]![2])) {
      out.push({ path, message: `Expected ${parsed.map((p) => p![1]).join(" | ")}, actual ${parsed[0]![2]}` })
    } else {
      out.push({ path, message: [...new Set(useful)].join("; ") })
    }
  }
  return out
}

/** Every issue of a parse error, cleaned. */
export const fromParseError = (error: ParseResult.ParseError, noun: string, rootNoun: string = noun): Array<Issue> =>
  clean(ParseResult.ArrayFormatter.formatErrorSync(error), noun, rootNoun)

/** Decode with every issue collected and unknown keys rejected; issues come back cleaned. */
export const decode = <A, I>(
  schema: Schema.Schema<A, I, never>,
  value: unknown,
  noun: string,
  rootNoun: string = noun
): Either.Either<A, Array<Issue>> => {
  const result = ParseResult.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "error" })(value)
  return Either.mapLeft(result, (e) => clean(ParseResult.ArrayFormatter.formatIssueSync(e), noun, rootNoun))
}
