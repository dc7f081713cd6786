/**
 * The OpenAI Batch API (files and batches) as a batch endpoint: a wave of chat requests is
 * uploaded as a JSONL file (`purpose: batch`), run as a batch on `/v1/chat/completions` within
 * 24 hours at half the price, polled, and read back from its output and error files by custom id.
 * Any OpenAI-compatible `baseURL` that serves these routes works the same way.
 *
 * @example
 * # config
 * models:
 *   gpt4o: { provider: openai, model: gpt-4o-2024-08-06, batch: true }
 *   cheap: { provider: openai, model: gpt-4o-mini, batch: { rate: 0.5, pollMs: 10000 } }
 */
import type { Batch, Errors } from "@cupid-lab/core"
import { Effect, Schema } from "effect"
import type OpenAIClient from "openai"
import * as Failure from "./internal/Failure.js"

const Rate = Schema.Number.pipe(Schema.greaterThan(0), Schema.lessThanOrEqualTo(1))
const PositiveInt = Schema.Int.pipe(Schema.positive())

/** A model entry's `batch:`: true for the defaults, or the settings to change. */
export const Option = Schema.Union(
  Schema.Boolean,
  Schema.Struct({
    /** The batch price as a fraction of the synchronous one (OpenAI: 0.5). */
    rate: Schema.optional(Rate),
    /** First wait between polls; it grows by half each poll up to `pollMaxMs`. */
    pollMs: Schema.optional(PositiveInt),
    pollMaxMs: Schema.optional(PositiveInt),
    /** Lines and bytes per input file (OpenAI: 50,000 requests, 200 MB). */
    maxLines: Schema.optional(PositiveInt),
    maxBytes: Schema.optional(PositiveInt)
  })
)
export type Option = typeof Option.Type

export const defaults: Batch.Settings = {
  rate: 0.5,
  pollMs: 5_000,
  pollMaxMs: 60_000,
  maxLines: 50_000,
  maxBytes: 190_000_000
}

/** The settings an entry asks for, or undefined when its calls go one by one. */
export const settings = (option: Option | undefined, all: boolean): Batch.Settings | undefined => {
  if (option === false || (option === undefined && !all)) return undefined
  if (option === true || option === undefined) return defaults
  const s: Batch.Settings = {
    rate: option.rate ?? defaults.rate,
    pollMs: option.pollMs ?? defaults.pollMs,
    pollMaxMs: option.pollMaxMs ?? defaults.pollMaxMs,
    maxLines: option.maxLines ?? defaults.maxLines,
    maxBytes: option.maxBytes ?? defaults.maxBytes
  }
  return { ...s, pollMaxMs: Math.max(s.pollMs, s.pollMaxMs) }
}

const terminal = new Set(["completed", "failed", "expired", "cancelled"])

const OutputLine = Schema.Struct({
  custom_id: Schema.String,
  response: Schema.optional(
    Schema.NullOr(Schema.Struct({ status_code: Schema.Number, body: Schema.optional(Schema.Unknown) }))
  ),
  error: Schema.optional(
    Schema.NullOr(
      Schema.Struct({
        code: Schema.optional(Schema.NullOr(Schema.String)),
        message: Schema.optional(Schema.NullOr(Schema.String))
      })
    )
  )
})
const decodeLine = Schema.decodeUnknownEither(Schema.parseJson(OutputLine))

const errorMessage = (body: unknown): string | undefined => {
  if (typeof body !== "object" || body === null || !("error" in body)) return undefined
  const e = body.error
  return typeof e === "object" && e !== null && "message" in e && typeof e.message === "string" ? e.message : undefined
}

/** The codes of lines a batch never ran because it expired or was cancelled: unanswered, not failed. */
const unrun = new Set(["batch_expired", "batch_cancelled"])

/** Every line's outcome in an output or error file's text, by custom id (lines never run are left out). */
export const outcomes = (text: string, into: Map<string, Batch.Outcome>): void => {
  for (const line of text.split("\n")) {
    if (line.trim() === "") continue
    const decoded = decodeLine(line)
    if (decoded._tag === "Left") continue
    const { custom_id, response, error } = decoded.right
    if (response == null && typeof error?.code === "string" && unrun.has(error.code)) continue
    if (response != null && response.status_code >= 200 && response.status_code < 300) {
      into.set(custom_id, { ok: true, body: response.body })
    } else {
      const message = errorMessage(response?.body) ?? error?.message ?? "no answer and no error message"
      into.set(custom_id, {
        ok: false,
        error: message,
        ...(response != null ? { status: response.status_code } : {})
      })
    }
  }
}

export interface Parts {
  readonly sdk: typeof import("openai")
  readonly client: OpenAIClient
  readonly ctx: Failure.CallContext
  readonly at: string
  readonly settings: Batch.Settings
  /** One guarded request (deadline, retries, rate limit) to the provider. */
  readonly request: <A>(send: (signal: AbortSignal) => Promise<A>) => Effect.Effect<A, Errors.ModelError>
}

export const endpoint = ({ sdk, client, ctx, at, settings: s, request }: Parts): Batch.Endpoint => {
  const statusOf = (b: OpenAIClient.Batches.Batch): Batch.Status => ({
    id: b.id,
    state: b.status,
    terminal: terminal.has(b.status),
    total: b.request_counts?.total ?? 0,
    completed: b.request_counts?.completed ?? 0,
    failed: b.request_counts?.failed ?? 0,
    createdAt: b.created_at,
    ...(typeof b.expires_at === "number" ? { expiresAt: b.expires_at } : {}),
    ...(b.status === "failed" && (b.errors?.data?.length ?? 0) > 0
      ? {
          error: b
            .errors!.data!.slice(0, 3)
            .map((e) => `${e.line != null ? `line ${e.line}: ` : ""}${Failure.scrub(e.message ?? "", ctx.secrets)}`)
            .join("; ")
        }
      : {})
  })
  const text = (fileId: string) => request((signal) => client.files.content(fileId, { signal }).then((r) => r.text()))
  return {
    provider: ctx.provider,
    model: ctx.model,
    at,
    ...s,
    line: (r) => JSON.stringify({ custom_id: r.key, method: "POST", url: "/v1/chat/completions", body: r.body }),
    upload: (jsonl) =>
      Effect.flatMap(
        Effect.promise(() => sdk.toFile(Buffer.from(jsonl, "utf8"), "cupid-lab-wave.jsonl")),
        (file) => request((signal) => client.files.create({ file, purpose: "batch" }, { signal }))
      ).pipe(Effect.map((f) => f.id)),
    create: (fileId) =>
      request((signal) =>
        client.batches.create(
          { input_file_id: fileId, endpoint: "/v1/chat/completions", completion_window: "24h" },
          { signal }
        )
      ).pipe(Effect.map((b) => b.id)),
    findByFile: (fileId) =>
      request(async (signal) => {
        let scanned = 0
        for await (const b of client.batches.list({ limit: 100 }, { signal })) {
          if (b.input_file_id === fileId) return b.id
          // Newest first: a batch made after a crash is among the latest.
          if (++scanned >= 1_000) return undefined
        }
        return undefined
      }),
    status: (id) => request((signal) => client.batches.retrieve(id, { signal })).pipe(Effect.map(statusOf)),
    results: (id) =>
      Effect.gen(function* () {
        const b = yield* request((signal) => client.batches.retrieve(id, { signal }))
        const out = new Map<string, Batch.Outcome>()
        // Errors first: a line in both files (a retried line) counts by its answer.
        if (b.error_file_id != null) outcomes(yield* text(b.error_file_id), out)
        if (b.output_file_id != null) outcomes(yield* text(b.output_file_id), out)
        return out as ReadonlyMap<string, Batch.Outcome>
      }),
    cancel: (id) => Effect.asVoid(request((signal) => client.batches.cancel(id, { signal })))
  }
}
