/**
 * Result lines as the runner writes them, for the tests (through support.ts) and for
 * fixtures/append-log.ts, which runs as a plain Node process: so this module imports nothing that
 * needs vitest, as support.ts does through `@cupid-lab/core/testing`.
 */
import { Domain } from "@cupid-lab/core"
import { type ResultLine, Results } from "@cupid-lab/results"
import { Schema } from "effect"

/**
 * The text of a valid result line of `cell` for `instance` (`<persona>:<type>`, or any id: then a
 * consistent instance of persona `p`), as the runner writes it: ok with one score, or failed with
 * the runner's error fields. With `bytes`, `params.pad` makes the text exactly that long.
 */
export const resultLine = (
  cell: string,
  instance: string,
  options: { readonly status?: "ok" | "failed"; readonly bytes?: number } = {}
): string => {
  const [personaId, type] = instance.includes(":") ? instance.split(":") : ["p", "consistent"]
  const failed = options.status === "failed"
  const line = (pad: string): ResultLine.ResultLine => ({
    cell,
    cellName: `cell ${cell}`,
    instance,
    personaId: personaId!,
    type: Schema.decodeUnknownSync(Domain.InstanceType)(type),
    status: failed ? "failed" : "ok",
    params: { retriever: { use: "first", k: 1 }, ...(pad === "" ? {} : { pad }) },
    meta: { sessions: 4, historyTokens: 26, relevantMeanPosition: 2.5, relevant: ["s2", "s3"], stale: [] },
    selected: failed ? null : ["s1"],
    ranking: null,
    summaries: null,
    inference: null,
    generation: null,
    scores: failed ? {} : { "retrieval.hit": 1 },
    usage: { calls: 0, promptTokens: 0, completionTokens: 0, byStage: {}, byModel: {} },
    error: failed ? { stage: "retrieve", plugin: "first", tag: "StageError", message: "no sessions" } : null
  })
  if (options.bytes === undefined) return Results.encodeLine(line(""))
  const bare = Buffer.byteLength(Results.encodeLine(line("x")), "utf8") - 1
  if (options.bytes < bare + 1)
    throw new Error(`a result line of ${cell}/${instance} takes at least ${bare + 1} bytes, not ${options.bytes}`)
  return Results.encodeLine(line("x".repeat(options.bytes - bare)))
}
