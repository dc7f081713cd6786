import * as AnswerJson from "../../AnswerJson.js"
// Reads an inference answer: a short analysis, then the preference after a label. Tolerates
// markdown (headings, bold labels, blockquotes, bullets), label variants ("Inferred preference",
// "Final preference", "Final answer"), the sentence on the line after a label-only heading, quotes,
// trailing commentary, word-count notes, <think> blocks, a JSON object and a code fence.
import { strip } from "../../Python.js"
import {
  firstSentence,
  normalizeSpace,
  prefixExcerpt,
  sentences,
  stripEmphasis,
  stripFence,
  unquote,
  wordCount
} from "./text.js"

export interface ParsedPreference {
  readonly preference: string
  readonly analysis: string
}

export type ParseResult =
  { readonly ok: true; readonly value: ParsedPreference } | { readonly ok: false; readonly reason: string }

const preferenceLabel =
  /^(?:(?:final|inferred|user(?:'s)?|contextual|stated|current|the)\s+)*preferences?(?:\s+statement)?\s*(?:\([^)]*\))?\s*(?::|\s[-\u2013\u2014]|$)\s*(.*)$/i
const answerLabel = /^(?:final\s+)?answer\s*(?::|\s[-\u2013\u2014]|$)\s*(.*)$/i
const analysisLabel = /^(?:(?:short|brief)\s+)?(?:analysis|reasoning)\s*(?::|\s[-\u2013\u2014]|$)\s*(.*)$/i

/** A line without its markdown: heading hashes, blockquote, list marker, emphasis. */
const plainLine = (line: string): string =>
  stripEmphasis(
    line
      .trim()
      .replace(/^>\s*/, "")
      .replace(/^#+\s*/, "")
      .replace(/^(?:[-*+\u2022]|\d{1,2}[.)])\s+/, "")
  ).trim()

const wordCountNote = /\s*\((?:about\s+|~)?\d+\s+words?\)\s*\.?$/i

/** One sentence from the text after a label: the quoted part if it opens with a quote, else the first sentence. */
const cleanPreference = (raw: string): string => {
  let t = normalizeSpace(stripEmphasis(raw)).replace(wordCountNote, "")
  const quoted = /^["\u201C'](.+?)["\u201D'](?=\s|$|[.,;:])/.exec(t.replace(/[\u2018\u2019]/g, "'"))
  if (quoted !== null && wordCount(quoted[1]!) >= 3) t = quoted[1]!
  t = unquote(firstSentence(unquote(t))).replace(wordCountNote, "")
  return t.trim()
}

const fromJson = (text: string): ParseResult | undefined => {
  const value = AnswerJson.wholeObject(text)
  if (value === undefined) return undefined
  const entries = Object.entries(value)
  const pref = entries.find(([k, v]) => /preference/i.test(k) && typeof v === "string")
  if (pref === undefined) return { ok: false, reason: 'the JSON answer has no string field named like "preference"' }
  const analysis = entries.find(([k, v]) => /analysis|reasoning/i.test(k) && typeof v === "string")
  const preference = cleanPreference(pref[1] as string)
  if (preference === "") return { ok: false, reason: "the JSON answer's preference is empty" }
  return {
    ok: true,
    value: { preference, analysis: cappedAnalysis((analysis?.[1] as string | undefined) ?? "", normalizeSpace) }
  }
}

const lastLabelled = (lines: ReadonlyArray<string>, label: RegExp): { index: number; inline: string } | undefined => {
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = label.exec(plainLine(lines[i]!))
    if (m !== null) return { index: i, inline: m[1]!.trim() }
  }
  return undefined
}

const analysisBefore = (lines: ReadonlyArray<string>): string => {
  const kept: Array<string> = []
  for (const line of lines) {
    const plain = plainLine(line)
    const m = analysisLabel.exec(plain)
    const text = m !== null ? m[1]!.trim() : plain
    if (text !== "" && !/^[-*_=]{3,}$/.test(text)) kept.push(text)
  }
  return kept.join("\n")
}

const excerpt = (text: string): string => prefixExcerpt(text, 120)

/**
 * The most of an answer's analysis that is kept (in results and transcripts): it is read from the
 * first this many characters of the text before the preference, and a longer text gets the note
 * "… [cut: N characters in all]" with that text's length (a model that loops can write MB of it).
 */
export const analysisMaxChars = 65_536

/** `read(text)`, reading at most the first {@link analysisMaxChars} characters of `text`. */
const cappedAnalysis = (text: string, read: (text: string) => string): string =>
  text.length <= analysisMaxChars
    ? read(text)
    : `${read(text.slice(0, analysisMaxChars))} \u2026 [cut: ${text.length} characters in all]`

/**
 * A bare answer longer than this is not one sentence of at most 60 words, whatever its markup: the
 * sentence check is skipped, so that an answer of MB (a model that loops) is not split into words.
 */
const bareAnswerMaxChars = 4_000

export const expected =
  'expected a short analysis followed by a line "Preference: <one sentence of at most 30 words>", or the sentence on the line after a "### Most Likely Preference" heading'

/** The heading the authors' inference prompt asks for. */
export const referenceHeading = "### Most Likely Preference"

/**
 * The authors' format: the first line after the first `### Most Likely Preference` heading (as
 * their `process_output` reads it, possibly empty); the analysis is the text under `### Analysis`
 * before it. Undefined when the answer has no such heading.
 */
const mostLikelyPreference = (answer: string): ParsedPreference | undefined => {
  const at = answer.indexOf(referenceHeading)
  if (at < 0) return undefined
  const preference = strip(strip(answer.slice(at + referenceHeading.length)).split("\n")[0]!)
  const before = answer.slice(0, at)
  const analysisAt = before.indexOf("### Analysis")
  const analysis = cappedAnalysis(
    analysisAt < 0 ? before : before.slice(analysisAt + "### Analysis".length),
    normalizeSpace
  )
  return { preference, analysis }
}

/**
 * An answer read only as the authors' code reads it (`accounting: reference`): the line after the
 * first heading, even an empty one (their code decomposes and scores it); without the heading
 * their code raises and drops the instance, so the answer cannot be read.
 */
export const parseReferencePreference = (answer: string): ParseResult => {
  const value = mostLikelyPreference(answer)
  return value !== undefined
    ? { ok: true, value }
    : {
        ok: false,
        reason: `no "${referenceHeading}" heading: the authors' code cannot read this answer and drops the instance (it is not scored, and no response is generated or judged)`
      }
}

/**
 * The preference (one sentence) and the analysis before it, or why the answer cannot be read.
 * `<think>` blocks are the caller's to remove (or keep).
 */
export const parsePreference = (answer: string): ParseResult => {
  const reference = mostLikelyPreference(answer)
  if (reference !== undefined) {
    return reference.preference === ""
      ? { ok: false, reason: `the line after "${referenceHeading}" is empty` }
      : { ok: true, value: reference }
  }
  const text = stripFence(answer).trim()
  if (text === "") return { ok: false, reason: `empty answer; ${expected}` }
  const json = fromJson(text)
  if (json !== undefined) return json

  const lines = text.split(/\r?\n/)
  const label = lastLabelled(lines, preferenceLabel) ?? lastLabelled(lines, answerLabel)
  if (label === undefined) {
    // A bare one-sentence answer is the preference with the analysis left out.
    if (
      text.length <= bareAnswerMaxChars &&
      !text.includes("\n\n") &&
      sentences(text).length === 1 &&
      wordCount(text) <= 60
    ) {
      const preference = cleanPreference(plainLine(text))
      if (preference !== "") return { ok: true, value: { preference, analysis: "" } }
    }
    return { ok: false, reason: `no preference label found; ${expected}; got: "${excerpt(text)}"` }
  }

  let body = label.inline
  if (body === "") {
    const following: Array<string> = []
    for (const line of lines.slice(label.index + 1)) {
      const plain = plainLine(line)
      if (plain === "") {
        if (following.length > 0) break
        continue
      }
      following.push(plain)
    }
    body = following.join(" ")
  }
  const preference = cleanPreference(body)
  if (preference === "") return { ok: false, reason: `the preference after the label is empty; ${expected}` }
  const analysis = cappedAnalysis(lines.slice(0, label.index).join("\n"), (t) => analysisBefore(t.split("\n")))
  return { ok: true, value: { preference, analysis } }
}

/** The answer format the inference prompt asks for, and its dry-run example. */
export const examplePreference = [
  "Analysis: In the earlier sessions about this kind of task the user asked twice for numbered steps and",
  "objected when checks were missing.",
  "Preference: Instructions should break the procedure into short numbered steps with a quick check after each section."
].join("\n")
