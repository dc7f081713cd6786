// The Porter stemmer as NLTK runs it by default (`nltk.stem.PorterStemmer()`, mode NLTK_EXTENSIONS),
// which LoCoMo's answer F1 applies to every token. Written from Porter (1980) and the documented
// deviations of NLTK's mode (nltk/stem/porter.py, checked against nltk 3.10.3): a pool of irregular
// forms, words of one or two letters left alone, "ies"/"ied" of four-letter words kept as "ie",
// y -> i only after a consonant that is not the word's first letter, the extra step-2 rules ("alli"
// applied first and again, "bli", "fulli", "logi"), and a two-letter vowel-consonant stem counted
// as cvc. The npm stemmers (stemmer, porter-stemmer, natural) implement Porter's own version and
// differ from NLTK on about 1% of English words ("age", "abbey", "additionally"), so none is used.
//
// Strings are handled as arrays of code points, as Python indexes them.

type Word = ReadonlyArray<string>

const vowels = new Set(["a", "e", "i", "o", "u"])

const pool: ReadonlyMap<string, string> = new Map([
  ["sky", "sky"],
  ["skies", "sky"],
  ["dying", "die"],
  ["lying", "lie"],
  ["tying", "tie"],
  ["news", "news"],
  ["innings", "inning"],
  ["inning", "inning"],
  ["outings", "outing"],
  ["outing", "outing"],
  ["cannings", "canning"],
  ["canning", "canning"],
  ["howe", "howe"],
  ["proceed", "proceed"],
  ["exceed", "exceed"],
  ["succeed", "succeed"]
])

/** Per letter: true for a consonant. A "y" is a consonant at the start or after a vowel. */
const consonants = (w: Word): ReadonlyArray<boolean> => {
  const flags: Array<boolean> = []
  w.forEach((ch, i) => flags.push(vowels.has(ch) ? false : ch === "y" ? i === 0 || !flags[i - 1] : true))
  return flags
}

const isConsonant = (w: Word, i: number): boolean => consonants(w.slice(0, i + 1))[i]!

/** Porter's m: the number of vowel-to-consonant transitions. */
const measure = (w: Word): number => {
  const f = consonants(w)
  let m = 0
  for (let i = 1; i < f.length; i++) if (!f[i - 1] && f[i]) m++
  return m
}

const positive = (w: Word): boolean => measure(w) > 0
const hasVowel = (w: Word): boolean => consonants(w).some((c) => !c)
const endsDouble = (w: Word): boolean =>
  w.length >= 2 && w[w.length - 1] === w[w.length - 2] && isConsonant(w, w.length - 1)
const endsCvc = (w: Word): boolean => {
  const n = w.length
  if (n >= 3) {
    const f = consonants(w)
    if (f[n - 3] && !f[n - 2] && f[n - 1] && !["w", "x", "y"].includes(w[n - 1]!)) return true
  }
  return n === 2 && !isConsonant(w, 0) && isConsonant(w, 1)
}

const endsWith = (w: Word, suffix: string): boolean => w.slice(w.length - suffix.length).join("") === suffix
const cut = (w: Word, suffix: string): Word => w.slice(0, w.length - suffix.length)
const chars = (s: string): Word => Array.from(s)

/** A rule: a suffix, its replacement and the condition on the stem (the word without the suffix). */
type Rule = readonly [suffix: string, replacement: string, condition?: (stem: Word) => boolean]

/** The first rule whose suffix the word ends with decides: applied when its condition holds, else the word stays. */
const firstRule = (w: Word, rules: ReadonlyArray<Rule>): Word => {
  for (const [suffix, replacement, condition] of rules) {
    if (endsWith(w, suffix)) {
      const stem = cut(w, suffix)
      return condition === undefined || condition(stem) ? [...stem, ...chars(replacement)] : w
    }
  }
  return w
}

const step1a = (w: Word): Word => {
  if (w.length === 4 && endsWith(w, "ies")) return [...cut(w, "ies"), "i", "e"]
  return firstRule(w, [
    ["sses", "ss"],
    ["ies", "i"],
    ["ss", "ss"],
    ["s", ""]
  ])
}

const step1b = (w: Word): Word => {
  if (endsWith(w, "ied")) return [...cut(w, "ied"), ...(w.length === 4 ? ["i", "e"] : ["i"])]
  if (endsWith(w, "eed")) {
    const stem = cut(w, "eed")
    return positive(stem) ? [...stem, "e", "e"] : w
  }
  const suffix = ["ed", "ing"].find((s) => endsWith(w, s))
  if (suffix === undefined || !hasVowel(cut(w, suffix))) return w
  const stem = cut(w, suffix)
  for (const [end, replacement] of [
    ["at", "ate"],
    ["bl", "ble"],
    ["iz", "ize"]
  ] as const) {
    if (endsWith(stem, end)) return [...cut(stem, end), ...chars(replacement)]
  }
  if (endsDouble(stem)) return ["l", "s", "z"].includes(stem[stem.length - 1]!) ? stem : stem.slice(0, -1)
  return measure(stem) === 1 && endsCvc(stem) ? [...stem, "e"] : stem
}

const step1c = (w: Word): Word =>
  firstRule(w, [["y", "i", (stem) => stem.length > 1 && isConsonant(stem, stem.length - 1)]])

const step2 = (w: Word): Word => {
  if (endsWith(w, "alli") && positive(cut(w, "alli"))) return step2([...cut(w, "alli"), "a", "l"])
  return firstRule(w, [
    ["ational", "ate", positive],
    ["tional", "tion", positive],
    ["enci", "ence", positive],
    ["anci", "ance", positive],
    ["izer", "ize", positive],
    ["bli", "ble", positive],
    ["alli", "al", positive],
    ["entli", "ent", positive],
    ["eli", "e", positive],
    ["ousli", "ous", positive],
    ["ization", "ize", positive],
    ["ation", "ate", positive],
    ["ator", "ate", positive],
    ["alism", "al", positive],
    ["iveness", "ive", positive],
    ["fulness", "ful", positive],
    ["ousness", "ous", positive],
    ["aliti", "al", positive],
    ["iviti", "ive", positive],
    ["biliti", "ble", positive],
    ["fulli", "ful", positive],
    // The condition is on the word without "ogi", i.e. the stem with its "l".
    ["logi", "log", () => positive(w.slice(0, -3))]
  ])
}

const step3 = (w: Word): Word =>
  firstRule(w, [
    ["icate", "ic", positive],
    ["ative", "", positive],
    ["alize", "al", positive],
    ["iciti", "ic", positive],
    ["ical", "ic", positive],
    ["ful", "", positive],
    ["ness", "", positive]
  ])

const above1 = (stem: Word): boolean => measure(stem) > 1

const step4 = (w: Word): Word =>
  firstRule(w, [
    ...["al", "ance", "ence", "er", "ic", "able", "ible", "ant", "ement", "ment", "ent"].map((s): Rule => [
      s,
      "",
      above1
    ]),
    ["ion", "", (stem) => above1(stem) && ["s", "t"].includes(stem[stem.length - 1]!)],
    ...["ou", "ism", "ate", "iti", "ous", "ive", "ize"].map((s): Rule => [s, "", above1])
  ])

const step5a = (w: Word): Word => {
  if (!endsWith(w, "e")) return w
  const stem = cut(w, "e")
  const m = measure(stem)
  return m > 1 || (m === 1 && !endsCvc(stem)) ? stem : w
}

const step5b = (w: Word): Word => (endsWith(w, "ll") && measure(w.slice(0, -1)) > 1 ? w.slice(0, -1) : w)

/** The stem of one word, lowercased, as `nltk.stem.PorterStemmer().stem(word)` gives it. */
export const stem = (word: string): string => {
  const lower = word.toLowerCase()
  const irregular = pool.get(lower)
  if (irregular !== undefined) return irregular
  if (chars(word).length <= 2) return lower
  return [step1a, step1b, step1c, step2, step3, step4, step5a, step5b]
    .reduce((w, step) => step(w), chars(lower))
    .join("")
}
