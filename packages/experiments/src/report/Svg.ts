/**
 * Inline SVG charts for report.html, rendered as strings at report time: grouped bars with
 * interval whiskers, lines over bins, and scatter plots (with an optional highlighted front).
 * Coordinates are rounded to one decimal and ids derive from the caller's key, so the output is
 * deterministic; every text is escaped.
 *
 * @example
 * import * as Svg from "@cupid-lab/experiments/report/Svg"
 * Svg.bars({ title: "F1", yLabel: "F1", groups: ["bm25"], series: ["all"], value: () => ({ value: 0.4, lo: 0.3, hi: 0.5, n: 18 }) })
 */
import * as Format from "./Format.js"

export const palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#7f7f7f"]
const dashes = ["", "6 3", "2 3", "8 3 2 3"]

export const color = (i: number): string => palette[i % palette.length]!
const dash = (i: number): string => dashes[Math.floor(i / palette.length) % dashes.length]!

const f = (x: number): string => {
  const s = x.toFixed(1)
  return s === "-0.0" ? "0.0" : s
}
const e = Format.html

/** Tick values covering [lo, hi] with a 1-2-5 step, about `count` of them. */
export const ticks = (lo: number, hi: number, count = 5): Array<number> => {
  if (!(hi > lo)) return [lo]
  const raw = (hi - lo) / count
  const mag = 10 ** Math.floor(Math.log10(raw))
  const step = [1, 2, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? 10 * mag
  const out: Array<number> = []
  for (let v = Math.ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)))
  return out
}

const tickLabel = (v: number): string => {
  const a = Math.abs(v)
  if (a === 0) return "0"
  if (a >= 1000) return Format.integer(v)
  return Number(v.toPrecision(3)).toString()
}

/** A [lo, hi] domain padded to nice ticks; `zero` pins the lower end at 0 when all values are positive. */
export const domain = (values: ReadonlyArray<number>, zero: boolean): [number, number] => {
  const fin = values.filter(Number.isFinite)
  if (fin.length === 0) return [0, 1]
  let lo = Math.min(...fin), hi = Math.max(...fin)
  if (zero) lo = Math.min(0, lo)
  if (hi === lo) hi = lo + (lo === 0 ? 1 : Math.abs(lo) * 0.1)
  const t = ticks(lo, hi)
  const step = t.length > 1 ? t[1]! - t[0]! : hi - lo
  return [Math.min(lo, t[0]!), t[t.length - 1]! < hi ? t[t.length - 1]! + step : t[t.length - 1]!]
}

interface Frame {
  readonly width: number
  readonly height: number
  readonly left: number
  readonly right: number
  readonly top: number
  readonly bottom: number
}

const scale = (d0: number, d1: number, r0: number, r1: number) => (v: number) => r0 + ((v - d0) / (d1 - d0 || 1)) * (r1 - r0)

const open = (fr: Frame, title: string, kind: string): string =>
  `<svg xmlns="http://www.w3.org/2000/svg" class="chart chart-${kind}" viewBox="0 0 ${fr.width} ${fr.height}" width="${fr.width}" height="${fr.height}" role="img"><title>${e(title)}</title>`

const yAxis = (fr: Frame, y: (v: number) => number, range: [number, number], label: string): string => {
  const parts = ticks(range[0], range[1]).map((v) =>
    `<line class="grid" x1="${fr.left}" x2="${fr.width - fr.right}" y1="${f(y(v))}" y2="${f(y(v))}"/>` +
    `<text class="tick" x="${fr.left - 6}" y="${f(y(v) + 4)}" text-anchor="end">${e(tickLabel(v))}</text>`
  )
  const mid = (fr.top + fr.height - fr.bottom) / 2
  parts.push(`<text class="axis-label" transform="translate(14 ${f(mid)}) rotate(-90)" text-anchor="middle">${e(label)}</text>`)
  parts.push(`<line class="axis" x1="${fr.left}" x2="${fr.left}" y1="${fr.top}" y2="${fr.height - fr.bottom}"/>`)
  return parts.join("")
}

const xAxisNumeric = (fr: Frame, x: (v: number) => number, range: [number, number], label: string): string => {
  const base = fr.height - fr.bottom
  const parts = ticks(range[0], range[1]).map((v) =>
    `<line class="grid" x1="${f(x(v))}" x2="${f(x(v))}" y1="${fr.top}" y2="${base}"/>` +
    `<text class="tick" x="${f(x(v))}" y="${base + 16}" text-anchor="middle">${e(tickLabel(v))}</text>`
  )
  parts.push(`<line class="axis" x1="${fr.left}" x2="${fr.width - fr.right}" y1="${base}" y2="${base}"/>`)
  parts.push(`<text class="axis-label" x="${f((fr.left + fr.width - fr.right) / 2)}" y="${base + 36}" text-anchor="middle">${e(label)}</text>`)
  return parts.join("")
}

/** Legend entries in rows under the plot, starting at `y`; returns the markup and its height. */
const legend = (entries: ReadonlyArray<{ readonly label: string; readonly swatch: string }>, x0: number, y: number, width: number): { svg: string; height: number } => {
  let x = x0, row = 0
  const parts: Array<string> = []
  for (const en of entries) {
    const label = Format.clip(en.label, 40)
    const w = 26 + label.length * 6.4
    if (x + w > width && x > x0) {
      x = x0
      row++
    }
    const yy = y + row * 18
    parts.push(`<g class="legend-item" transform="translate(${f(x)} ${f(yy)})">${en.swatch}<text x="20" y="10">${e(label)}</text></g>`)
    x += w + 12
  }
  return { svg: `<g class="legend">${parts.join("")}</g>`, height: entries.length === 0 ? 0 : (row + 1) * 18 }
}

const rectSwatch = (c: string) => `<rect x="0" y="0" width="14" height="12" fill="${c}"/>`
const lineSwatch = (c: string, d: string) => `<line x1="0" x2="14" y1="6" y2="6" stroke="${c}" stroke-width="2.5"${d ? ` stroke-dasharray="${d}"` : ""}/>`

export interface BarValue {
  readonly value: number
  readonly lo: number
  readonly hi: number
  readonly n: number
}

export interface BarsInput {
  readonly title: string
  readonly yLabel: string
  /** One group per cell along the x axis. */
  readonly groups: ReadonlyArray<string>
  /** Bars inside a group (slices), one colour each. */
  readonly series: ReadonlyArray<string>
  readonly value: (group: number, series: number) => BarValue | undefined
}

/** Grouped bars with 95% CI whiskers; a bar's tooltip gives value, CI and N. */
export const bars = (input: BarsInput): string => {
  const bar = 12, gap = 22
  const groupWidth = input.series.length * bar + gap
  const labels = input.groups.map((g) => Format.clip(g, 32))
  // Group labels are rotated 45 degrees; the legend goes below the longest one.
  const labelDepth = Math.ceil(Math.max(0, ...labels.map((l) => l.length)) * 6.2 * Math.SQRT1_2) + 24
  const plotWidth = Math.max(520, input.groups.length * groupWidth)
  const firstLabel = Math.ceil((labels[0]?.length ?? 0) * 6.2 * Math.SQRT1_2)
  const fr0 = { left: Math.max(60, firstLabel - plotWidth / Math.max(1, input.groups.length) / 2 + 12), right: 16, top: 16, bottom: labelDepth + 12 }
  const width = fr0.left + plotWidth + fr0.right
  const lg = legend(input.series.map((s, i) => ({ label: s, swatch: rectSwatch(color(i)) })), fr0.left, 0, width - fr0.right)
  const fr: Frame = { ...fr0, width, height: 300 + fr0.bottom + lg.height, bottom: fr0.bottom + lg.height }
  const all: Array<number> = []
  input.groups.forEach((_, g) => input.series.forEach((_, s) => {
    const v = input.value(g, s)
    if (v !== undefined) all.push(v.value, v.lo, v.hi)
  }))
  const range = domain(all, true)
  const y = scale(range[0], range[1], fr.height - fr.bottom, fr.top)
  const step = plotWidth / Math.max(1, input.groups.length)
  const parts = [open(fr, input.title, "bars"), yAxis(fr, y, range, input.yLabel)]
  const base = fr.height - fr.bottom
  input.groups.forEach((name, g) => {
    const x0 = fr.left + g * step + (step - input.series.length * bar) / 2
    input.series.forEach((sname, s) => {
      const v = input.value(g, s)
      if (v === undefined || !Number.isFinite(v.value)) return
      const x = x0 + s * bar
      const top = y(Math.max(v.value, range[0]))
      const zero = y(Math.max(0, range[0]))
      const tip = `${name} · ${sname}: ${Format.number(v.value)} [${Format.number(v.lo)}, ${Format.number(v.hi)}] n=${v.n}`
      parts.push(`<rect class="bar" x="${f(x)}" y="${f(Math.min(top, zero))}" width="${bar - 2}" height="${f(Math.max(1, Math.abs(zero - top)))}" fill="${color(s)}"><title>${e(tip)}</title></rect>`)
      if (Number.isFinite(v.lo) && Number.isFinite(v.hi) && v.hi > v.lo) {
        const cx = x + (bar - 2) / 2
        parts.push(`<path class="whisker" d="M${f(cx)} ${f(y(v.lo))}V${f(y(v.hi))}M${f(cx - 3)} ${f(y(v.lo))}H${f(cx + 3)}M${f(cx - 3)} ${f(y(v.hi))}H${f(cx + 3)}"/>`)
      }
    })
    const cx = fr.left + g * step + step / 2
    parts.push(`<text class="group-label" transform="translate(${f(cx + 4)} ${base + 12}) rotate(-45)" text-anchor="end">${e(labels[g]!)}</text>`)
  })
  parts.push(`<line class="axis" x1="${fr.left}" x2="${width - fr.right}" y1="${base}" y2="${base}"/>`)
  parts.push(`<g transform="translate(0 ${base + labelDepth})">${lg.svg}</g>`)
  parts.push("</svg>")
  return parts.join("")
}

export interface LinesInput {
  readonly title: string
  readonly xLabel: string
  readonly yLabel: string
  /** Categories along x (bins). */
  readonly categories: ReadonlyArray<string>
  readonly series: ReadonlyArray<string>
  readonly value: (series: number, category: number) => { readonly value: number; readonly n: number; readonly lo?: number; readonly hi?: number } | undefined
}

/** One line per series over categorical bins, points carrying value and N in their tooltip. */
export const lines = (input: LinesInput): string => {
  const fr0 = { left: 60, right: 16, top: 16, bottom: 56 }
  const width = Math.max(640, fr0.left + input.categories.length * 120 + fr0.right)
  const lg = legend(input.series.map((s, i) => ({ label: s, swatch: lineSwatch(color(i), dash(i)) })), fr0.left, 0, width - fr0.right)
  const fr: Frame = { ...fr0, width, height: 280 + fr0.bottom + lg.height, bottom: fr0.bottom + lg.height }
  const all: Array<number> = []
  input.series.forEach((_, s) => input.categories.forEach((_, c) => {
    const v = input.value(s, c)
    if (v !== undefined && v.n > 0) {
      all.push(v.value)
      if (v.lo !== undefined && Number.isFinite(v.lo)) all.push(v.lo)
      if (v.hi !== undefined && Number.isFinite(v.hi)) all.push(v.hi)
    }
  }))
  const range = domain(all, true)
  const y = scale(range[0], range[1], fr.height - fr.bottom, fr.top)
  const step = (width - fr.left - fr.right) / Math.max(1, input.categories.length)
  const x = (c: number) => fr.left + step * (c + 0.5)
  const base = fr.height - fr.bottom
  const parts = [open(fr, input.title, "lines"), yAxis(fr, y, range, input.yLabel)]
  input.categories.forEach((c, i) => {
    parts.push(`<text class="tick" x="${f(x(i))}" y="${base + 16}" text-anchor="middle">${e(c)}</text>`)
  })
  parts.push(`<line class="axis" x1="${fr.left}" x2="${width - fr.right}" y1="${base}" y2="${base}"/>`)
  parts.push(`<text class="axis-label" x="${f((fr.left + width - fr.right) / 2)}" y="${base + 36}" text-anchor="middle">${e(input.xLabel)}</text>`)
  input.series.forEach((name, s) => {
    const pts = input.categories.flatMap((_, c) => {
      const v = input.value(s, c)
      return v !== undefined && v.n > 0 && Number.isFinite(v.value) ? [{ c, ...v }] : []
    })
    // Series are offset a little each, so overlapping points and CIs stay readable.
    const withCi = pts.some((p) => p.lo !== undefined)
    const nudge = withCi ? (s - (input.series.length - 1) / 2) * Math.min(6, step / (2 * Math.max(1, input.series.length))) : 0
    if (pts.length > 1) {
      const d = pts.map((p, k) => `${k === 0 ? "M" : "L"}${f(x(p.c) + nudge)} ${f(y(p.value))}`).join("")
      parts.push(`<path class="series" d="${d}" stroke="${color(s)}"${dash(s) ? ` stroke-dasharray="${dash(s)}"` : ""}/>`)
    }
    for (const p of pts) {
      const ci = p.lo !== undefined && p.hi !== undefined && Number.isFinite(p.lo) && Number.isFinite(p.hi)
      if (ci) parts.push(`<line class="ci" x1="${f(x(p.c) + nudge)}" x2="${f(x(p.c) + nudge)}" y1="${f(y(p.lo!))}" y2="${f(y(p.hi!))}" stroke="${color(s)}" stroke-width="1.5" opacity="0.7"/>`)
      const tip = `${name} · ${input.categories[p.c]}: ${Format.number(p.value)}${ci ? ` [${Format.number(p.lo)}, ${Format.number(p.hi)}]` : ""} n=${p.n}`
      parts.push(`<circle class="point" cx="${f(x(p.c) + nudge)}" cy="${f(y(p.value))}" r="4" fill="${color(s)}"><title>${e(tip)}</title></circle>`)
    }
  })
  parts.push(`<g transform="translate(0 ${base + 48})">${lg.svg}</g>`)
  parts.push("</svg>")
  return parts.join("")
}

export interface ScatterPoint {
  readonly label: string
  /** Short text next to the point (e.g. the cell's number); default the label. */
  readonly mark?: string
  readonly x: number
  readonly y: number
  /** Drawn hollow (e.g. oracle cells). */
  readonly hollow?: boolean
  /** Drawn larger and joined by the front line. */
  readonly front?: boolean
  readonly tip: string
}

export interface ScatterInput {
  readonly title: string
  readonly xLabel: string
  readonly yLabel: string
  readonly points: ReadonlyArray<ScatterPoint>
  /** Fixed domains (e.g. [0, 1] for precision and recall); default from the data. */
  readonly xDomain?: [number, number]
  readonly yDomain?: [number, number]
}

/** One labelled point per cell; points marked `front` are joined in x order. */
export const scatter = (input: ScatterInput): string => {
  const fr0 = { left: 60, right: 24, top: 16, bottom: 56 }
  const width = 640
  const lg = legend(input.points.map((p, i) => ({ label: p.label, swatch: `<circle cx="7" cy="6" r="5" fill="${p.hollow ? "none" : color(i)}" stroke="${color(i)}" stroke-width="2"/>` })), fr0.left, 0, width - fr0.right)
  const fr: Frame = { ...fr0, width, height: 360 + fr0.bottom + lg.height, bottom: fr0.bottom + lg.height }
  const pts = input.points.map((p, i) => ({ ...p, i })).filter((p) => Number.isFinite(p.x) && Number.isFinite(p.y))
  const xr = input.xDomain ?? domain(pts.map((p) => p.x), true)
  const yr = input.yDomain ?? domain(pts.map((p) => p.y), true)
  const x = scale(xr[0], xr[1], fr.left, width - fr.right)
  const y = scale(yr[0], yr[1], fr.height - fr.bottom, fr.top)
  const base = fr.height - fr.bottom
  const parts = [open(fr, input.title, "scatter"), yAxis(fr, y, yr, input.yLabel), xAxisNumeric(fr, x, xr, input.xLabel)]
  const front = pts.filter((p) => p.front).sort((a, b) => a.x - b.x || a.y - b.y)
  if (front.length > 1) {
    parts.push(`<path class="front" d="${front.map((p, k) => `${k === 0 ? "M" : "L"}${f(x(p.x))} ${f(y(p.y))}`).join("")}"/>`)
  }
  // Points drawn on the same spot share one label listing all their marks.
  const labels = new Map<string, { x: number; y: number; marks: Array<string> }>()
  for (const p of pts) {
    const r = p.front ? 6 : 4.5
    parts.push(`<circle class="point${p.front ? " on-front" : ""}" cx="${f(x(p.x))}" cy="${f(y(p.y))}" r="${r}" fill="${p.hollow ? "white" : color(p.i)}" stroke="${p.front ? "#222" : color(p.i)}" stroke-width="${p.hollow || p.front ? 2 : 1}"><title>${e(p.tip)}</title></circle>`)
    const key = `${Math.round(x(p.x) / 3)},${Math.round(y(p.y) / 3)}`
    const l = labels.get(key) ?? { x: x(p.x), y: y(p.y), marks: [] }
    l.marks.push(p.mark ?? p.label)
    labels.set(key, l)
  }
  // Greedy placement: a label that would overlap one already placed moves down a line.
  const placed: Array<{ x: number; y: number; w: number }> = []
  for (const l of labels.values()) {
    const text = Format.clip(l.marks.join(", "), 40)
    const w = text.length * 6.5
    const x0 = l.x + 8
    let y0 = l.y - 6
    while (placed.some((p) => x0 < p.x + p.w && p.x < x0 + w && Math.abs(p.y - y0) < 12)) y0 += 12
    placed.push({ x: x0, y: y0, w })
    parts.push(`<text class="point-label" x="${f(x0)}" y="${f(y0)}">${e(text)}</text>`)
  }
  parts.push(`<g transform="translate(0 ${base + 48})">${lg.svg}</g>`)
  parts.push("</svg>")
  return parts.join("")
}
