/**
 * A loopback server speaking the OpenAI REST shapes (`POST /v1/chat/completions`,
 * `POST /v1/embeddings`, and the Batch API: `POST /v1/files`, `GET /v1/files/{id}[/content]`,
 * `POST /v1/batches`, `GET /v1/batches[/{id}]`, `POST /v1/batches/{id}/cancel`), answering through
 * functions the test supplies, with the scripted faults and request recording of
 * {@link LoopbackServer} on every route. Point the `openai` provider (or the SDK) at `server.baseURL`.
 *
 * Defaults: chat answers `echo: <last user message>`; embeddings are {@link hashVector} of each
 * text; usage counts whitespace-separated words (prompt: all message contents; completion: the
 * answer; embeddings: all inputs), unless `usage: false` drops usage fields from every answer.
 *
 * Batches answer each line with the same `chat` function as the synchronous route, so scripted
 * answers are the same either way. A batch moves only when it is retrieved (`GET /v1/batches/{id}`),
 * never with time; `options.batch` ({@link BatchOptions}) sets how: each retrieve first spends one
 * of `validatingPolls`, then validates (an invalid input file or `failBatch` gives `failed` with
 * `errors`), then finishes `linesPerPoll` lines (none while `hold` is on); the retrieve that finishes
 * the last line shows `completed`. After `expireAfterPolls` retrieves showing `in_progress`, the next
 * shows `expired`; a cancel shows `cancelling`, the next retrieve `cancelled`. Finished lines are in
 * the output file (answers) or the error file (`failLine`, a throwing `chat`), in reverse finishing
 * order so that a client relying on input order is caught; lines an expiry or cancel left
 * unfinished are written to the error file as `batch_expired` / `batch_cancelled` errors (as the
 * current API documents) unless `unfinished: "omitted"` leaves them out of both files (as earlier
 * API versions did). `server.batches` shows every batch and file without moving anything.
 *
 * @example
 * import { OpenAiServer } from "@cupid-lab/providers/testing"
 * const server = yield* OpenAiServer.make({ chat: (body) => `you said ${body.messages.length} things` })
 * const models = { gpt: { provider: "openai", model: "test-model", baseURL: server.baseURL } }
 *
 * @example
 * const server = yield* OpenAiServer.make({
 *   batch: {
 *     validatingPolls: 1, // retrieve 1: validating
 *     linesPerPoll: 2, // retrieve 2: in_progress, 2 lines done; retrieve 3: 4 done; ...
 *     failLine: (customId) => (customId === "q7" ? { status: 400, message: "too long" } : undefined),
 *     expireAfterPolls: 3 // retrieve 5: expired; of a 10-line file, 6 lines finished, 4 batch_expired
 *   }
 * })
 * // client.files.create({ file: await toFile(Buffer.from(jsonl), "wave.jsonl"), purpose: "batch" }), ...
 * server.batches.customIds("batch_1") // the custom_ids submitted in batch_1
 */
import { Effect, type Scope } from "effect"
import * as BatchApi from "./internal/OpenAiBatches.js"
import * as LoopbackServer from "./LoopbackServer.js"

export { Faults } from "./LoopbackServer.js"
export type { Fault, RecordedRequest } from "./LoopbackServer.js"

export interface ChatBody {
  readonly model: string
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly [key: string]: unknown
}

export interface EmbeddingsBody {
  readonly model: string
  readonly input: string | ReadonlyArray<string>
  readonly [key: string]: unknown
}

export interface ChatReply {
  readonly content: string
  /** `null` leaves usage out of this answer; absent means counted words. */
  readonly usage?: { readonly promptTokens: number; readonly completionTokens: number } | null
  readonly finishReason?: string
}

export interface LineFailure {
  /** The line's `response.status_code`, e.g. 400 or 500. */
  readonly status: number
  readonly message: string
  /** The error body's `code` (default null). */
  readonly code?: string
}

export interface BatchError {
  readonly code: string
  /** 1-based line of the input file, or null for the whole batch. */
  readonly line: number | null
  readonly message: string
  readonly param: string | null
}

/** How batches progress: counted in retrieves of the batch, never in time. */
export interface BatchOptions {
  /** Retrieves that still show `validating` (default 0). */
  readonly validatingPolls?: number
  /** Lines finished by each retrieve of an `in_progress` batch (default: all of them). */
  readonly linesPerPoll?: number
  /** New batches finish no line (but still validate, count polls and expire) until `server.batches.release`. */
  readonly hold?: boolean
  /** A line's failure instead of its answer (the `chat` function is not asked); it goes to the error file. */
  readonly failLine?: (customId: string, body: ChatBody) => LineFailure | undefined
  /** After this many retrieves showing `in_progress`, the next shows `expired` (default: never). */
  readonly expireAfterPolls?: number
  /** Fails a valid batch as a whole when it leaves `validating`, e.g. `{ code: "token_limit_exceeded", ... }`. */
  readonly failBatch?: (batch: {
    readonly id: string
    readonly customIds: ReadonlyArray<string>
    readonly metadata: Readonly<Record<string, string>> | null
  }) => { readonly code: string; readonly message: string } | undefined
  /** Lines an expiry or cancel left unfinished: error-file lines (default) or in neither file. */
  readonly unfinished?: "error-file" | "omitted"
}

export type BatchStatus =
  "validating" | "failed" | "in_progress" | "finalizing" | "completed" | "expired" | "cancelling" | "cancelled"

/** The Batch object on the wire. */
export interface BatchObject {
  readonly id: string
  readonly object: "batch"
  readonly endpoint: string
  readonly errors: { readonly object: "list"; readonly data: ReadonlyArray<BatchError> } | null
  readonly input_file_id: string
  readonly completion_window: string
  readonly status: BatchStatus
  readonly output_file_id: string | null
  readonly error_file_id: string | null
  readonly created_at: number
  readonly in_progress_at: number | null
  readonly expires_at: number
  readonly finalizing_at: number | null
  readonly completed_at: number | null
  readonly failed_at: number | null
  readonly expired_at: number | null
  readonly cancelling_at: number | null
  readonly cancelled_at: number | null
  readonly request_counts: { readonly total: number; readonly completed: number; readonly failed: number }
  readonly metadata: Readonly<Record<string, string>> | null
}

/** The File object on the wire. */
export interface FileObject {
  readonly id: string
  readonly object: "file"
  readonly bytes: number
  readonly created_at: number
  readonly expires_at: number | null
  readonly filename: string
  readonly purpose: string
  readonly status: "processed"
  readonly status_details: null
}

/** What the server holds, for assertions; reading it never moves a batch. */
export interface Batches {
  /** Every batch as a retrieve would show it before moving it, oldest first. */
  readonly all: () => ReadonlyArray<BatchObject>
  readonly get: (batchId: string) => BatchObject | undefined
  /** Lets one held batch (or every batch so far) finish lines on its next retrieves. */
  readonly release: (batchId?: string) => void
  /** A file's text: input, output or error file. */
  readonly file: (fileId: string) => string | undefined
  /** The custom_ids of a batch's input file, in file order (the valid string ones of an invalid file). */
  readonly customIds: (batchId: string) => ReadonlyArray<string>
}

export interface Options {
  readonly chat?: (
    body: ChatBody,
    request: LoopbackServer.RecordedRequest
  ) => string | ChatReply | Promise<string | ChatReply>
  readonly embed?: (text: string, body: EmbeddingsBody) => ReadonlyArray<number>
  /** False: no usage fields in any answer (clients must estimate). */
  readonly usage?: boolean
  readonly faults?: ReadonlyArray<LoopbackServer.Fault>
  readonly faultFor?: (request: LoopbackServer.RecordedRequest) => LoopbackServer.Fault | undefined
  readonly batch?: BatchOptions
}

export interface OpenAiServer extends LoopbackServer.LoopbackServer {
  /** `url + "/v1"`, what the SDK and the provider's `baseURL` expect. */
  readonly baseURL: string
  readonly batches: Batches
}

export const words = (text: string): number => text.split(/\s+/).filter((w) => w !== "").length

/**
 * A deterministic vector for a text: component i is a hash of (i, text) mapped into [-1, 1), so
 * tests can compute what the server returns.
 */
export const hashVector = (text: string, dims = 8): Array<number> =>
  Array.from({ length: dims }, (_, i) => {
    let h = 2166136261 ^ i
    for (let j = 0; j < text.length; j++) h = Math.imul(h ^ text.charCodeAt(j), 16777619)
    return ((h >>> 0) % 2000) / 1000 - 1
  })

const lastUser = (body: ChatBody) => [...body.messages].reverse().find((m) => m.role === "user")?.content ?? ""

export const make = (options: Options = {}): Effect.Effect<OpenAiServer, never, Scope.Scope> => {
  const withUsage = options.usage !== false
  const completion = async (body: ChatBody, request: LoopbackServer.RecordedRequest, id: string) => {
    const given = options.chat === undefined ? `echo: ${lastUser(body)}` : await options.chat(body, request)
    const reply: ChatReply = typeof given === "string" ? { content: given } : given
    const usage =
      reply.usage === null || !withUsage
        ? undefined
        : (reply.usage ?? {
            promptTokens: body.messages.reduce((n, m) => n + words(m.content), 0),
            completionTokens: words(reply.content)
          })
    return {
      id,
      object: "chat.completion",
      created: 1_700_000_000,
      model: body.model,
      choices: [
        {
          index: 0,
          message: { role: "assistant", content: reply.content },
          finish_reason: reply.finishReason ?? "stop"
        }
      ],
      ...(usage !== undefined
        ? {
            usage: {
              prompt_tokens: usage.promptTokens,
              completion_tokens: usage.completionTokens,
              total_tokens: usage.promptTokens + usage.completionTokens
            }
          }
        : {})
    }
  }
  const chat = (raw: unknown, request: LoopbackServer.RecordedRequest) =>
    completion(raw as ChatBody, request, `chatcmpl-${request.index}`)
  const batches = BatchApi.make(options.batch ?? {}, completion)
  const embeddings = (raw: unknown) => {
    const body = raw as EmbeddingsBody
    const inputs = typeof body.input === "string" ? [body.input] : body.input
    const embed = options.embed ?? ((t: string) => hashVector(t))
    const total = inputs.reduce((n, t) => n + words(t), 0)
    return {
      object: "list",
      model: body.model,
      data: inputs.map((t, index) => ({ object: "embedding", index, embedding: embed(t, body) })),
      ...(withUsage ? { usage: { prompt_tokens: total, total_tokens: total } } : {})
    }
  }
  return LoopbackServer.make({
    routes: { "POST /v1/chat/completions": chat, "POST /v1/embeddings": embeddings, ...batches.routes },
    errorBody: (status, message) => ({
      error: { message, type: status === 429 ? "rate_limit_exceeded" : "server_error", code: null }
    }),
    ...(options.faults !== undefined ? { faults: options.faults } : {}),
    ...(options.faultFor !== undefined ? { faultFor: options.faultFor } : {})
  }).pipe(
    Effect.map((server) => LoopbackServer.extend(server, { baseURL: `${server.url}/v1`, batches: batches.handle }))
  )
}
