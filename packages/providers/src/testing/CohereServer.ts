/**
 * A loopback server speaking Cohere's v2 REST shapes (`POST /v2/chat`, `/v2/embed`, `/v2/rerank`,
 * snake_case on the wire), answering through functions the test supplies, with the scripted faults
 * and request recording of {@link LoopbackServer}. Point the `cohere` provider's `baseURL` (or the
 * SDK's `baseUrl`) at `server.url`.
 *
 * Defaults: chat answers `echo: <last user message>`; embeddings are `hashVector` of each text;
 * rerank scores a document by the number of distinct query words it contains (lower-cased);
 * usage counts whitespace-separated words, unless `usage: false` drops usage and meta fields.
 *
 * @example
 * import { CohereServer } from "@cupid-lab/providers/testing"
 * const server = yield* CohereServer.make({ rerank: (query, doc) => doc.length })
 * const models = { rr: { provider: "cohere", model: "rerank-test", baseURL: server.url } }
 */
import type { Effect, Scope } from "effect"
import * as LoopbackServer from "./LoopbackServer.js"
import { hashVector, words } from "./OpenAiServer.js"

export { Faults } from "./LoopbackServer.js"
export type { Fault, RecordedRequest } from "./LoopbackServer.js"

export interface ChatBody {
  readonly model: string
  readonly messages: ReadonlyArray<{ readonly role: string; readonly content: string }>
  readonly [key: string]: unknown
}

export interface ChatReply {
  readonly content: string
  /** `null` leaves usage out of this answer; absent means counted words. */
  readonly usage?: { readonly inputTokens: number; readonly outputTokens: number } | null
}

export interface Options {
  readonly chat?: (
    body: ChatBody,
    request: LoopbackServer.RecordedRequest
  ) => string | ChatReply | Promise<string | ChatReply>
  readonly embed?: (text: string, body: Record<string, unknown>) => ReadonlyArray<number>
  readonly rerank?: (query: string, document: string) => number
  /** False: no usage or meta fields in any answer (clients must estimate). */
  readonly usage?: boolean
  readonly faults?: ReadonlyArray<LoopbackServer.Fault>
  readonly faultFor?: (request: LoopbackServer.RecordedRequest) => LoopbackServer.Fault | undefined
}

export type CohereServer = LoopbackServer.LoopbackServer

/** Distinct lower-cased query words found among the document's words. */
export const overlap = (query: string, document: string): number => {
  const doc = new Set(document.toLowerCase().split(/\s+/))
  return new Set(
    query
      .toLowerCase()
      .split(/\s+/)
      .filter((w) => w !== "" && doc.has(w))
  ).size
}

const lastUser = (body: ChatBody) => [...body.messages].reverse().find((m) => m.role === "user")?.content ?? ""

export const make = (options: Options = {}): Effect.Effect<CohereServer, never, Scope.Scope> => {
  const withUsage = options.usage !== false
  const chat = async (raw: unknown, request: LoopbackServer.RecordedRequest) => {
    const body = raw as ChatBody
    const given = options.chat === undefined ? `echo: ${lastUser(body)}` : await options.chat(body, request)
    const reply: ChatReply = typeof given === "string" ? { content: given } : given
    const usage =
      reply.usage === null || !withUsage
        ? undefined
        : (reply.usage ?? {
            inputTokens: body.messages.reduce((n, m) => n + words(m.content), 0),
            outputTokens: words(reply.content)
          })
    const units =
      usage === undefined ? undefined : { input_tokens: usage.inputTokens, output_tokens: usage.outputTokens }
    return {
      id: `chat-${request.index}`,
      finish_reason: "COMPLETE",
      message: { role: "assistant", content: [{ type: "text", text: reply.content }] },
      ...(units !== undefined ? { usage: { billed_units: units, tokens: units } } : {})
    }
  }
  const embed = (raw: unknown, request: LoopbackServer.RecordedRequest) => {
    const body = raw as { texts: ReadonlyArray<string> } & Record<string, unknown>
    const vector = options.embed ?? ((t: string) => hashVector(t))
    const total = body.texts.reduce((n, t) => n + words(t), 0)
    return {
      id: `embed-${request.index}`,
      response_type: "embeddings_by_type",
      texts: body.texts,
      embeddings: { float: body.texts.map((t) => vector(t, body)) },
      ...(withUsage ? { meta: { api_version: { version: "2" }, billed_units: { input_tokens: total } } } : {})
    }
  }
  const rerank = (raw: unknown, request: LoopbackServer.RecordedRequest) => {
    const body = raw as { query: string; documents: ReadonlyArray<string>; top_n?: number }
    const score = options.rerank ?? overlap
    const results = body.documents
      .map((d, index) => ({ index, relevance_score: score(body.query, d) }))
      .sort((a, b) => b.relevance_score - a.relevance_score)
      .slice(0, body.top_n ?? body.documents.length)
    const tokens = body.documents.reduce((n, d) => n + words(body.query) + words(d), 0)
    return {
      id: `rerank-${request.index}`,
      results,
      ...(withUsage
        ? {
            meta: { api_version: { version: "2" }, billed_units: { search_units: 1 }, tokens: { input_tokens: tokens } }
          }
        : {})
    }
  }
  return LoopbackServer.make({
    routes: { "POST /v2/chat": chat, "POST /v2/embed": embed, "POST /v2/rerank": rerank },
    errorBody: (_status, message) => ({ id: "error", message }),
    ...(options.faults !== undefined ? { faults: options.faults } : {}),
    ...(options.faultFor !== undefined ? { faultFor: options.faultFor } : {})
  })
}
