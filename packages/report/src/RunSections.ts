/**
 * The report's sections about the run itself: the verdict it opens with, what ran (data, cells,
 * models, plugins) and the run record (times, cache, versions). Built from {@link Document}'s blocks.
 */
import type { RunDir } from "@cupid-lab/results"
import type { Analysis } from "./Analysis.js"
import { type Block, h3, list, p, section, table, type Section, type Text, viewer } from "./Document.js"
import { type Examples, opening } from "./Examples.js"
import * as Format from "./Format.js"
import * as Leaderboard from "./Leaderboard.js"
import * as Notes from "./Notes.js"
import * as RunTables from "./RunTables.js"
import type * as Verdict from "./Verdict.js"
import * as VerdictText from "./VerdictText.js"

export const verdict = (a: Analysis, v: Verdict.Verdict): Section => {
  const board = Leaderboard.table(a, v, Leaderboard.openingLimit)
  return section(
    "Verdict",
    [
      p({ line: Leaderboard.intro(a, v) }),
      ...(v.notes.length > 0 ? [p({ line: VerdictText.notes(v).join(" ") })] : []),
      ...(v.findings.length > 0 ? [list(v.findings.map((f) => [{ line: VerdictText.sentence(v, f) }]))] : []),
      ...(v.metric === undefined ? [] : [table(board), p(board.notes.join(" "))])
    ],
    "verdict"
  )
}

export const run = (a: Analysis): Section => {
  const s = a.summary
  const d = s.dataset
  const oracle = a.cells.filter((c) => c.summary.usesGold).map((c) => c.summary.name)
  const heuristic = s.metrics.filter((m) => m.heuristic).map((m) => m.name)
  const models: Text =
    a.models.length === 0
      ? ["none (every stage ran offline)"]
      : a.models.flatMap((m, i) => [
          ...(i > 0 ? [", "] : []),
          { code: m.id },
          ` (${Format.integer(m.calls)} calls answered by the model or the cache, ${Format.integer(m.promptTokens + m.completionTokens)} tokens)`
        ])
  const items: Array<Text> = [
    ["Config: ", { code: s.config.name }, ", hash ", { code: s.config.hash }],
    [
      "Data: ",
      { code: d.source },
      ", fingerprint ",
      { code: d.hash },
      `, ${d.instances} instances; ${d.skipped.length} rows skipped`
    ],
    [
      `Cells: ${a.cells.length}; result lines: ${a.index.table.length - a.index.failures.length} scored, ${a.index.failures.length} failed`
    ],
    [`Baseline: ${a.baseline.name} (${a.baselineReason})`],
    ...(a.main === undefined
      ? []
      : [[`Main metric: ${Notes.metricLabel(a.main)}`, { raw: ` (${Notes.aggregateNote(a.main)}); ` }, a.mainReason]]),
    [`Cells that read gold labels ${Notes.oracleMark}: ${oracle.length === 0 ? "none" : oracle.join(", ")}`],
    [
      `Metrics from heuristics ${Notes.heuristicMark} (not LLM judges): `,
      heuristic.length === 0 ? "none" : heuristic.join(", ")
    ],
    ["Models called: ", ...models],
    ...(s.modelCalls === undefined ? [] : [[{ raw: Notes.modelCalls(s.modelCalls) }]])
  ]
  return section("Run", [list(items), { _tag: "lines", lines: Notes.marks(a).map((m) => [m]) }], "run")
}

/** From run.json: how this run went; these figures change between reruns, so report.md leaves them out. */
export const record = (info: RunDir.RunInfo | undefined): Section => {
  if (info === undefined) return section("Run record", [p("No run.json in the run directory.")], "run-record")
  const { cache, modelCalls: calls, pairs, stageTimeMs, tokens, versions } = info
  const items: Array<readonly [string, string | undefined]> = [
    ["Started", info.startedAt],
    ["Ended", info.endedAt],
    ["Duration", info.durationMs === undefined ? undefined : `${(info.durationMs / 1000).toFixed(1)} s`],
    [
      "Interrupted",
      info.interrupted === undefined ? undefined : info.interrupted ? "yes (outputs cover the pairs done)" : "no"
    ],
    [
      "Pairs",
      pairs &&
        `${pairs.total ?? "?"} total; ${pairs.ran ?? "?"} run now, ${pairs.resumed ?? "?"} resumed from an earlier run, ${pairs.failed ?? "?"} failed`
    ],
    [
      "Pairs per second",
      info.pairsPerSecond === undefined || info.pairsPerSecond === null ? undefined : info.pairsPerSecond.toFixed(2)
    ],
    ["Model cache", cache && `${cache.hits ?? 0} hits, ${cache.misses ?? 0} misses, ${cache.writes ?? 0} writes`],
    [
      "Model calls this run",
      calls &&
        `${calls.made ?? 0} made, ${calls.cached ?? 0} answered by the cache; ${calls.requestsSent ?? 0} HTTP requests sent, ${calls.retries ?? 0} of them retries` +
          (calls.limiterMs === undefined
            ? ""
            : `; ${Format.integer(calls.limiterMs)} ms waiting for rate limiters (summed over calls)`)
    ],
    [
      "Tokens this run",
      tokens && `${Format.integer(tokens.prompt ?? 0)} prompt, ${Format.integer(tokens.completion ?? 0)} completion`
    ],
    [
      "Stage time (summed over pairs)",
      stageTimeMs &&
        (Object.entries(stageTimeMs)
          .map(([k, v]) => `${k} ${(v / 1000).toFixed(1)} s`)
          .join(", ") ||
          "–")
    ],
    [
      "Versions",
      versions &&
        Object.entries(versions)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ")
    ]
  ]
  return section(
    "Run record",
    [
      p(
        "From run.json: how this run went (time, cache, versions). These figures change between reruns, so report.md leaves them out."
      ),
      list(items.flatMap(([k, v]) => (v === undefined ? [] : [[`${k}: ${v}`]])))
    ],
    "run-record"
  )
}

/** The first instance of each type: its request, its gold preference (or, on a question-answering benchmark, answer), its sessions and what each cell did. */
export const examples = (a: Analysis, ex: Examples): Section => {
  const browse =
    a.cells.length > Leaderboard.openingLimit
      ? [p("The results viewer (", viewer, ") browses every instance, with what each cell selected.")]
      : []
  if (ex.examples.length === 0)
    return section("Examples", [...browse, p(`No examples: ${ex.note ?? "none"}.`)], "examples")
  // A question-answering benchmark (LoCoMo, LongMemEval) gives answers and no preferences.
  const answers =
    ex.examples.every((e) => e.instance.gold.preference === "") &&
    ex.examples.some((e) => e.instance.gold.answer !== undefined)
  return section(
    "Examples",
    [
      ...browse,
      p(
        `The first instance of each type: the request, the gold ${answers ? "answer" : "preference"}, the prior sessions (gold label and opening user message) and what each cell selected${RunTables.inferred(ex) ? " and inferred" : ""}.`
      ),
      ...ex.examples.flatMap((e): Array<Block> => {
        const i = e.instance
        return [
          h3(e.id, ` (${e.type})`),
          {
            _tag: "list",
            items: [
              { text: [`Request: ${Format.clip(i.query.request, 400)}`] },
              answers
                ? { text: [`Gold answer: ${i.gold.answer === undefined ? "–" : Format.clip(i.gold.answer, 400)}`] }
                : { text: [`Gold preference: ${i.gold.preference}`] },
              {
                text: ["Prior sessions:"],
                items: i.query.sessions.map((s, k) => [
                  `${s.id} (${i.gold.sessions[k]?.label ?? "?"}): `,
                  Format.clip(opening(s), 160)
                ])
              }
            ]
          },
          table(RunTables.example(a, ex, e))
        ]
      })
    ],
    "examples"
  )
}
