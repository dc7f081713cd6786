import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import OpenAI, { type APIError, toFile } from "openai"
import { Faults } from "../src/testing/LoopbackServer.js"
import * as OpenAiServer from "../src/testing/OpenAiServer.js"

const line = (customId: string, content = `question ${customId}`, model = "test-model") => ({
  custom_id: customId,
  method: "POST",
  url: "/v1/chat/completions",
  body: { model, messages: [{ role: "user" as const, content }], temperature: 0 }
})

const jsonl = (rows: ReadonlyArray<unknown>) =>
  rows.map((r) => (typeof r === "string" ? r : JSON.stringify(r))).join("\n") + "\n"

const clientOf = (server: OpenAiServer.OpenAiServer) =>
  new OpenAI({ baseURL: server.baseURL, apiKey: "test-key", maxRetries: 0 })

const upload = async (client: OpenAI, text: string) =>
  client.files.create({ file: await toFile(Buffer.from(text), "wave.jsonl"), purpose: "batch" })

const submit = async (client: OpenAI, text: string, metadata: Record<string, string> | null = null) => {
  const file = await upload(client, text)
  return client.batches.create({
    input_file_id: file.id,
    endpoint: "/v1/chat/completions",
    completion_window: "24h",
    metadata
  })
}

interface OutputLine {
  readonly id: string
  readonly custom_id: string
  readonly response: { readonly status_code: number; readonly request_id: string; readonly body: unknown } | null
  readonly error: { readonly code: string; readonly message: string } | null
}

const linesOf = async (client: OpenAI, fileId: string | null | undefined): Promise<ReadonlyArray<OutputLine>> => {
  if (fileId === null || fileId === undefined) return []
  const text = await (await client.files.content(fileId)).text()
  return text
    .split("\n")
    .filter((l) => l !== "")
    .map((l) => JSON.parse(l) as OutputLine)
}

/** Status and request counts of each successive retrieve. */
const poll = async (client: OpenAI, batchId: string, times: number) => {
  const seen: Array<[string, number, number, number]> = []
  for (let i = 0; i < times; i++) {
    const b = await client.batches.retrieve(batchId)
    seen.push([b.status, b.request_counts!.total, b.request_counts!.completed, b.request_counts!.failed])
  }
  return seen
}

const rejection = (promise: Promise<unknown>) =>
  promise.then(
    () => expect.unreachable("expected the call to fail"),
    (e: unknown) => e as APIError
  )

describe("OpenAiServer batch API, through the openai SDK", () => {
  it.scopedLive("validating, then in_progress with partial counts, then completed; output not in input order", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        chat: (body) => `answer to ${body.messages.at(-1)!.content}`,
        batch: { validatingPolls: 1, linesPerPoll: 2 }
      })
      yield* Effect.promise(async () => {
        const client = clientOf(server)
        const ids = ["a", "b", "c", "d", "e"]
        const text = jsonl(ids.map((id) => line(id)))
        const file = await upload(client, text)
        expect(file).toMatchObject({
          id: "file-1",
          object: "file",
          bytes: Buffer.byteLength(text),
          filename: "wave.jsonl",
          purpose: "batch",
          status: "processed"
        })
        expect(server.requests[0]!.headers["content-type"]).toMatch(/^multipart\/form-data; boundary=/)
        const created = await client.batches.create({
          input_file_id: file.id,
          endpoint: "/v1/chat/completions",
          completion_window: "24h",
          metadata: { wave: "1" }
        })
        expect(created).toMatchObject({
          id: "batch_1",
          object: "batch",
          endpoint: "/v1/chat/completions",
          input_file_id: "file-1",
          completion_window: "24h",
          status: "validating",
          output_file_id: null,
          error_file_id: null,
          in_progress_at: null,
          completed_at: null,
          request_counts: { total: 0, completed: 0, failed: 0 },
          metadata: { wave: "1" },
          errors: null
        })
        expect(created.expires_at).toBe(created.created_at + 86_400)
        expect(await poll(client, "batch_1", 5)).toStrictEqual([
          ["validating", 0, 0, 0],
          ["in_progress", 5, 2, 0],
          ["in_progress", 5, 4, 0],
          ["completed", 5, 5, 0],
          ["completed", 5, 5, 0]
        ])
        const done = await client.batches.retrieve("batch_1")
        expect(done.in_progress_at).toBeGreaterThan(done.created_at)
        expect(done.completed_at).toBeGreaterThan(done.in_progress_at!)
        expect(done.error_file_id).toBeNull()
        const output = await linesOf(client, done.output_file_id)
        expect(output.map((l) => l.custom_id)).toStrictEqual(["e", "d", "c", "b", "a"])
        expect(new Set(output.map((l) => l.id)).size).toBe(5)
        expect(server.requests.filter((r) => r.path === "/v1/chat/completions")).toHaveLength(0)

        const sync = await client.chat.completions.create(line("a").body)
        const a = output.find((l) => l.custom_id === "a")!
        expect(a).toMatchObject({ response: { status_code: 200, body: { ...sync, id: expect.any(String) } } })
        expect(a.response!.request_id).toEqual(expect.any(String))
        expect(a.error).toBeNull()
        expect(server.batches.customIds("batch_1")).toStrictEqual(ids)
        expect(server.batches.file("file-1")).toBe(text)
        expect(server.batches.get("batch_1")).toStrictEqual(server.batches.all()[0])
      })
    })
  )

  it.scopedLive("failed lines go to the error file with the scripted status; counts say so", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        chat: (body) => {
          if (body.messages[0]!.content === "boom") throw new Error("model crashed")
          return "fine"
        },
        batch: {
          failLine: (customId) =>
            customId === "b" ? { status: 400, message: "too long", code: "context_length_exceeded" } : undefined
        }
      })
      yield* Effect.promise(async () => {
        const client = clientOf(server)
        const batch = await submit(client, jsonl([line("a"), line("b"), line("c", "boom")]))
        expect(await poll(client, batch.id, 1)).toStrictEqual([["completed", 3, 1, 2]])
        const done = await client.batches.retrieve(batch.id)
        expect((await linesOf(client, done.output_file_id)).map((l) => l.custom_id)).toStrictEqual(["a"])
        const errors = await linesOf(client, done.error_file_id)
        expect(errors.map((l) => [l.custom_id, l.response?.status_code, l.error])).toStrictEqual([
          ["c", 500, null],
          ["b", 400, null]
        ])
        expect(errors[1]!.response!.body).toStrictEqual({
          error: { message: "too long", type: "invalid_request_error", param: null, code: "context_length_exceeded" }
        })
        expect(errors[0]!.response!.body).toMatchObject({
          error: { message: "handler failed: model crashed", type: "server_error" }
        })
      })
    })
  )

  it.scopedLive("an expired batch keeps its finished lines; unfinished ones are batch_expired errors", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ batch: { linesPerPoll: 1, expireAfterPolls: 2 } })
      yield* Effect.promise(async () => {
        const client = clientOf(server)
        const batch = await submit(client, jsonl(["a", "b", "c", "d"].map((id) => line(id))))
        expect(await poll(client, batch.id, 4)).toStrictEqual([
          ["in_progress", 4, 1, 0],
          ["in_progress", 4, 2, 0],
          ["expired", 4, 2, 0],
          ["expired", 4, 2, 0]
        ])
        const done = await client.batches.retrieve(batch.id)
        expect(done.expired_at).toEqual(expect.any(Number))
        expect((await linesOf(client, done.output_file_id)).map((l) => l.custom_id)).toStrictEqual(["b", "a"])
        const unfinished = await linesOf(client, done.error_file_id)
        expect(unfinished.map((l) => [l.custom_id, l.response, l.error?.code])).toStrictEqual([
          ["c", null, "batch_expired"],
          ["d", null, "batch_expired"]
        ])
      })
    })
  )

  it.scopedLive("unfinished: omitted leaves unfinished lines out of both files; a held batch can expire empty", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ batch: { hold: true, expireAfterPolls: 1, unfinished: "omitted" } })
      yield* Effect.promise(async () => {
        const client = clientOf(server)
        const batch = await submit(client, jsonl([line("a")]))
        expect(await poll(client, batch.id, 2)).toStrictEqual([
          ["in_progress", 1, 0, 0],
          ["expired", 1, 0, 0]
        ])
        expect(server.batches.get(batch.id)).toMatchObject({ output_file_id: null, error_file_id: null })
      })
    })
  )

  it.scopedLive("a held batch waits for release; a cancelled one keeps its finished lines", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ batch: { hold: true, linesPerPoll: 1 } })
      yield* Effect.promise(async () => {
        const client = clientOf(server)
        const first = await submit(client, jsonl([line("a"), line("b")]))
        const second = await submit(client, jsonl([line("c"), line("d"), line("e")]))
        expect(await poll(client, first.id, 2)).toStrictEqual([
          ["in_progress", 2, 0, 0],
          ["in_progress", 2, 0, 0]
        ])
        server.batches.release(first.id)
        expect(await poll(client, first.id, 2)).toStrictEqual([
          ["in_progress", 2, 1, 0],
          ["completed", 2, 2, 0]
        ])
        expect(await poll(client, second.id, 1)).toStrictEqual([["in_progress", 3, 0, 0]])
        server.batches.release()
        expect(await poll(client, second.id, 1)).toStrictEqual([["in_progress", 3, 1, 0]])

        const cancelling = await client.batches.cancel(second.id)
        expect(cancelling.status).toBe("cancelling")
        expect(cancelling.cancelling_at).toEqual(expect.any(Number))
        expect(await poll(client, second.id, 2)).toStrictEqual([
          ["cancelled", 3, 1, 0],
          ["cancelled", 3, 1, 0]
        ])
        const done = await client.batches.retrieve(second.id)
        expect((await linesOf(client, done.output_file_id)).map((l) => l.custom_id)).toStrictEqual(["c"])
        expect((await linesOf(client, done.error_file_id)).map((l) => [l.custom_id, l.error?.code])).toStrictEqual([
          ["d", "batch_cancelled"],
          ["e", "batch_cancelled"]
        ])
        const again = await rejection(client.batches.cancel(second.id))
        expect(again.status).toBe(409)
        const inputs = server.batches.all().flatMap((b) => server.batches.customIds(b.id))
        expect(new Set(inputs).size).toBe(inputs.length)
      })
    })
  )

  it.scopedLive("an invalid input file, or failBatch, makes the batch failed with errors", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({
        batch: {
          failBatch: (b) =>
            b.metadata?.["fail"] === "yes"
              ? { code: "token_limit_exceeded", message: "Enqueued token limit reached." }
              : undefined
        }
      })
      yield* Effect.promise(async () => {
        const client = clientOf(server)
        const text = jsonl([
          line("a"),
          "{not json",
          { ...line("b"), custom_id: 7 },
          line("a"),
          { ...line("c"), url: "/v1/embeddings" },
          line("d", "hi", "other-model"),
          { ...line("e"), body: { model: "test-model" } }
        ])
        const file = await upload(client, text)
        expect(file.status).toBe("processed")
        const batch = await client.batches.create({
          input_file_id: file.id,
          endpoint: "/v1/chat/completions",
          completion_window: "24h"
        })
        const failed = await client.batches.retrieve(batch.id)
        expect(failed).toMatchObject({
          status: "failed",
          output_file_id: null,
          error_file_id: null,
          request_counts: { total: 0, completed: 0, failed: 0 }
        })
        expect(failed.failed_at).toEqual(expect.any(Number))
        expect(failed.errors!.object).toBe("list")
        expect(failed.errors!.data!.map((e) => [e.line, e.code, e.param])).toStrictEqual([
          [2, "invalid_json_line", null],
          [3, "invalid_request", "custom_id"],
          [4, "duplicate_custom_id", "custom_id"],
          [5, "invalid_request", "url"],
          [6, "mismatched_model", "body.model"],
          [7, "invalid_request", "body.messages"]
        ])
        expect(failed.errors!.data!.every((e) => typeof e.message === "string" && e.message !== "")).toBe(true)
        expect(server.batches.customIds(batch.id)).toStrictEqual(["a", "a", "c", "d", "e"])

        const empty = await submit(client, "")
        expect((await client.batches.retrieve(empty.id)).errors!.data).toMatchObject([
          { code: "empty_file", line: null }
        ])

        const refused = await submit(client, jsonl([line("a")]), { fail: "yes" })
        expect(await client.batches.retrieve(refused.id)).toMatchObject({
          status: "failed",
          errors: { data: [{ code: "token_limit_exceeded", line: null, message: "Enqueued token limit reached." }] }
        })
        expect(server.batches.get(refused.id)!.request_counts.completed).toBe(0)
      })
    })
  )

  it.scopedLive("lists newest first with cursor pagination, without moving any batch", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make()
      yield* Effect.promise(async () => {
        const client = clientOf(server)
        for (let i = 0; i < 5; i++) await submit(client, jsonl([line(`q${i}`)]))
        const page = await client.batches.list({ limit: 2 })
        expect(page.data.map((b) => b.id)).toStrictEqual(["batch_5", "batch_4"])
        expect(page.has_more).toBe(true)
        const all: Array<string> = []
        for await (const b of client.batches.list({ limit: 2 })) all.push(b.id)
        expect(all).toStrictEqual(["batch_5", "batch_4", "batch_3", "batch_2", "batch_1"])
        expect(server.requests.filter((r) => r.path === "/v1/batches" && r.method === "GET")).toHaveLength(4)
        expect(server.batches.all().map((b) => b.status)).toStrictEqual(Array(5).fill("validating"))

        const raw = (query: string): Promise<unknown> =>
          fetch(`${server.baseURL}/batches?${query}`).then((r) => r.json())
        expect(await raw("limit=2")).toMatchObject({ first_id: "batch_5", last_id: "batch_4", has_more: true })
        expect(await raw("limit=2&after=batch_2")).toStrictEqual({
          object: "list",
          data: [server.batches.get("batch_1")],
          first_id: "batch_1",
          last_id: "batch_1",
          has_more: false
        })
      })
    })
  )

  it.scopedLive("unknown ids answer 404 with the OpenAI error body; bad create bodies 400", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make()
      yield* Effect.promise(async () => {
        const client = clientOf(server)
        const missing = [
          client.batches.retrieve("batch_9"),
          client.batches.cancel("batch_9"),
          client.files.content("file-9"),
          client.files.retrieve("file-9"),
          client.batches.create({ input_file_id: "file-9", endpoint: "/v1/chat/completions", completion_window: "24h" })
        ]
        for (const call of missing) {
          const e = await rejection(call)
          expect(e).toBeInstanceOf(OpenAI.NotFoundError)
          expect(e.error).toMatchObject({ message: expect.any(String), type: "invalid_request_error", code: null })
        }
        const file = await upload(client, jsonl([line("a")]))
        const wrongEndpoint = await rejection(
          client.batches.create({ input_file_id: file.id, endpoint: "/v1/embeddings", completion_window: "24h" })
        )
        expect(wrongEndpoint.status).toBe(400)
      })
    })
  )

  it.scopedLive("scripted faults apply to the batch routes; a faulted retrieve does not move the batch", () =>
    Effect.gen(function* () {
      const server = yield* OpenAiServer.make({ faults: [Faults.serverError(500, "upload broke")] })
      yield* Effect.promise(async () => {
        const client = clientOf(server)
        const text = jsonl([line("a")])
        const broken = await rejection(upload(client, text))
        expect([broken.status, broken.message]).toStrictEqual([500, "500 upload broke"])
        const batch = await submit(client, text)
        expect(batch.input_file_id).toBe("file-1")

        server.scriptFaults(Faults.status(503, { error: { message: "busy" } }))
        expect((await rejection(client.batches.retrieve(batch.id))).status).toBe(503)
        expect(server.batches.get(batch.id)!.status).toBe("validating")
        const done = await client.batches.retrieve(batch.id)
        expect(done.status).toBe("completed")

        server.scriptFaults(Faults.trickle(1))
        const [answer] = await linesOf(client, done.output_file_id)
        expect(answer!.custom_id).toBe("a")
        expect(server.requests.map((r) => [r.method, r.path, r.fault])).toStrictEqual([
          ["POST", "/v1/files", "server-error"],
          ["POST", "/v1/files", undefined],
          ["POST", "/v1/batches", undefined],
          ["GET", "/v1/batches/batch_1", "status"],
          ["GET", "/v1/batches/batch_1", undefined],
          ["GET", "/v1/files/file-2/content", "trickle"]
        ])
      })
    })
  )
})
