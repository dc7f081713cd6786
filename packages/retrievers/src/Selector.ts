/**
 * Selectors: how many of a ranker's sessions to pass on, apart from how they were scored (the
 * BEIR / ranx split between a run and a cut-off). A retriever scores every session; a config may add
 * `select` to any retriever spec to replace the retriever's own cut with one of these:
 *
 * - `{ top: k }`: the k best-scored sessions.
 * - `{ threshold: t }`: every session scoring above 0 and at least t times the best score.
 * - `{ recent: m, cut: t }`: of the sessions passing the threshold cut t (default 0.6), the latest m.
 * - `{ change: detect, cut: t }`: of the sessions passing the cut, the group after a detected
 *   preference change (the feedback of the later sessions departs from the earlier ones; see
 *   the context-factor retriever's `detect-change` policy), or all of them when none is detected.
 *
 * The ranking is left as the ranker made it; only `selected` changes (chronological, as always).
 *
 * @example
 * // config: retriever: { use: bm25, select: { recent: 2, cut: 0.5 } }
 * // sweep:  retriever.select: [{ top: 2 }, { threshold: 0.6 }, { change: detect }]
 * import { Selector } from "@cupid-lab/retrievers"
 * Selector.apply({ top: 2 }, retrieval, query) // the same ranking, the top two selected
 * Selector.label({ recent: 2, cut: 0.6 })    // "recent=2,cut=0.6"
 */
import { type Domain, Errors, Memo, Plugin, Retriever } from "@cupid-lab/core"
import { Effect, Either, ParseResult, Schema } from "effect"
import { changeWindow } from "./ContextFactor.js"
import { currentGroup, feedbackText } from "./internal/ChangeDetection.js"
import * as Text from "./Text.js"

const Share = Schema.Number.pipe(
  Schema.greaterThan(0),
  Schema.lessThanOrEqualTo(1, { message: () => "expected a share of the best score, in (0, 1]" })
)
const Count = Schema.Int.pipe(Schema.greaterThanOrEqualTo(1, { message: () => "expected a whole number >= 1" }))

export const Top = Schema.Struct({ top: Count })
export const Threshold = Schema.Struct({ threshold: Share })
export const Recent = Schema.Struct({ recent: Count, cut: Schema.optionalWith(Share, { default: () => 0.6 }) })
export const Change = Schema.Struct({
  change: Schema.Literal("detect"),
  cut: Schema.optionalWith(Share, { default: () => 0.6 }),
  /** Within-group over across-group feedback similarity that signals a change. */
  minContrast: Schema.optionalWith(Schema.Number.pipe(Schema.greaterThanOrEqualTo(1)), { default: () => 1.2 }),
  /** Sessions each side of a change needs. */
  minGroup: Schema.optionalWith(Count, { default: () => 2 })
})

export const Spec = Schema.Union(Top, Threshold, Recent, Change).annotations({
  message: () => ({
    message: "expected one of { top: k }, { threshold: t }, { recent: m, cut?: t }, { change: detect, cut?: t }",
    override: true
  })
})
export type Spec = typeof Spec.Type

const members = [
  ["top", Top],
  ["threshold", Threshold],
  ["recent", Recent],
  ["change", Change]
] as const

/**
 * Decode a selector, with errors about the kind it names: `{ top: 0 }` fails on `top`, not with
 * the list of every kind. Unknown keys are errors.
 */
export const decode = (input: unknown): Either.Either<Spec, ParseResult.ParseError> => {
  const member = typeof input === "object" && input !== null ? members.find(([key]) => key in input) : undefined
  return member === undefined
    ? Schema.decodeUnknownEither(Spec, { onExcessProperty: "error" })(input)
    : Schema.decodeUnknownEither(member[1] as Schema.Schema<Spec, unknown>, { onExcessProperty: "error" })(input)
}

/** A problem with a spec's `select` or `k`, at a path inside the spec. */
export interface SpecProblem {
  readonly path: ReadonlyArray<PropertyKey>
  readonly message: string
}

/**
 * The keys of a retriever spec that {@link splitSpec} takes out before the plugin's options are
 * decoded: `select` always, and `k` for rankers. Config errors suggest them with the plugin's own.
 */
export const cutKeys = (ranker: Plugin.AnyRetrieverPlugin): ReadonlyArray<string> =>
  "defaultSelect" in ranker && ranker.defaultSelect !== undefined ? ["k", "select"] : ["select"]

/**
 * Take a retriever spec's cut apart from its plugin options: `select`, or for rankers (plugins with
 * a `defaultSelect`) the shorthand `k: n` for `select: { top: n }`, else the ranker's default.
 * Returns the selector (undefined: the plugin's own cut) and the options left for the plugin.
 */
export const splitSpec = (
  options: Readonly<Record<string, unknown>>,
  ranker: Plugin.AnyRetrieverPlugin
): Either.Either<{ readonly select: Spec | undefined; readonly rest: Record<string, unknown> }, SpecProblem> => {
  const { select, k, ...rest } = options
  const defaultSelect = "defaultSelect" in ranker ? ranker.defaultSelect : undefined
  const withK = defaultSelect !== undefined && k !== undefined
  const remaining = withK || k === undefined ? rest : { ...rest, k }
  if (select !== undefined && withK)
    return Either.left({ path: ["k"], message: "give either k (shorthand for select: { top: k }) or select, not both" })
  if (select !== undefined) {
    return Either.mapBoth(decode(select), {
      onLeft: (e) => {
        const issue = ParseResult.ArrayFormatter.formatErrorSync(e)[0]!
        return { path: ["select", ...issue.path], message: issue.message }
      },
      onRight: (spec) => ({ select: spec, rest: remaining })
    })
  }
  if (withK) {
    if (typeof k !== "number" || !Number.isInteger(k) || k < 1)
      return Either.left({ path: ["k"], message: "k must be a whole number >= 1" })
    return Either.right({ select: { top: k }, rest: remaining })
  }
  return Either.right({ select: defaultSelect, rest: remaining })
}

/**
 * Build a retriever from a full spec (`{ use, ...options, select? | k? }`) with its cut applied, as a
 * sweep cell would: for composite parts, benchmarks and scripts.
 */
export const build = (
  spec: { readonly use: string } & Readonly<Record<string, unknown>>
): Effect.Effect<Retriever.Service, Plugin.MakeError, Plugin.Env> =>
  Effect.gen(function* () {
    const plugin = yield* (yield* Plugin.Plugins).get("retriever", spec.use)
    const { use, ...options } = spec
    const split = splitSpec(options, plugin)
    if (Either.isLeft(split)) {
      return yield* new Errors.PluginError({
        plugin: use,
        reason: `${split.left.path.join(".")}: ${split.left.message}`
      })
    }
    const { select: cut, rest } = split.right
    const service = (yield* Plugin.build("retriever", { ...rest, use })) as Retriever.Service
    if (cut === undefined) return service
    const analyzer = Text.analyzer(yield* Memo.current)
    return {
      needsSummaries: service.needsSummaries,
      retrieve: (input: Retriever.RetrievalInput) =>
        Effect.map(service.retrieve(input), (r) => apply(cut, r, input.query, analyzer))
    }
  })

const byIndex = (id: string): number => Number(id.slice(1))

/** Sessions (ids) scoring above 0 and at least `share` of the best, in chronological order. */
const passing = (ranking: ReadonlyArray<Retriever.RankedSession>, share: number): Array<string> => {
  const best = ranking.reduce((m, r) => Math.max(m, r.score), 0)
  if (!(best > 0)) return []
  return ranking
    .filter((r) => r.score > 0 && r.score >= share * best)
    .map((r) => r.sessionId)
    .sort((a, b) => byIndex(a) - byIndex(b))
}

/**
 * The sessions `spec` keeps of a retrieval's ranking, chronological. Change detection analyses the
 * sessions' feedback with `analyzer` (a sweep's, `Text.analyzer(memo)`; default: one of its own).
 */
export const select = (
  spec: Spec,
  ranking: ReadonlyArray<Retriever.RankedSession>,
  query: Domain.Query,
  analyzer: Text.Analyzer = Text.fresh()
): ReadonlyArray<string> => {
  if ("top" in spec) return Retriever.chronological(ranking.slice(0, spec.top).map((r) => r.sessionId))
  if ("threshold" in spec) return passing(ranking, spec.threshold)
  if ("recent" in spec) return passing(ranking, spec.cut).slice(-spec.recent)
  const kept = passing(ranking, spec.cut).slice(-changeWindow)
  const byId = new Map(query.sessions.map((s) => [s.id, s]))
  const sessions = kept.map((id) => byId.get(id)).filter((s): s is Domain.SessionView => s !== undefined)
  const background = query.sessions.map((s) => feedbackText(s.dialogue))
  return currentGroup(
    sessions,
    sessions.map((s) => feedbackText(s.dialogue)),
    background,
    spec.minContrast,
    spec.minGroup,
    analyzer
  ).map((s) => s.id)
}

/** The retrieval (its turn ranking too) with its selection replaced by what `spec` keeps (see {@link select}). */
export const apply = (
  spec: Spec,
  retrieval: Retriever.Retrieval,
  query: Domain.Query,
  analyzer?: Text.Analyzer
): Retriever.Retrieval => ({
  ...retrieval,
  selected: select(spec, retrieval.ranking, query, analyzer)
})

/** `top=2`, `threshold=0.6`, `recent=2,cut=0.6`, `change=detect,cut=0.6` (defaults of change detection left out). */
export const label = (spec: Spec): string =>
  "top" in spec
    ? `top=${spec.top}`
    : "threshold" in spec
      ? `threshold=${spec.threshold}`
      : "recent" in spec
        ? `recent=${spec.recent},cut=${spec.cut}`
        : `change=detect,cut=${spec.cut}`
