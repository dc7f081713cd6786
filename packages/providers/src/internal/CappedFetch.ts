/**
 * `fetch` with a limit on the size of a response body: a server that streams an answer without
 * end (a model in a loop, a proxy gone wrong) fails the request once `maxBytes` bytes have come,
 * instead of filling the process's memory. A declared `content-length` over the limit fails before
 * any byte of the body is read; one within it, on a body sent as is (no `content-encoding`), is the
 * whole body (the HTTP client reads no more than it declares), so that response passes untouched.
 *
 * @example
 * const client = new OpenAI({ fetch: CappedFetch.make(64 * 1024 * 1024) })
 */

/** The body passed its limit; carries both sizes for the message. */
export class TooLarge extends Error {
  constructor(
    readonly bytes: number,
    readonly maxBytes: number
  ) {
    super(`the response is larger than ${maxBytes} bytes (${bytes} or more)`)
  }
}

export const make =
  (maxBytes: number, inner: typeof fetch = fetch): typeof fetch =>
  async (input, init) => {
    const response = await inner(input, init)
    const declared = Number(response.headers.get("content-length") ?? Number.NaN)
    if (Number.isFinite(declared) && declared > maxBytes) {
      await response.body?.cancel()
      throw new TooLarge(declared, maxBytes)
    }
    if (response.body === null) return response
    // A compressed body is counted as it comes out of the decoder: its declared length is the wire's.
    const encoding = response.headers.get("content-encoding")
    if (Number.isFinite(declared) && (encoding === null || encoding === "identity")) return response
    let seen = 0
    const limited = response.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          seen += chunk.byteLength
          if (seen > maxBytes) controller.error(new TooLarge(seen, maxBytes))
          else controller.enqueue(chunk)
        }
      })
    )
    return new Response(limited, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers
    })
  }

/** The TooLarge behind an error a client library wrapped (its `cause` chain), if any. */
export const tooLarge = (error: unknown): TooLarge | undefined => {
  for (let e: unknown = error, depth = 0; e !== undefined && e !== null && depth < 5; depth++) {
    if (e instanceof TooLarge) return e
    e = typeof e === "object" && "cause" in e ? (e as { cause: unknown }).cause : undefined
  }
  return undefined
}
