/**
 * Locale-free, fixed-precision number and text formatting for the reports.
 *
 * @example
 * Format.number(0.12345) // "0.123"
 * Format.html(`<b title="x">`) // "&lt;b title=&quot;x&quot;&gt;"
 */
import { Exports, type ResultLine } from "@cupid-lab/results"

const noNegativeZero = (s: string): string => (/^-0(\.0+)?$/.test(s) ? s.slice(1) : s)

/** 3 decimals below 10, 1 below 1000, none above; `–` for a missing value. */
export const number = (x: number | null | undefined): string => {
  if (x === null || x === undefined || !Number.isFinite(x)) return "–"
  const a = Math.abs(x)
  return noNegativeZero(a >= 1000 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(3))
}

/** Like {@link number}, with an explicit `+` for positive values. */
export const signed = (x: number | null | undefined): string => {
  const s = number(x)
  return s !== "–" && !s.startsWith("-") && s !== number(0) ? `+${s}` : s
}

/** Whole numbers with thousands separators (`12,345`). */
export const integer = (x: number): string => {
  if (!Number.isFinite(x)) return "–"
  const s = Math.round(Math.abs(x)).toString()
  const grouped = s.replace(/\B(?=(\d{3})+(?!\d))/g, ",")
  return x < 0 ? `-${grouped}` : grouped
}

/** p-values: 3 decimals, or scientific below 0.001. */
export const p = (x: number): string => (!Number.isFinite(x) ? "–" : x >= 0.001 ? x.toFixed(3) : x.toExponential(1))

/** `[lo, hi]` (each bound as `show` writes it); `[n/a]` when there is no interval (one instance, or the instances of one persona). */
export const interval = (lo: number | null, hi: number | null, show = number): string =>
  !Number.isFinite(lo ?? NaN) && !Number.isFinite(hi ?? NaN) ? "[n/a]" : `[${show(lo)}, ${show(hi)}]`

/** `[+lo, +hi]` of a difference; `[n/a]` when there is no interval. */
export const signedInterval = (lo: number | null, hi: number | null): string => interval(lo, hi, signed)

/** `value [lo, hi]`. */
export const withCi = (e: Pick<ResultLine.MetricEstimate, "mean" | "ci95">): string =>
  `${number(e.mean)} ${interval(e.ci95[0], e.ci95[1])}`

/** `value [lo, hi] n=N`, or `– n=N` when there is no value. */
export const estimate = (e: ResultLine.MetricEstimate | undefined): string =>
  e === undefined || e.n === 0 || e.mean === null ? `– n=${e?.n ?? 0}` : `${withCi(e)} n=${e.n}`

/** Text for a Markdown table cell: pipes escaped, newlines folded, HTML, code spans and link brackets neutralized. */
export const md = (text: string): string =>
  Exports.visibleControls(text.replace(/\\/g, "\\\\"))
    .replace(/\|/g, "\\|")
    .replace(/[\r\n]+/g, " ")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/`/g, "'")
    .replace(/[[\]]/g, (c) => `\\${c}`)

/** Text for HTML content and attribute values (quotes included), bidi controls shown as escapes. */
export const html = (text: string): string =>
  Exports.visibleControls(text)
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;")

/** Shorten to `max` characters on a word boundary where possible, with an ellipsis. */
export const clip = (text: string, max: number): string => {
  const t = text.replace(/\s+/g, " ").trim()
  if (t.length <= max) return t
  const cut = t.slice(0, max - 1)
  const space = cut.lastIndexOf(" ")
  return `${space > max * 0.6 ? cut.slice(0, space) : cut}…`
}
