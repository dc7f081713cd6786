/**
 * `<run>/calls.jsonl`: the transcript of every model call, one line per (cell, instance) attempt
 * that called a model, appended before the pair's result line (a retried pair adds a line). It
 * differs between reruns (latency, cache flags); `transcripts: counts` leaves out every text: the
 * requests, the answers and what was read from them (only whether it could be read stays).
 *
 * @example
 * const totals = yield* Calls.tally("runs/x/calls.jsonl") // { attempts, calls, cached, requests, retries, failed }
 */
import { type LanguageModel, Usage } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import { RunError } from "./Errors.js"
import type { ModelCalls } from "./ResultLine.js"
import * as RunDir from "./RunDir.js"

export const fileName = "calls.jsonl"

/** `full`: every request and answer; `counts`: the same lines without any model text (no request, answer or reading). */
export type Mode = "full" | "counts"

/** A message as sent: the provider's role names (`developer` where a model entry renames `system`). */
const Message = Schema.Struct({ role: Schema.String, content: Schema.String })

export const Call = Schema.Struct({
  stage: Schema.String,
  provider: Schema.String,
  model: Schema.String,
  /** `service`: a call to a system under test over HTTP (an `http` stage; docs/http-systems.md). */
  kind: Schema.Literal("complete", "embed", "rerank", "service"),
  cached: Schema.Boolean,
  /** HTTP requests the servers received for this call, retries included (0 when the cache answered). */
  requests: Schema.Number,
  failed: Schema.Boolean,
  /** From the stage's call to its answer or failure: the requests, their backoff and any limiter wait. */
  latencyMs: Schema.Number,
  /**
   * The part of `latencyMs` spent waiting for the model's rate limiters (its `rpm` and the shared
   * `limiter`), over every attempt; absent when the model has neither or the cache answered.
   */
  limiterMs: Schema.optional(Schema.Number),
  /** The provider batch job that carried the answer (absent for calls sent one by one, and cached ones). */
  batch: Schema.optional(Schema.String),
  promptTokens: Schema.Number,
  completionTokens: Schema.Number,
  /**
   * The request as the provider received it: the body it sent (its role and parameter names, the
   * fixed settings, `extraBody`), or, for a provider that does not say, the request as the stage made it.
   * A service call (`kind: service`) has no messages: its `url` and the JSON `body` it was sent.
   */
  request: Schema.optional(
    Schema.Struct({ messages: Schema.optional(Schema.Array(Message)) }, { key: Schema.String, value: Schema.Unknown })
  ),
  /**
   * The raw answer's first `answerCap` characters (`CUPID_TRANSCRIPT_ANSWER_CHARS`, default 65,536);
   * `answerChars` is the whole answer's length and `answerSha256` the SHA-256 of its UTF-8 bytes,
   * so an answer longer than the cap (a model that loops) is visibly cut. The model cache keeps it whole.
   */
  answer: Schema.optional(Schema.String),
  answerChars: Schema.optional(Schema.Number),
  answerSha256: Schema.optional(Schema.String),
  answerCap: Schema.optional(Schema.Number),
  finishReason: Schema.optional(Schema.String),
  /**
   * What the caller read from the answer: `{ ok: true, value }` or `{ ok: false, reason }`; under
   * `transcripts: counts` only `ok`, since the value and the reason quote the model's text.
   */
  read: Schema.optional(
    Schema.Union(
      Schema.Struct({ ok: Schema.Literal(true), value: Schema.optional(Schema.Unknown) }),
      Schema.Struct({ ok: Schema.Literal(false), reason: Schema.optional(Schema.String) })
    )
  ),
  error: Schema.optional(Schema.String),
  /** Texts embedded or documents reranked. */
  inputs: Schema.optional(Schema.Number)
})
export type Call = typeof Call.Type

export const Line = Schema.Struct({
  cell: Schema.String,
  instance: Schema.String,
  /** When the sweep that made these calls started (ISO 8601). */
  ranAt: Schema.String,
  calls: Schema.Array(Call)
})
export type Line = typeof Line.Type

const callOf = (e: Usage.UsageEntry, mode: Mode): Call => {
  const d = e.detail
  const request =
    d?.wire !== undefined ? (d.wire as Call["request"]) : d?.request === undefined ? undefined : requestOf(d.request)
  return {
    stage: e.stage,
    provider: e.provider,
    model: e.model,
    kind: e.kind,
    cached: e.cached,
    requests: Usage.requestsOf(e),
    failed: e.failed === true,
    latencyMs: d?.latencyMs ?? 0,
    ...(d?.limiterMs !== undefined ? { limiterMs: d.limiterMs } : {}),
    ...(d?.batch !== undefined ? { batch: d.batch } : {}),
    promptTokens: e.promptTokens,
    completionTokens: e.completionTokens,
    ...(mode === "full" && request !== undefined ? { request } : {}),
    ...(d?.answer === undefined
      ? {}
      : mode === "full"
        ? {
            answer: d.answer.text,
            answerChars: d.answer.chars,
            answerSha256: d.answer.sha256,
            answerCap: d.answer.cap
          }
        : { answerChars: d.answer.chars }),
    ...(d?.finishReason !== undefined ? { finishReason: d.finishReason } : {}),
    ...(d?.reading !== undefined ? { read: mode === "full" ? d.reading : { ok: d.reading.ok } } : {}),
    ...(d?.error !== undefined ? { error: d.error } : {}),
    ...(d?.inputs !== undefined ? { inputs: d.inputs } : {})
  }
}

/** The request's fields as JSON has them (functions and undefined fields never reach a provider). */
const requestOf = (r: LanguageModel.CompletionRequest): Call["request"] => {
  const out: Record<string, unknown> = { messages: r.messages.map((m) => ({ role: m.role, content: m.content })) }
  for (const [k, v] of Object.entries(r)) if (k !== "messages" && v !== undefined && typeof v !== "function") out[k] = v
  return out as Call["request"]
}

/** The line of one pair's calls (ending in "\n"), or undefined when it made none. */
export const line = (
  pair: { readonly cell: string; readonly instance: string; readonly ranAt: string },
  usage: ReadonlyArray<Usage.UsageEntry>,
  mode: Mode
): string | undefined =>
  usage.length === 0
    ? undefined
    : `${JSON.stringify({ cell: pair.cell, instance: pair.instance, ranAt: pair.ranAt, calls: usage.map((e) => callOf(e, mode)) } satisfies Line)}\n`

/** What the transcripts of a run directory add up to, over every recorded attempt (summary.json's `modelCalls`). */
export const emptyTotals: typeof ModelCalls.Type = {
  attempts: 0,
  calls: 0,
  cached: 0,
  requests: 0,
  retries: 0,
  failed: 0
}

/** Totals of `file` (zeros when it does not exist); a line cut short by a kill is not counted. */
export const tally = (file: string): Effect.Effect<typeof ModelCalls.Type, RunError, FileSystem.FileSystem> =>
  Effect.gen(function* () {
    const t = { ...emptyTotals }
    let unreadable = 0,
      batched = 0
    const decode = Schema.decodeUnknownEither(Schema.parseJson(Line))
    yield* RunDir.scanIfPresent(file, "call transcripts", (raw) => {
      const decoded = decode(raw.toString("utf8", 0, raw.length - 1))
      if (Either.isLeft(decoded)) {
        unreadable++
        return
      }
      t.attempts++
      for (const c of decoded.right.calls) {
        t.calls++
        if (c.cached) t.cached++
        if (c.failed) t.failed++
        if (c.batch !== undefined) batched++
        t.requests += c.requests
        t.retries += Math.max(0, c.requests - 1)
      }
    })
    return { ...t, ...(batched > 0 ? { batched } : {}), ...(unreadable > 0 ? { unreadable } : {}) }
  })

/**
 * The latest line of each cell for `instance` in `file`, with how many attempts each has, and how
 * many lines about the instance could not be read: what the viewer shows on an instance page.
 */
export const ofInstance = (
  file: string,
  instance: string
): Effect.Effect<
  {
    readonly byCell: ReadonlyMap<string, { readonly line: Line; readonly attempts: number }>
    readonly unreadable: number
  },
  RunError,
  FileSystem.FileSystem
> =>
  Effect.map(RunDir.linesAbout(file, instance, Line, "call transcripts"), ({ lines, unreadable }) => {
    const byCell = new Map<string, { line: Line; attempts: number }>()
    for (const line of lines) byCell.set(line.cell, { line, attempts: (byCell.get(line.cell)?.attempts ?? 0) + 1 })
    return { byCell, unreadable }
  })
