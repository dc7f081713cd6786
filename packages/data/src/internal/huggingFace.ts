import { createHash, randomUUID } from "node:crypto"
import { createWriteStream } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import type { FileSystem } from "@effect/platform"
import { Runtime } from "effect"
import { Errors, Files, HttpGet, ProgressLine } from "@cupid-lab/core"

import { isSafePath } from "./hubFiles.js"
import { fileSha256 } from "./readers.js"

/**
 * `hf:<owner>/<name>[/<path in repo>]`. Without a path, the file is resolved from the repository
 * (hubDownload.ts).
 */
export interface HfSource {
  readonly source: string
  readonly repo: string
  readonly file?: string
}

/** One file of a dataset repository. */
export interface HfFile {
  readonly source: string
  readonly repo: string
  readonly file: string
}

export const defaultEndpoint = "https://huggingface.co"

export const parseHfSource = (source: string): HfSource | Errors.DatasetError => {
  const match = /^hf:([A-Za-z0-9][\w.-]*)\/([A-Za-z0-9][\w.-]*)(?:\/(.+))?$/.exec(source)
  if (match === null || (match[3] !== undefined && !isSafePath(match[3]))) {
    return new Errors.DatasetError({
      source,
      reason: "expected hf:<owner>/<name> or hf:<owner>/<name>/<path in repo>, e.g. hf:kixlab/CUPID"
    })
  }
  const repo = `${match[1]}/${match[2]}`
  return match[3] === undefined ? { source, repo } : { source, repo, file: match[3] }
}

const hub = (endpoint: string) => endpoint.replace(/\/+$/, "")
const encodePath = (file: string) => file.split("/").map(encodeURIComponent).join("/")

export const downloadUrl = (endpoint: string, src: HfFile): string =>
  `${hub(endpoint)}/datasets/${src.repo}/resolve/main/${encodePath(src.file)}`

/** The dataset card, whose YAML front matter may declare the files of each split. */
export const cardUrl = (endpoint: string, repo: string): string =>
  `${hub(endpoint)}/datasets/${repo}/resolve/main/README.md`

/** The hub's description of a dataset repository; its `siblings` list every file. */
export const listingUrl = (endpoint: string, repo: string): string => `${hub(endpoint)}/api/datasets/${repo}`

export const cachedPath = (cacheDir: string, src: HfFile): string =>
  path.resolve(cacheDir, "hf", ...src.repo.split("/"), ...src.file.split("/"))

/** The checksum file beside a cached file, in `sha256sum` format. */
export const checksumPath = (file: string): string => `${file}.sha256`

export interface Cached {
  readonly path: string
  readonly sha256: string
  readonly downloaded: boolean
}

const exists = (file: string) =>
  fs.access(file).then(
    () => true,
    () => false
  )

export const errorMessage: (e: unknown) => string = HttpGet.describe

/** The checksum file beside a download, replaced atomically through the one atomic-write helper. */
const writeAtomic = (runtime: Runtime.Runtime<FileSystem.FileSystem>, file: string, text: string): Promise<void> =>
  Runtime.runPromise(runtime)(Files.writeFileAtomic(file, text))

/** A one-line progress display on stderr when it is a terminal; `end` closes a line left open by a failure. */
const terminalProgress = (file: string) => {
  if (process.stderr.isTTY !== true) return undefined
  let open = false
  const bytes = (n: number) => `${ProgressLine.compact(Math.round(n))}B`
  const line = ProgressLine.make(process.stderr, {
    describe: (p: HttpGet.Progress) =>
      `${file}: ${bytes(p.received)}${p.total === undefined ? "" : ` of ${bytes(p.total)}`}` +
      (p.elapsedMs > 0 ? `, ${bytes((p.received * 1000) / p.elapsedMs)}/s` : ""),
    fraction: (p) => (p.total === undefined || p.total === 0 ? 0 : p.received / p.total)
  })
  return {
    onProgress: (p: HttpGet.Progress) => {
      open = !p.done
      return p.done ? line.done(p) : line.update(p)
    },
    end: () => open && process.stderr.write("\n")
  }
}

/** What a download may be given: its limits, a progress callback, the caller's interruption. */
export interface Transfer {
  readonly limits: HttpGet.Limits
  readonly onProgress?: (p: HttpGet.Progress) => void
  readonly signal?: AbortSignal
}

/**
 * The cached copy of an `hf:` file, downloading it first if absent. A cache hit never touches the
 * network; its bytes are checked against the recorded SHA-256. A file put there by hand (no
 * checksum file yet) is accepted and its checksum recorded. The checksum is written through the
 * file system of `runtime`. The bytes go to a temporary file, renamed into place once complete.
 */
export const ensureCached = async (
  src: HfFile,
  cacheDir: string,
  endpoint: string,
  runtime: Runtime.Runtime<FileSystem.FileSystem>,
  transfer: Transfer
): Promise<Cached> => {
  const file = cachedPath(cacheDir, src)
  const sumFile = checksumPath(file)
  if (await exists(file)) {
    const actual = await fileSha256(file)
    if (!(await exists(sumFile))) {
      await writeAtomic(runtime, sumFile, `${actual}  ${path.basename(file)}\n`)
      return { path: file, sha256: actual, downloaded: false }
    }
    const recorded = (await fs.readFile(sumFile, "utf8")).trim().split(/\s+/)[0] ?? ""
    if (recorded !== actual) {
      throw new Errors.DatasetError({
        source: src.source,
        reason:
          `cached file ${file} does not match its recorded SHA-256 (recorded ${recorded}, found ${actual}); ` +
          `delete ${file} to download it again`
      })
    }
    return { path: file, sha256: actual, downloaded: false }
  }
  const url = downloadUrl(endpoint, src)
  const shown = HttpGet.redact(url)
  const hint = `Download ${shown} by hand and save it as ${file}, or pass --data <file> pointing at a downloaded copy.`
  const terminal = transfer.onProgress === undefined ? terminalProgress(src.file) : undefined
  const onProgress = transfer.onProgress ?? terminal?.onProgress
  const request = {
    limits: transfer.limits,
    ...(onProgress && { onProgress }),
    ...(transfer.signal && { signal: transfer.signal })
  }
  const tmp = `${file}.${process.pid}.${randomUUID()}.part`
  let got: { readonly status: number } | { readonly sha256: string }
  try {
    got = await HttpGet.get(url, request, async (response, body) => {
      if (!response.ok) return { status: response.status }
      await fs.mkdir(path.dirname(file), { recursive: true })
      const hash = createHash("sha256")
      try {
        await pipeline(
          Readable.from(body),
          async function* (chunks: AsyncIterable<Uint8Array>) {
            for await (const chunk of chunks) {
              hash.update(chunk)
              yield chunk
            }
          },
          createWriteStream(tmp)
        )
      } catch (e) {
        // A retry starts afresh, and no later run may take a partial file for a complete one.
        await fs.rm(tmp, { force: true })
        throw e
      }
      return { sha256: hash.digest("hex") }
    })
  } catch (e) {
    terminal?.end()
    if (!(e instanceof HttpGet.HttpGetError)) throw e
    throw new Errors.DatasetError({
      source: src.source,
      reason: e.answered
        ? `download of ${shown} was interrupted (${e.reason}). ${hint}`
        : `could not download ${shown} (${e.reason}) and there is no cached copy. ${hint}`
    })
  }
  if ("status" in got) {
    throw new Errors.DatasetError({
      source: src.source,
      reason: `download of ${shown} failed with HTTP ${got.status} and there is no cached copy. ${hint}`
    })
  }
  // Checksum first, data second: a data file without its checksum can only be one put there by hand.
  await writeAtomic(runtime, sumFile, `${got.sha256}  ${path.basename(file)}\n`)
  await fs.rename(tmp, file)
  return { path: file, sha256: got.sha256, downloaded: true }
}
