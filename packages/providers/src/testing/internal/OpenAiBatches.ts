import { Either, Schema } from "effect"
import type * as LoopbackServer from "../LoopbackServer.js"
import type {
  BatchError,
  BatchObject,
  Batches,
  BatchOptions,
  BatchStatus,
  ChatBody,
  FileObject,
  LineFailure
} from "../OpenAiServer.js"
import { CreateBody, ENDPOINT, firstIssue, type Line, lineError, type Parsed, parseInput } from "./OpenAiBatchInput.js"

/** Answers one chat body as the synchronous route does, under the given completion id. */
export type Complete = (body: ChatBody, request: LoopbackServer.RecordedRequest, id: string) => Promise<unknown>

/** Timestamps count requests from a fixed origin, so they are deterministic and never go back. */
const EPOCH = 1_700_000_000
const DAY = 86_400

interface StoredFile {
  readonly object: FileObject
  readonly bytes: Uint8Array
  readonly parsed: Parsed
}

/** A finished line: an output-file line when `ok`, else an error-file line. */
interface Outcome {
  readonly ok: boolean
  readonly json: string
}

interface State {
  readonly id: string
  readonly serial: number
  readonly inputFileId: string
  readonly metadata: Readonly<Record<string, string>> | null
  readonly input: Parsed
  readonly createdAt: number
  status: BatchStatus
  validatingLeft: number
  inProgressPolls: number
  held: boolean
  readonly outcomes: Array<Outcome>
  errors: ReadonlyArray<BatchError> | null
  readonly at: Partial<Record<BatchStatus, number>>
  outputFileId: string | null
  errorFileId: string | null
  /** Retrieves of one batch run one after another, so a slow `chat` never finishes a line twice. */
  turn: Promise<unknown>
}

/** The API's error body, in a reply or in an error-file line. */
const errorBody = (status: number, message: string, code: string | null = null, param: string | null = null) => ({
  error: { message, type: status >= 500 ? "server_error" : "invalid_request_error", param, code }
})

const openAiError = (status: number, message: string, code: string | null = null, param: string | null = null) =>
  Response.json(errorBody(status, message, code, param), { status })

const errorMessage = (e: unknown) => `handler failed: ${e instanceof Error ? e.message : String(e)}`

const TERMINAL: ReadonlySet<BatchStatus> = new Set(["failed", "completed", "expired", "cancelled"])

export const make = (options: BatchOptions, complete: Complete) => {
  const files = new Map<string, StoredFile>()
  const batches: Array<State> = []
  let fileSerial = 0
  const linesPerPoll = options.linesPerPoll ?? Number.POSITIVE_INFINITY

  const storeFile = (filename: string, purpose: string, bytes: Uint8Array, createdAt: number): FileObject => {
    const id = `file-${++fileSerial}`
    const object: FileObject = {
      id,
      object: "file",
      bytes: bytes.length,
      created_at: createdAt,
      expires_at: createdAt + 30 * DAY,
      filename,
      purpose,
      status: "processed",
      status_details: null
    }
    files.set(id, { object, bytes, parsed: parseInput(Buffer.from(bytes).toString("utf8")) })
    return object
  }

  const view = (s: State): BatchObject => {
    const counted = s.status !== "validating" && !(s.status === "failed" && s.at.in_progress === undefined)
    const completed = s.outcomes.filter((o) => o.ok).length
    return {
      id: s.id,
      object: "batch",
      endpoint: ENDPOINT,
      errors: s.errors === null ? null : { object: "list", data: s.errors },
      input_file_id: s.inputFileId,
      completion_window: "24h",
      status: s.status,
      output_file_id: s.outputFileId,
      error_file_id: s.errorFileId,
      created_at: s.createdAt,
      in_progress_at: s.at.in_progress ?? null,
      expires_at: s.createdAt + DAY,
      finalizing_at: s.at.finalizing ?? null,
      completed_at: s.at.completed ?? null,
      failed_at: s.at.failed ?? null,
      expired_at: s.at.expired ?? null,
      cancelling_at: s.at.cancelling ?? null,
      cancelled_at: s.at.cancelled ?? null,
      request_counts: {
        total: counted ? s.input.lines.length : 0,
        completed,
        failed: s.outcomes.length - completed
      },
      metadata: s.metadata
    }
  }

  const answerLine = async (s: State, line: Line, n: number, request: LoopbackServer.RecordedRequest) => {
    const head = { id: `batch_req_${s.serial}_${n}`, custom_id: line.customId }
    const response = (status_code: number, body: unknown) => ({ status_code, request_id: `req_${s.serial}_${n}`, body })
    const failure: LineFailure | undefined = options.failLine?.(line.customId, line.body)
    if (failure !== undefined) {
      const body = errorBody(failure.status, failure.message, failure.code ?? null)
      return { ok: false, json: JSON.stringify({ ...head, response: response(failure.status, body), error: null }) }
    }
    return complete(line.body, request, `chatcmpl-${s.id}-${n}`).then(
      (body): Outcome => ({ ok: true, json: JSON.stringify({ ...head, response: response(200, body), error: null }) }),
      (e: unknown): Outcome => {
        const body = errorBody(500, errorMessage(e))
        return { ok: false, json: JSON.stringify({ ...head, response: response(500, body), error: null }) }
      }
    )
  }

  const finish = (s: State, status: "completed" | "expired" | "cancelled", now: number) => {
    s.status = status
    if (status === "completed") s.at.finalizing = now
    s.at[status] = now
    const unfinished =
      options.unfinished === "omitted"
        ? []
        : s.input.lines.slice(s.outcomes.length).map((line, i) =>
            JSON.stringify({
              id: `batch_req_${s.serial}_${s.outcomes.length + i}`,
              custom_id: line.customId,
              response: null,
              error:
                status === "expired"
                  ? { code: "batch_expired", message: "This request could not be executed before the batch expired." }
                  : { code: "batch_cancelled", message: "This request was not executed: the batch was cancelled." }
            })
          )
    const reversed = [...s.outcomes].reverse()
    const write = (jsons: ReadonlyArray<string>, kind: string) =>
      jsons.length === 0
        ? null
        : storeFile(`${s.id}_${kind}.jsonl`, "batch_output", Buffer.from(jsons.join("\n") + "\n"), now).id
    s.outputFileId = write(
      reversed.filter((o) => o.ok).map((o) => o.json),
      "output"
    )
    s.errorFileId = write([...reversed.filter((o) => !o.ok).map((o) => o.json), ...unfinished], "error")
  }

  const progress = async (s: State, request: LoopbackServer.RecordedRequest, now: number) => {
    if (options.expireAfterPolls !== undefined && s.inProgressPolls >= options.expireAfterPolls)
      return finish(s, "expired", now)
    s.inProgressPolls++
    if (s.held) return
    const pending = s.input.lines.slice(s.outcomes.length, s.outcomes.length + linesPerPoll)
    for (const line of pending) s.outcomes.push(await answerLine(s, line, s.outcomes.length, request))
    if (s.outcomes.length === s.input.lines.length) finish(s, "completed", now)
  }

  const advance = async (s: State, request: LoopbackServer.RecordedRequest) => {
    const now = EPOCH + request.index
    if (s.status === "cancelling") return finish(s, "cancelled", now)
    if (s.status === "in_progress") return progress(s, request, now)
    if (s.status !== "validating") return
    if (s.validatingLeft > 0) return void s.validatingLeft--
    const whole =
      s.input.errors.length === 0
        ? options.failBatch?.({ id: s.id, customIds: s.input.customIds, metadata: s.metadata })
        : undefined
    const errors = whole !== undefined ? [lineError(null, whole.code, whole.message)] : s.input.errors
    if (errors.length > 0) {
      s.status = "failed"
      s.at.failed = now
      s.errors = errors
      return
    }
    s.status = "in_progress"
    s.at.in_progress = now
    return progress(s, request, now)
  }

  const find = (batchId: string | undefined) => batches.find((b) => b.id === batchId)
  const noBatch = (batchId: string | undefined) => openAiError(404, `No batch found with id '${batchId}'.`)

  const upload: LoopbackServer.Route = async (_body, request) => {
    const form = await new Request("http://127.0.0.1/v1/files", {
      method: "POST",
      headers: { "content-type": request.headers["content-type"] ?? "" },
      body: request.rawBytes
    })
      .formData()
      .catch(() => undefined)
    if (form === undefined) return openAiError(400, "The body must be multipart/form-data.")
    const file = form.get("file")
    const purpose = form.get("purpose")
    if (file === null || typeof file === "string")
      return openAiError(400, "Missing required parameter: 'file'.", null, "file")
    if (typeof purpose !== "string") return openAiError(400, "Missing required parameter: 'purpose'.", null, "purpose")
    return storeFile(file.name, purpose, new Uint8Array(await file.arrayBuffer()), EPOCH + request.index)
  }

  const create: LoopbackServer.Route = (raw, request) => {
    const decoded = Schema.decodeUnknownEither(CreateBody)(raw)
    if (Either.isLeft(decoded)) {
      const { message, param } = firstIssue(decoded.left)
      return openAiError(400, message, null, param)
    }
    const body = decoded.right
    if (body.endpoint !== ENDPOINT) return openAiError(400, `Only ${ENDPOINT} is served here.`, null, "endpoint")
    if (body.completion_window !== "24h")
      return openAiError(400, "completion_window must be '24h'.", null, "completion_window")
    const file = files.get(body.input_file_id)
    if (file === undefined) return openAiError(404, `No such File object: ${body.input_file_id}`, null, "input_file_id")
    if (file.object.purpose !== "batch")
      return openAiError(400, "The input file must be uploaded with purpose 'batch'.", null, "input_file_id")
    const serial = batches.length + 1
    const state: State = {
      id: `batch_${serial}`,
      serial,
      inputFileId: body.input_file_id,
      metadata: body.metadata ?? null,
      input: file.parsed,
      status: "validating",
      validatingLeft: options.validatingPolls ?? 0,
      inProgressPolls: 0,
      held: options.hold === true,
      outcomes: [],
      errors: null,
      createdAt: EPOCH + request.index,
      at: {},
      outputFileId: null,
      errorFileId: null,
      turn: Promise.resolve()
    }
    batches.push(state)
    return view(state)
  }

  const retrieve: LoopbackServer.Route = (_body, request, { id }) => {
    const s = find(id)
    if (s === undefined) return noBatch(id)
    const turn = s.turn.then(() => advance(s, request)).then(() => view(s))
    s.turn = turn.catch(() => undefined)
    return turn
  }

  const list: LoopbackServer.Route = (_body, request) => {
    const limit = Number(request.query.limit ?? 20)
    if (!Number.isInteger(limit) || limit < 1 || limit > 100)
      return openAiError(400, "limit must be an integer from 1 to 100.", null, "limit")
    const newest = [...batches].reverse()
    const after = request.query.after
    const start = after === undefined ? 0 : newest.findIndex((b) => b.id === after) + 1
    if (start === 0 && after !== undefined) return noBatch(after)
    const data = newest.slice(start, start + limit).map(view)
    return {
      object: "list",
      data,
      first_id: data[0]?.id ?? null,
      last_id: data.at(-1)?.id ?? null,
      has_more: start + limit < newest.length
    }
  }

  const cancel: LoopbackServer.Route = (_body, request, { id }) => {
    const s = find(id)
    if (s === undefined) return noBatch(id)
    if (TERMINAL.has(s.status)) return openAiError(409, `Cannot cancel a batch with status '${s.status}'.`)
    if (s.status !== "cancelling") {
      s.status = "cancelling"
      s.at.cancelling = EPOCH + request.index
    }
    return view(s)
  }

  const noFile = (fileId: string | undefined) => openAiError(404, `No such File object: ${fileId}`)
  const fileObject: LoopbackServer.Route = (_body, _request, { id = "" }) => files.get(id)?.object ?? noFile(id)
  const content: LoopbackServer.Route = (_body, _request, { id = "" }) => {
    const file = files.get(id)
    return file === undefined
      ? noFile(id)
      : new Response(file.bytes, { headers: { "content-type": "application/octet-stream" } })
  }

  const handle: Batches = {
    all: () => batches.map(view),
    get: (batchId) => {
      const s = find(batchId)
      return s === undefined ? undefined : view(s)
    },
    release: (batchId) => {
      for (const s of batches) if (batchId === undefined || s.id === batchId) s.held = false
    },
    file: (fileId) => {
      const file = files.get(fileId)
      return file === undefined ? undefined : Buffer.from(file.bytes).toString("utf8")
    },
    customIds: (batchId) => find(batchId)?.input.customIds ?? []
  }

  const routes: Readonly<Record<string, LoopbackServer.Route>> = {
    "POST /v1/files": upload,
    "GET /v1/files/:id": fileObject,
    "GET /v1/files/:id/content": content,
    "POST /v1/batches": create,
    "GET /v1/batches": list,
    "GET /v1/batches/:id": retrieve,
    "POST /v1/batches/:id/cancel": cancel
  }
  return { routes, handle }
}
