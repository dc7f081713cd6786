/**
 * `time-window`: time-aware pruning of another retriever's ranking, from the request's date and
 * the sessions' dates (LongMemEval's dated histories). Sessions dated after the request are
 * dropped (nothing said later can inform it); when the request names a time ("last week", "two
 * months ago", "in March", "yesterday"), only sessions dated inside that range, widened by
 * `margin` days on each side, are kept. Undated sessions are kept, and so is every session of an
 * undated request. The base ranking's order and scores stay; a turn ranking is pruned alike.
 *
 * LongMemEval's own version asks a model for the range and matches it against event dates a model
 * extracted from each session; this one reads the range with the rules of {@link range} and uses
 * the session's date, so it needs no model (docs/retrievers.md says what it reads).
 *
 * @example
 * // config: retriever: { use: time-window, base: { use: bm25, granularity: turn }, margin: 2, k: 5 }
 * import { TimeWindow } from "@cupid-lab/retrievers"
 * TimeWindow.range("What did I cook last week?", "2023-04-12T09:00") // { start: "2023-04-03", end: "2023-04-09", ... }
 */
import { Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import { buildPart, PartSpec } from "./Hybrid.js"

/** Days since 1970-01-01 of a `YYYY-MM-DD...` date. */
export const dayOf = (iso: string): number =>
  Date.UTC(Number(iso.slice(0, 4)), Number(iso.slice(5, 7)) - 1, Number(iso.slice(8, 10))) / 86_400_000

/** `YYYY-MM-DD` of a day number. */
export const isoDay = (day: number): string => new Date(day * 86_400_000).toISOString().slice(0, 10)

const dayFrom = (year: number, month0: number, date: number): number => Date.UTC(year, month0, date) / 86_400_000
/** 0 = Monday ... 6 = Sunday (day 0, 1970-01-01, was a Thursday). */
const weekdayOf = (day: number): number => (((day + 3) % 7) + 7) % 7

const monthNames = [
  "january",
  "february",
  "march",
  "april",
  "may",
  "june",
  "july",
  "august",
  "september",
  "october",
  "november",
  "december"
]
const weekdayNames = ["monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"]
const numberWords: Readonly<Record<string, number>> = {
  a: 1,
  an: 1,
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
  "a couple of": 2,
  "a few": 3,
  couple: 2,
  few: 3
}

export interface Range {
  /** First and last day, `YYYY-MM-DD`, both included. */
  readonly start: string
  readonly end: string
  /** The words the range was read from. */
  readonly expression: string
}

interface Days {
  readonly from: number
  readonly to: number
}

const monthSpan = (year: number, month0: number): Days => ({
  from: dayFrom(year, month0, 1),
  to: dayFrom(year, month0 + 1, 0)
})

const unitSpan = (anchor: number, unit: string, n: number): Days => {
  const d = new Date(anchor * 86_400_000)
  const [y, m, dd] = [d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()]
  switch (unit) {
    case "day":
      return { from: anchor - n, to: anchor - n }
    case "week":
      return { from: anchor - 7 * n - 3, to: anchor - 7 * n + 3 }
    case "month": {
      const center = dayFrom(y, m - n, dd)
      return { from: center - 15, to: center + 15 }
    }
    default: {
      const center = dayFrom(y - n, m, dd)
      return { from: center - 182, to: center + 182 }
    }
  }
}

const count = (word: string): number | undefined =>
  /^\d+$/.test(word) ? Number(word) : numberWords[word.toLowerCase()]

type Rule = { readonly pattern: RegExp; readonly days: (m: RegExpExecArray, today: number) => Days | undefined }

const numberPattern = "(\\d+|a couple of|a few|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve)"

/** Each rule reads one kind of time expression; `today` is the request's day. */
const rules: ReadonlyArray<Rule> = [
  { pattern: /\byesterday\b/gi, days: (_, t) => ({ from: t - 1, to: t - 1 }) },
  { pattern: /\b(today|this morning|this afternoon|tonight)\b/gi, days: (_, t) => ({ from: t, to: t }) },
  {
    pattern: /\b(last|this|past|previous) (week|weekend|month|year)\b/gi,
    days: (m, t) => {
      const which = m[1]!.toLowerCase()
      const unit = m[2]!.toLowerCase()
      const date = new Date(t * 86_400_000)
      const [y, mo] = [date.getUTCFullYear(), date.getUTCMonth()]
      const monday = t - weekdayOf(t)
      const current = which === "this"
      if (unit === "week")
        return current
          ? { from: monday, to: t }
          : which === "past"
            ? { from: t - 7, to: t }
            : { from: monday - 7, to: monday - 1 }
      if (unit === "weekend") {
        // The latest Saturday-Sunday that ended before today (this weekend: the one of today's week).
        const sunday = current ? monday + 6 : weekdayOf(t) === 6 ? t - 7 : monday - 1
        return { from: sunday - 1, to: sunday }
      }
      if (unit === "month")
        return current
          ? { from: dayFrom(y, mo, 1), to: t }
          : which === "past"
            ? { from: t - 30, to: t }
            : monthSpan(y, mo - 1)
      return current
        ? { from: dayFrom(y, 0, 1), to: t }
        : which === "past"
          ? { from: t - 365, to: t }
          : { from: dayFrom(y - 1, 0, 1), to: dayFrom(y - 1, 11, 31) }
    }
  },
  {
    pattern: new RegExp(`\\b(?:in |over |during )?the (?:past|last) ${numberPattern} (day|week|month|year)s?\\b`, "gi"),
    days: (m, t) => {
      const n = count(m[1]!)
      if (n === undefined) return undefined
      const span = unitSpan(t, m[2]!.toLowerCase(), n)
      return { from: Math.min(span.from, t), to: t }
    }
  },
  {
    pattern: new RegExp(`\\b${numberPattern} (day|week|month|year)s? ago\\b`, "gi"),
    days: (m, t) => {
      const n = count(m[1]!)
      return n === undefined ? undefined : unitSpan(t, m[2]!.toLowerCase(), n)
    }
  },
  {
    pattern: /\blast (monday|tuesday|wednesday|thursday|friday|saturday|sunday)\b/gi,
    days: (m, t) => {
      const back = (weekdayOf(t) - weekdayNames.indexOf(m[1]!.toLowerCase()) + 7) % 7 || 7
      return { from: t - back, to: t - back }
    }
  },
  {
    // Month names, capitalized; "May" only after in/during/since/of/early/mid/late or before a number.
    pattern:
      /\b(?:(in|during|since|of|early|mid|late|by) )?(January|February|March|April|May|June|July|August|September|October|November|December)(?: (\d{1,2})(?:st|nd|rd|th)?)?(?:,? (\d{4}))?\b/g,
    days: (m, t) => {
      if (m[2] === "May" && m[1] === undefined && m[3] === undefined && m[4] === undefined) return undefined
      const month0 = monthNames.indexOf(m[2]!.toLowerCase())
      const today = new Date(t * 86_400_000)
      const year =
        m[4] !== undefined
          ? Number(m[4])
          : month0 > today.getUTCMonth()
            ? today.getUTCFullYear() - 1
            : today.getUTCFullYear()
      if (m[3] !== undefined) {
        const day = dayFrom(year, month0, Number(m[3]))
        return { from: day, to: day }
      }
      return monthSpan(year, month0)
    }
  }
]

/**
 * The range of days a request refers to, read with fixed rules from its words and its date; the
 * union when it names several; undefined when it names none. "since <time>" runs to the request's
 * day.
 */
export const range = (request: string, date: string): Range | undefined => {
  const today = dayOf(date)
  let from = Infinity
  let to = -Infinity
  const expressions: Array<string> = []
  for (const rule of rules) {
    for (const m of request.matchAll(rule.pattern)) {
      const days = rule.days(m as RegExpExecArray, today)
      // A time wholly after the request ("this weekend", said on a Monday) says nothing about the past.
      if (days === undefined || days.from > today) continue
      const since = /\bsince\s*$/i.test(request.slice(0, m.index)) || /^since\b/i.test(m[0])
      from = Math.min(from, days.from)
      to = Math.max(to, since ? today : days.to)
      expressions.push(m[0])
    }
  }
  return expressions.length === 0
    ? undefined
    : { start: isoDay(from), end: isoDay(Math.min(to, today)), expression: expressions.join("; ") }
}

export const options = Schema.Struct({
  /** The retriever whose ranking is pruned. */
  base: Schema.optionalWith(PartSpec, { default: () => ({ use: "bm25" }) }),
  /** Days added on each side of the range the request names (LongMemEval widens by 2). */
  margin: Schema.optionalWith(Schema.Int.pipe(Schema.greaterThanOrEqualTo(0)), { default: () => 2 })
})
export type Options = typeof options.Type

/** Which sessions of a query a window keeps: dated after the request, or outside the request's range and margin, are out. */
export const kept = (
  query: {
    readonly request: string
    readonly date?: string
    readonly sessions: ReadonlyArray<{ readonly id: string; readonly date?: string }>
  },
  margin: number
): ReadonlySet<string> => {
  if (query.date === undefined) return new Set(query.sessions.map((s) => s.id))
  const window = range(query.request, query.date)
  const from = window === undefined ? -Infinity : dayOf(window.start) - margin
  const to = window === undefined ? Infinity : dayOf(window.end) + margin
  return new Set(
    query.sessions
      .filter((s) => {
        if (s.date === undefined) return true
        if (s.date > query.date!) return false
        const day = dayOf(s.date)
        return day >= from && day <= to
      })
      .map((s) => s.id)
  )
}

export const plugin = Plugin.retriever({
  name: "time-window",
  description:
    "Prune another retriever's ranking to the sessions dated within the time the request names (and never after it).",
  options,
  defaultSelect: { top: 2 },
  make: (o: Options) =>
    Effect.gen(function* () {
      const base = yield* buildPart("time-window", o.base)
      return {
        needsSummaries: base.needsSummaries,
        retrieve: (input: Retriever.RetrievalInput) =>
          Effect.map(base.retrieve(input), (r): Retriever.Retrieval => {
            const keep = kept(input.query, o.margin)
            const turns = r.turns?.filter((t) => keep.has(t.sessionId))
            return {
              ranking: r.ranking.filter((x) => keep.has(x.sessionId)),
              selected: r.selected.filter((id) => keep.has(id)),
              ...(turns === undefined ? {} : { turns })
            }
          })
      } satisfies Retriever.Service
    })
})
