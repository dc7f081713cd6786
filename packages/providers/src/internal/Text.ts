import { type LanguageModel, Tokens } from "@cupid-lab/core"

import { ParseResult } from "effect"

/**
 * Token estimates for servers that omit usage: each message counts its text plus 4 for the chat
 * template around it (the same rule the dry run uses), so estimates and dry runs agree.
 */
export const estimatePromptTokens = (messages: ReadonlyArray<LanguageModel.ChatMessage>): number =>
  messages.reduce((n, m) => n + Tokens.count(m.content) + 4, 0)

export const estimateTextTokens = (texts: ReadonlyArray<string>): number =>
  texts.reduce((n, t) => n + Tokens.count(t), 0)

/** Consecutive slices of at most `size` items. */
export const chunks = <A>(items: ReadonlyArray<A>, size: number): Array<ReadonlyArray<A>> => {
  const out: Array<ReadonlyArray<A>> = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}

/** Little-endian float32 values packed in base64, as OpenAI-compatible servers may send embeddings. */
export const decodeBase64Floats = (b64: string): Float32Array => {
  const bytes = Buffer.from(b64, "base64")
  const out = new Float32Array(Math.floor(bytes.length / 4))
  for (let i = 0; i < out.length; i++) out[i] = bytes.readFloatLE(i * 4)
  return out
}

/** A one-line description of why a response did not match its schema. */
export const describeParseError = (error: ParseResult.ParseError): string =>
  ParseResult.ArrayFormatter.formatErrorSync(error)
    .slice(0, 3)
    .map((i) => `${i.path.length === 0 ? "(body)" : i.path.join(".")}: ${i.message}`)
    .join("; ")

/** The type of `T` after {@link definedOnly}: keys that may be undefined become optional. */
export type Defined<T> = { [K in keyof T as undefined extends T[K] ? never : K]: T[K] } & {
  [K in keyof T as undefined extends T[K] ? K : never]?: Exclude<T[K], undefined>
}

/** Drop undefined entries, so a request body only carries what was set. */
export const definedOnly = <T extends Record<string, unknown>>(entries: T): Defined<T> =>
  Object.fromEntries(Object.entries(entries).filter(([, v]) => v !== undefined)) as Defined<T>
