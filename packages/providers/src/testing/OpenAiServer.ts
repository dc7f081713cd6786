/**
 * A loopback server speaking the OpenAI REST shapes (`POST /v1/chat/completions`,
 * `POST /v1/embeddings`), answering through functions the test supplies, with the scripted faults
 * and request recording of {@link LoopbackServer}. Point the `openai` provider (or the SDK) at
 * `server.baseURL`.
 *
 * Defaults: chat answers `echo: <last user message>`; embeddings are {@link hashVector} of each
 * text; usage counts whitespace-separated words (prompt: all message contents; completion: the
 * answer; embeddings: all inputs), unless `usage: false` drops usage fields from every answer.
 *
 * @example
 * import { OpenAiServer } from "@cupid-lab/providers/testing"
 * const server = yield* OpenAiServer.make({ chat: (body) => `you said ${body.messages.length} things` })
 * const models = { gpt: { provider: "openai", model: "test-model", baseURL: server.baseURL } }
 */
import { Effect, type Scope } from "effect"
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
}

export interface OpenAiServer extends LoopbackServer.LoopbackServer {
  /** `url + "/v1"`, what the SDK and the provider's `baseURL` expect. */
  readonly baseURL: string
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
  const chat = async (raw: unknown, request: LoopbackServer.RecordedRequest) => {
    const body = raw as ChatBody
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
      id: `chatcmpl-${request.index}`,
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
    routes: { "POST /v1/chat/completions": chat, "POST /v1/embeddings": embeddings },
    errorBody: (status, message) => ({
      error: { message, type: status === 429 ? "rate_limit_exceeded" : "server_error", code: null }
    }),
    ...(options.faults !== undefined ? { faults: options.faults } : {}),
    ...(options.faultFor !== undefined ? { faultFor: options.faultFor } : {})
  }).pipe(Effect.map((server) => LoopbackServer.extend(server, { baseURL: `${server.url}/v1` })))
}
