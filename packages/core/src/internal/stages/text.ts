// Small, deterministic English text helpers shared by the stage parsers and the extractive inferrer.

const abbreviations = new Set([
  "dr",
  "mr",
  "mrs",
  "ms",
  "prof",
  "st",
  "sr",
  "jr",
  "vs",
  "etc",
  "e.g",
  "i.e",
  "approx",
  "fig",
  "inc",
  "ltd",
  "co",
  "dept",
  "min",
  "max",
  "est"
])

/** Straight quotes and apostrophes, single spaces. */
export const normalizeSpace = (text: string): string =>
  text
    .replace(/[\u2018\u2019]/g, "'")
    .replace(/[\u201C\u201D]/g, '"')
    .replace(/\s+/g, " ")
    .trim()

/**
 * The first `max` characters of `flatten(text)` (which must collapse and trim whitespace), with
 * "..." when there is more. Flattens only a prefix of a long text: an answer of MB is not copied.
 */
export const prefixExcerpt = (
  text: string,
  max: number,
  flatten: (text: string) => string = normalizeSpace
): string => {
  for (let n = 4 * max; ; n *= 4) {
    const whole = n >= text.length
    const t = flatten(whole ? text : text.slice(0, n))
    if (t.length > max) return `${t.slice(0, max)}...`
    if (whole) return t
  }
}

/**
 * Split text into sentences. Line breaks always end a sentence (chat turns use them for lists);
 * `.`, `!` and `?` end one when followed by a space and not preceded by a known abbreviation or a
 * single-letter initial.
 */
export const sentences = (text: string): Array<string> => {
  const out: Array<string> = []
  for (const rawLine of text.split(/\n+/)) {
    const line = normalizeSpace(rawLine)
    if (line === "") continue
    let start = 0
    const boundary = /[.!?]+["')\]]*(?=\s)/g
    for (const m of line.matchAll(boundary)) {
      const end = m.index + m[0].length
      const before = line.slice(start, m.index)
      const lastWord = (/([A-Za-z.]+)$/.exec(before)?.[1] ?? "").toLowerCase()
      if (m[0].startsWith(".") && m[0].length === 1 && (abbreviations.has(lastWord) || /^[a-z]$/.test(lastWord)))
        continue
      const s = line.slice(start, end).trim()
      if (s !== "") out.push(s)
      start = end
    }
    const rest = line.slice(start).trim()
    if (rest !== "") out.push(rest)
  }
  return out
}

/** The first sentence of a text (the whole text when it has one). */
export const firstSentence = (text: string): string => sentences(text)[0] ?? ""

/** Word tokens: letters and digits, with inner apostrophes kept ("don't"). */
export const words = (text: string): Array<string> => normalizeSpace(text).match(/[A-Za-z0-9]+(?:'[A-Za-z]+)*/g) ?? []

/** Whitespace-separated words, the unit of the 30-word limit. */
export const wordCount = (text: string): number => (text.trim() === "" ? 0 : text.trim().split(/\s+/).length)

const stopwords = new Set(
  (
    "a about above after again all also am an and any are as at be because been before being below between both but by " +
    "can could did do does doing don't down during each even few for from further get got had has have having he her " +
    "here hers herself him himself his how i i'd i'll i'm i've if in into is it it's its itself just let let's like me " +
    "might more most much must my myself no nor not now of off on once only or other our ours ourselves out over own " +
    "please really same she should so some such than that that's the their theirs them themselves then there these " +
    "they this those through thus to too under until up us very was we we're were what when where which while who whom " +
    "why will with would you you're your yours yourself yourselves okay ok yes yeah thanks thank great perfect sure " +
    "one two make made need needs want wants way thing things something bit lot maybe actually still again " +
    "help use get give know think try look see tell show can't won't"
  ).split(" ")
)

export const isStopword = (word: string): boolean => stopwords.has(word.toLowerCase())

/** A crude suffix stripper, applied alike to both sides of every comparison. */
export const stem = (word: string): string => {
  let w = word.toLowerCase().replace(/'s$/, "")
  if (w.length > 4 && w.endsWith("ies")) w = `${w.slice(0, -3)}y`
  else if (w.length > 4 && w.endsWith("sses")) w = w.slice(0, -2)
  else if (w.length > 3 && w.endsWith("s") && !w.endsWith("ss") && !w.endsWith("us")) w = w.slice(0, -1)
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3)
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2)
  else if (w.length > 4 && w.endsWith("ly")) w = w.slice(0, -2)
  return w
}

/** Stems of the content words of a text (stopwords and single characters dropped). */
export const contentStems = (text: string): Set<string> =>
  new Set(
    words(text)
      .filter((w) => w.length > 1 && !isStopword(w))
      .map(stem)
  )

export const overlap = (a: ReadonlySet<string>, b: ReadonlySet<string>): number => {
  let n = 0
  for (const x of a) if (b.has(x)) n++
  return n
}

export const jaccard = (a: ReadonlySet<string>, b: ReadonlySet<string>): number => {
  const shared = overlap(a, b)
  const union = a.size + b.size - shared
  return union === 0 ? 0 : shared / union
}

/** The first `n` whitespace-separated words of a text. */
export const firstWords = (text: string, n: number): string => text.trim().split(/\s+/).slice(0, n).join(" ")

/** Remove one pair of matching quotes around a whole text. */
export const unquote = (text: string): string => {
  const t = text.trim()
  const pairs: ReadonlyArray<readonly [string, string]> = [
    ['"', '"'],
    ["'", "'"],
    ["\u201C", "\u201D"],
    ["\u2018", "\u2019"],
    ["`", "`"]
  ]
  for (const [open, close] of pairs) {
    if (t.length >= 2 && t.startsWith(open) && t.endsWith(close)) return t.slice(open.length, -close.length).trim()
  }
  return t
}

/** Remove markdown emphasis and inline code marks, keeping the words. */
export const stripEmphasis = (text: string): string =>
  text
    .replace(/(\*\*|__)(.*?)\1/g, "$2")
    .replace(/(^|\W)[*_](\S(?:.*?\S)?)[*_](?=\W|$)/g, "$1$2")
    .replace(/`([^`]*)`/g, "$1")

/** Remove a code fence wrapped around a whole answer (```json ... ```). */
export const stripFence = (text: string): string => {
  const m = /^\s*```[\w-]*\s*\n([\s\S]*?)\n?\s*```\s*$/.exec(text)
  return m ? m[1]! : text
}
