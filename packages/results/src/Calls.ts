/**
 * `<run>/calls.jsonl`: the transcript of every model call, one line per (cell, instance) attempt
 * that called a model, appended before the pair's result line (a retried pair adds a line). It
 * differs between reruns (latency, cache flags); `transcripts: counts` leaves out every text: the
 * requests, the answers and what was read from them (only whether it could be read stays).
 *
 * A call whose request and answer the file already holds (the same cache key and the same answer,
 * recorded in full by an earlier line: of this run, of an earlier run in the directory or of
 * another shard) refers to that record (`sameAs`: the pair whose line holds it) instead of storing
 * them again: the calls the cache answered, and a request sent again that got the same answer.
 * {@link ofInstance} fills them back in. The first record of each call in the file keeps its text,
 * whether the cache answered it or not: the cache may have been filled by another run directory,
 * and the call that filled it can finish after the calls that waited for its answer.
 *
 * @example
 * const totals = yield* Calls.tally("runs/x/calls.jsonl") // { attempts, calls, cached, requests, retries, failed }
 * const firsts = yield* Calls.recorded("runs/x/calls.jsonl") // what later calls can refer to
 * const text = Calls.encode(Calls.line(pair, usage, "full")!, firsts)
 */
import { type LanguageModel, Usage } from "@cupid-lab/core"
import { FileSystem } from "@effect/platform"
import { Effect, Either, Schema } from "effect"
import { RunError } from "./Errors.js"
import { decoder } from "./internal/fastDecode.js"
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
  inputs: Schema.optional(Schema.Number),
  /** The call's cache key (completions, under `transcripts: full`; absent in older files). */
  key: Schema.optional(Schema.String),
  /**
   * The pair whose line first recorded this call in full (the same `key` and `answerSha256`):
   * `request`, `answer` and `answerCap` are that record's, left out here.
   */
  sameAs: Schema.optional(Schema.Struct({ cell: Schema.String, instance: Schema.String }))
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
    ...(mode === "full" && d?.key !== undefined ? { key: d.key } : {}),
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

/** The line of one pair's calls, every call in full ({@link encode} writes it), or undefined when it made none. */
export const line = (
  pair: { readonly cell: string; readonly instance: string; readonly ranAt: string },
  usage: ReadonlyArray<Usage.UsageEntry>,
  mode: Mode
): Line | undefined =>
  usage.length === 0
    ? undefined
    : { cell: pair.cell, instance: pair.instance, ranAt: pair.ranAt, calls: usage.map((e) => callOf(e, mode)) }

/** A pair, as `sameAs` names the line of a call's first record. */
export type Pair = NonNullable<Call["sameAs"]>

/**
 * The calls a calls.jsonl holds in full, by key and answer, each with the pair that first recorded
 * it: what later calls refer to. {@link encode} and {@link relink} add the calls they keep in full.
 */
export type Recorded = Map<string, Pair>

/** A call recorded in full with its key: what a repeat can refer to (the key and the answer's hash). */
const idOf = (c: Call): string | undefined =>
  c.key !== undefined && c.answerSha256 !== undefined && c.request !== undefined && c.answer !== undefined
    ? `${c.key} ${c.answerSha256}`
    : undefined

/** A record's place: its pair and its key and answer. */
const pairKey = (p: Pair, id: string) => `${p.cell}\u0000${p.instance}\u0000${id}`

/** `call` as `pair`'s line keeps it: a call already recorded in full refers to that record. */
const link = (call: Call, pair: Pair, recorded: Recorded): Call => {
  const id = idOf(call)
  if (id === undefined) return call
  const first = recorded.get(id)
  if (first === undefined) {
    recorded.set(id, pair)
    return call
  }
  const { answer: _answer, answerCap: _cap, request: _request, ...rest } = call
  return { ...rest, sameAs: first }
}

/** The text of `line` in a file that holds `recorded` (ending in "\n"); `recorded` gains its calls kept in full. */
export const encode = (line: Line, recorded: Recorded): string => {
  const pair: Pair = { cell: line.cell, instance: line.instance }
  return `${JSON.stringify({ ...line, calls: line.calls.map((c) => link(c, pair, recorded)) } satisfies Line)}\n`
}

const decodeLine = decoder(Line)

/** A line's JSON and its decoded value, or undefined when it is not a line of calls. */
const parse = (text: string): { readonly raw: Line; readonly line: Line } | undefined => {
  const raw = Either.try(() => JSON.parse(text) as Line)
  if (Either.isLeft(raw)) return undefined
  const line = decodeLine(raw.right)
  return Either.isLeft(line) ? undefined : { raw: raw.right, line: line.right }
}

/**
 * Files appended one after another (shards merged): what the lines so far hold in full, and the
 * records {@link relink} turned into references, so that the references to them follow.
 */
export interface Relinking {
  readonly recorded: Recorded
  readonly moved: Map<string, Pair>
}

export const relinking = (): Relinking => ({ recorded: new Map(), moved: new Map() })

/**
 * `text` (a whole line of another calls.jsonl, a shard's) as the file the lines before it make
 * keeps it: unchanged, or with its calls already recorded in full referring to those records
 * (and its references to records so changed following them). A line that does not
 * decode is kept as it is.
 */
export const relink = (text: string, state: Relinking): string => {
  const parsed = parse(text.endsWith("\n") ? text.slice(0, -1) : text)
  if (parsed === undefined) return text
  // Linked on the line as written (its fields in their order), so that what is not changed keeps its bytes.
  const { raw } = parsed
  const pair: Pair = { cell: raw.cell, instance: raw.instance }
  const calls = raw.calls.map((c): Call => {
    if (c.sameAs !== undefined) {
      const to = state.moved.get(pairKey(c.sameAs, `${c.key} ${c.answerSha256}`))
      return to === undefined ? c : { ...c, sameAs: to }
    }
    const linked = link(c, pair, state.recorded)
    if (linked.sameAs !== undefined) state.moved.set(pairKey(pair, idOf(c)!), linked.sameAs)
    return linked
  })
  return calls.every((c, i) => c === raw.calls[i]) ? text : `${JSON.stringify({ ...raw, calls })}\n`
}

/** What `file` holds in full (empty when it does not exist): where the next calls appended to it refer. */
export const recorded = Effect.fn("Calls.recorded")(function* (
  file: string
): Effect.fn.Return<Recorded, RunError, FileSystem.FileSystem> {
  const out: Recorded = new Map()
  yield* RunDir.scanIfPresent(file, "call transcripts", (raw) => {
    const parsed = parse(raw.toString("utf8", 0, raw.length - 1))
    if (parsed === undefined) return
    const pair: Pair = { cell: parsed.line.cell, instance: parsed.line.instance }
    for (const c of parsed.line.calls) {
      const id = idOf(c)
      if (id !== undefined && !out.has(id)) out.set(id, pair)
    }
  })
  return out
})

/** What the transcripts of a run directory add up to, over every recorded attempt (summary.json's `modelCalls`). */
export const emptyTotals: typeof ModelCalls.Type = {
  attempts: 0,
  calls: 0,
  cached: 0,
  requests: 0,
  retries: 0,
  failed: 0
}

/**
 * What {@link tally} reads of a line: its calls' counts, not their requests and answers (a line whose
 * counts are whole is counted; one cut short by a kill is not JSON).
 */
const decodeCounts = Schema.decodeUnknownEither(
  Schema.parseJson(
    Schema.Struct({
      calls: Schema.Array(Call.pipe(Schema.pick("cached", "failed", "batch", "requests")))
    })
  )
)

/** Totals of `file` (zeros when it does not exist); a line cut short by a kill is not counted. */
export const tally = Effect.fn("Calls.tally")(function* (
  file: string
): Effect.fn.Return<typeof ModelCalls.Type, RunError, FileSystem.FileSystem> {
  const t = { ...emptyTotals }
  let unreadable = 0,
    batched = 0
  yield* RunDir.scanIfPresent(file, "call transcripts", (raw) => {
    const decoded = decodeCounts(raw.toString("utf8", 0, raw.length - 1))
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

/** The decoded lines about any of `instances`, in file order (lines that mention none are skipped undecoded). */
const linesAboutAny = (file: string, instances: ReadonlySet<string>) =>
  Effect.gen(function* () {
    const lines: Array<Line> = []
    const needles = [...instances].map((i) => Buffer.from(JSON.stringify(i)))
    yield* RunDir.scanIfPresent(file, "call transcripts", (raw) => {
      if (!needles.some((n) => raw.indexOf(n) !== -1)) return
      const parsed = parse(raw.toString("utf8", 0, raw.length - 1))
      if (parsed !== undefined && instances.has(parsed.line.instance)) lines.push(parsed.line)
    })
    return lines
  })

/**
 * The latest line of each cell for `instance` in `file`, with how many attempts each has, how many
 * lines about the instance could not be read, and how many calls refer to a record the file no
 * longer holds (then they have no request and no answer): what the viewer shows on an instance
 * page. A call that refers to its first record has that record's request and answer filled in.
 */
export const ofInstance = Effect.fn("Calls.ofInstance")(function* (
  file: string,
  instance: string
): Effect.fn.Return<
  {
    readonly byCell: ReadonlyMap<string, { readonly line: Line; readonly attempts: number }>
    readonly unreadable: number
    readonly unresolved: number
  },
  RunError,
  FileSystem.FileSystem
> {
  const { lines, unreadable } = yield* RunDir.linesAbout(file, instance, Line, "call transcripts")
  const latest = new Map<string, { line: Line; attempts: number }>()
  for (const line of lines) latest.set(line.cell, { line, attempts: (latest.get(line.cell)?.attempts ?? 0) + 1 })
  // The records referred to: in the lines about this instance, else in those about the others named.
  const elsewhere = new Set<string>()
  for (const { line } of latest.values())
    for (const c of line.calls)
      if (c.sameAs !== undefined && c.sameAs.instance !== instance) elsewhere.add(c.sameAs.instance)
  const firsts = new Map<string, Call>()
  for (const l of elsewhere.size === 0 ? lines : [...lines, ...(yield* linesAboutAny(file, elsewhere))]) {
    for (const c of l.calls) {
      const id = idOf(c)
      const at = id === undefined ? undefined : pairKey(l, id)
      if (at !== undefined && !firsts.has(at)) firsts.set(at, c)
    }
  }
  let unresolved = 0
  const resolve = (c: Call): Call => {
    if (c.sameAs === undefined) return c
    const first = firsts.get(pairKey(c.sameAs, `${c.key} ${c.answerSha256}`))
    if (first === undefined) {
      unresolved++
      return c
    }
    return {
      ...c,
      request: first.request,
      answer: first.answer,
      ...(first.answerCap !== undefined ? { answerCap: first.answerCap } : {})
    }
  }
  const byCell = new Map<string, { readonly line: Line; readonly attempts: number }>()
  for (const [cell, { attempts, line }] of latest) {
    const calls = line.calls.some((c) => c.sameAs !== undefined) ? line.calls.map(resolve) : line.calls
    byCell.set(cell, { attempts, line: calls === line.calls ? line : { ...line, calls } })
  }
  return { byCell, unreadable, unresolved }
})
