/**
 * Readable cell names: a cell is named by what differs across the grid (the stages, their options,
 * the history transform's parts), so names stay short however large the grid is.
 *
 * @example
 * names([{ retriever: { use: "bm25", k: 2 }, ... }, { retriever: { use: "bm25", k: 4 }, ... }]) // ["bm25(k=2)", "bm25(k=4)"]
 */
import { Hash, Stage, Transform } from "@cupid-lab/core"
import { Selector } from "@cupid-lab/retrievers"
import { Either, Schema } from "effect"
import type { Spec, StageName } from "./Config.js"
import { isRecord } from "./Tree.js"

/** A value in a cell name: scalars as they are, a nested plugin spec by its plugin name, anything else as JSON. */
const labelValue = (v: unknown): string =>
  typeof v === "string" || typeof v === "number" || typeof v === "boolean"
    ? String(v)
    : isRecord(v) && typeof v["use"] === "string"
    ? v["use"]
    : Hash.canonicalJson(v)

/** A selector in a cell name: `top=2`, `recent=2,cut=0.6`; `own cut` where a cell has none. */
const selectLabel = (value: unknown): string => {
  if (value === undefined) return "own cut"
  const decoded = Schema.decodeUnknownEither(Selector.Spec)(value)
  return Either.isRight(decoded) ? Selector.label(decoded.right) : labelValue(value)
}

/** Each stage that differs across the grid as `plugin(option=value,...)`, with the options that differ among its cells. */
export const names = (params: ReadonlyArray<Readonly<Record<StageName, Spec | null>>>): Array<string> => {
  const canon = (v: unknown) => Hash.canonicalJson(v ?? null)
  const shown = Stage.cellStages.filter((s) => new Set(params.map((p) => canon(p[s]))).size > 1)
  const varying = new Map<string, Set<string>>()
  for (const s of shown) {
    const byUse = new Map<string, Array<Spec>>()
    for (const p of params) {
      const spec = p[s]
      if (spec === null) continue
      const same = byUse.get(spec.use)
      if (same === undefined) byUse.set(spec.use, [spec])
      else same.push(spec)
    }
    for (const [use, specs] of byUse) {
      const keys = new Set(specs.flatMap((x) => Object.keys(x)).filter((k) => k !== "use"))
      varying.set(`${s}\0${use}`, new Set([...keys].filter((k) => new Set(specs.map((x) => canon(x[k]))).size > 1)))
    }
  }
  return params.map((p) => {
    const parts: Array<string> = []
    for (const s of shown) {
      const spec = p[s]
      if (spec === null) continue
      const keys = Object.keys(spec).filter((k) => varying.get(`${s}\0${spec.use}`)?.has(k))
      const show = (k: string) => k === "select" ? selectLabel(spec[k]) : `${k}=${labelValue(spec[k])}`
      parts.push(keys.length === 0 ? spec.use : `${spec.use}(${keys.map(show).join(",")})`)
    }
    if (parts.length > 0) return parts.join(" + ")
    if (shown.length > 0) return shown.map((s) => `no ${s}`).join(" + ")
    const first = Stage.cellStages.map((s) => p[s]).find((x) => x !== null)
    return first?.use ?? "empty"
  })
}

/** When cells differ in their transform, their names say how, by the parts that vary: `bm25 @ pad=24,position=early`. */
export const withTransforms = (generated: ReadonlyArray<string>, transforms: ReadonlyArray<Transform.Spec | null>): Array<string> => {
  const part = (t: Transform.Spec | null, key: typeof Transform.keys[number]): string => {
    const v = t?.[key]
    return v === undefined ? (key === "pad" ? "0" : "none") : Array.isArray(v) ? v.join("+") : String(v)
  }
  const varying = Transform.keys.filter((k) => new Set(transforms.map((t) => part(t, k))).size > 1)
  if (varying.length === 0) return [...generated]
  const stagesVary = new Set(generated).size > 1
  return generated.map((g, i) => {
    const label = varying.map((k) => `${k}=${part(transforms[i]!, k)}`).join(",")
    return stagesVary ? `${g} @ ${label}` : label
  })
}

