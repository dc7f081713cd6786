import * as AnswerJson from "../../AnswerJson.js"
// Reads a session summary written by a model: a context section and a preferences section, each a
// list. Tolerates markdown headings, bold labels, numbering instead of bullets, labels with the
// first item on the same line, prose lines instead of bullets, a JSON object, and a code fence.
import { stripEmphasis, stripFence } from "./text.js"

export interface ParsedSummary {
  readonly context: ReadonlyArray<string>
  readonly preferences: ReadonlyArray<string>
}

type Section = "context" | "preferences"

const contextLabel =
  /^(?:session\s+)?(?:context(?:ual)?(?:\s+(?:factors?|bullets|summary|information|details))?|situation|background|task(?:\s+context)?)$/i
const preferenceLabel =
  /^(?:(?:the\s+)?(?:user(?:'s)?|contextual|stated|inferred|revealed|key|observed)\s+)*(?:preferences?|requirements?|preference\s+bullets)(?:\s+(?:expressed|revealed|stated))?$/i

const classify = (label: string): Section | undefined => {
  const l = label
    .replace(/^\d+[.)]\s*/, "")
    .replace(/[.:]\s*$/, "")
    .trim()
  return contextLabel.test(l) ? "context" : preferenceLabel.test(l) ? "preferences" : undefined
}

const marker = /^(?:[-*+\u2022\u2013\u2014]|\d{1,2}[.)]|\(\d{1,2}\))\s+/
const emptyItem = /^(?:none|n\/a|na|nothing|none stated|no preferences?(?: (?:stated|expressed|given))?|-)\.?$/i

const cleanItem = (text: string): string =>
  stripEmphasis(text)
    .replace(/^["'\u201C]|["'\u201D]$/g, "")
    .trim()

const fromJson = (text: string): ParsedSummary | undefined => {
  const value = AnswerJson.wholeObject(text)
  if (value === undefined) return undefined
  const out: Record<Section, Array<string>> = { context: [], preferences: [] }
  for (const [k, v] of Object.entries(value)) {
    const section = classify(k.replace(/_/g, " "))
    if (section === undefined) continue
    const items = Array.isArray(v) ? v : [v]
    for (const item of items) if (typeof item === "string" && cleanItem(item) !== "") out[section].push(cleanItem(item))
  }
  return out
}

/** The lists of a summary; both empty when nothing under a recognized heading was found. */
export const parseSummary = (answer: string): ParsedSummary => {
  const text = stripFence(answer)
  const json = fromJson(text)
  if (json !== undefined) return json

  const out: Record<Section, Array<string>> = { context: [], preferences: [] }
  let section: Section | undefined
  let bulleted = false
  let afterBlank = false
  for (const raw of text.split(/\r?\n/)) {
    if (raw.trim() === "") {
      afterBlank = true
      continue
    }
    const indented = /^\s{2,}/.test(raw)
    const line = raw.trim().replace(/^>\s*/, "")
    const markerMatch = marker.exec(line)
    const rest = markerMatch ? line.slice(markerMatch[0].length) : line
    const plain = stripEmphasis(rest.replace(/^#+\s*/, "")).trim()

    const labelled = /^([^:]{1,60}?)\s*:\s*(.*)$/.exec(plain)
    const heading =
      labelled && classify(labelled[1]!) !== undefined
        ? { section: classify(labelled[1]!)!, inline: labelled[2]! }
        : classify(plain) !== undefined
          ? { section: classify(plain)!, inline: "" }
          : undefined
    if (heading !== undefined) {
      section = heading.section
      bulleted = false
      afterBlank = false
      const item = cleanItem(heading.inline)
      if (item !== "" && !emptyItem.test(item)) out[section].push(item)
      continue
    }
    if (section === undefined) continue

    const items = out[section]
    if (markerMatch) {
      bulleted = true
      const item = cleanItem(rest)
      if (item !== "" && !emptyItem.test(item)) items.push(item)
    } else if (indented && !afterBlank && items.length > 0) {
      items[items.length - 1] = `${items[items.length - 1]} ${cleanItem(line)}`
    } else if (bulleted && afterBlank) {
      // Prose after a finished list ("Let me know if ...") is not part of the summary.
      section = undefined
    } else {
      const item = cleanItem(line)
      if (item !== "" && !emptyItem.test(item)) items.push(item)
    }
    afterBlank = false
  }
  return out
}

/** The answer format the summarizer prompt asks for, and its dry-run example. */
export const exampleSummary = [
  "Context:",
  "- The user is preparing a project update for their manager, Dana.",
  "Preferences:",
  "- Lead with a one-line status before any detail.",
  "- Keep the update under 150 words."
].join("\n")
