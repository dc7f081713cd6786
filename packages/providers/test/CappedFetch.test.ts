import { describe, expect, it } from "vitest"
import * as CappedFetch from "../src/internal/CappedFetch.js"

/** A fetch that answers every request with `body` and `headers`, as a server would. */
const answering =
  (body: string | ReadableStream<Uint8Array>, headers: Record<string, string>): typeof fetch =>
  async () =>
    new Response(body, { status: 200, headers })

/** A body sent in `n` chunks of `size` bytes, with no declared length. */
const chunked = (n: number, size: number) =>
  new ReadableStream<Uint8Array>({
    start(controller) {
      for (let i = 0; i < n; i++) controller.enqueue(new Uint8Array(size).fill(97))
      controller.close()
    }
  })

describe("CappedFetch", () => {
  it("hands back a response whose declared length is within the cap, unencoded, as it came", async () => {
    const sent = new Response("x".repeat(10), { headers: { "content-length": "10" } })
    const response = await CappedFetch.make(10, async () => sent)("http://127.0.0.1/")
    expect(response).toBe(sent)
    expect(await response.text()).toBe("x".repeat(10))
  })

  it("fails a declared length over the cap before reading the body", async () => {
    const inner = answering("x".repeat(11), { "content-length": "11" })
    await expect(CappedFetch.make(10, inner)("http://127.0.0.1/")).rejects.toStrictEqual(
      new CappedFetch.TooLarge(11, 10)
    )
  })

  it("counts a body without a declared length as it arrives: 3 chunks of 4 bytes pass a cap of 12 and fail one of 11", async () => {
    expect(await (await CappedFetch.make(12, answering(chunked(3, 4), {}))("http://127.0.0.1/")).text()).toBe(
      "a".repeat(12)
    )
    const over = await CappedFetch.make(11, answering(chunked(3, 4), {}))("http://127.0.0.1/")
    const error = await over.text().then(
      () => undefined,
      (e: unknown) => e
    )
    expect(CappedFetch.tooLarge(error)).toStrictEqual(new CappedFetch.TooLarge(12, 11))
  })

  it("counts an encoded body as it comes out, whatever length the wire declared", async () => {
    // The declared length (the compressed size on the wire) is within the cap; the body read is not.
    const inner = answering(chunked(3, 4), { "content-length": "5", "content-encoding": "gzip" })
    const response = await CappedFetch.make(8, inner)("http://127.0.0.1/")
    const error = await response.text().then(
      () => undefined,
      (e: unknown) => e
    )
    expect(CappedFetch.tooLarge(error)).toStrictEqual(new CappedFetch.TooLarge(12, 8))
  })
})
