/**
 * Benchmark timestamps as the domain's `YYYY-MM-DDTHH:MM` (local time: no benchmark gives a zone),
 * so dates compare as strings and parse with `Date.UTC`.
 *
 * @example
 * longMemEvalDate("2023/05/20 (Sat) 02:21") // "2023-05-20T02:21"
 * locomoDate("1:56 pm on 8 May, 2023")      // "2023-05-08T13:56"
 */

const pad = (n: number) => String(n).padStart(2, "0")

const isoOf = (year: number, month: number, day: number, hour: number, minute: number): string | undefined => {
  if (month < 1 || month > 12 || day < 1 || hour > 23 || minute > 59) return undefined
  const probe = new Date(Date.UTC(year, month - 1, day))
  if (probe.getUTCMonth() !== month - 1) return undefined
  return `${String(year).padStart(4, "0")}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}`
}

const longMemEvalPattern = /^(\d{4})\/(\d{1,2})\/(\d{1,2})(?:\s*\([A-Za-z]{3}\))?\s+(\d{1,2}):(\d{2})$/

/** LongMemEval's `2023/05/20 (Sat) 02:21` (the weekday is optional and not checked). */
export const longMemEvalDate = (text: string): string | undefined => {
  const m = longMemEvalPattern.exec(text.trim())
  return m === null ? undefined : isoOf(Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5]))
}

const months = [
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

const locomoPattern = /^(\d{1,2}):(\d{2})\s*([ap])\.?m\.?\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i

/** LoCoMo's `1:56 pm on 8 May, 2023` (month names in full or their first three letters). */
export const locomoDate = (text: string): string | undefined => {
  const m = locomoPattern.exec(text.trim())
  if (m === null) return undefined
  const name = m[5]!.toLowerCase()
  const month = months.findIndex((full) => full === name || (name.length === 3 && full.startsWith(name))) + 1
  const hour12 = Number(m[1])
  if (month === 0 || hour12 < 1 || hour12 > 12) return undefined
  const hour = (hour12 % 12) + (m[3]!.toLowerCase() === "p" ? 12 : 0)
  return isoOf(Number(m[6]), month, Number(m[4]), hour, Number(m[2]))
}
