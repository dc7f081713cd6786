import { createHash, randomUUID } from "node:crypto"
import { createWriteStream } from "node:fs"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { Readable } from "node:stream"
import { pipeline } from "node:stream/promises"
import type { FileSystem } from "@effect/platform"
import { Runtime } from "effect"
import { Errors, Files } from "@cupid-lab/core"

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

export const errorMessage = (e: unknown): string => {
  if (!(e instanceof Error)) return String(e)
  const cause = (e as { cause?: unknown }).cause
  const code = (cause as { code?: unknown } | undefined)?.code
  if (typeof code === "string") return `${e.message}: ${code}`
  return cause instanceof Error ? `${e.message}: ${cause.message}` : e.message
}

/** The checksum file beside a download, replaced atomically through the one atomic-write helper. */
const writeAtomic = (runtime: Runtime.Runtime<FileSystem.FileSystem>, file: string, text: string): Promise<void> =>
  Runtime.runPromise(runtime)(Files.writeFileAtomic(file, text))

/**
 * The cached copy of an `hf:` file, downloading it first if absent. A cache hit never touches the
 * network; its bytes are checked against the recorded SHA-256. A file put there by hand (no
 * checksum file yet) is accepted and its checksum recorded. The checksum is written through the
 * file system of `runtime`.
 */
export const ensureCached = async (
  src: HfFile,
  cacheDir: string,
  endpoint: string,
  runtime: Runtime.Runtime<FileSystem.FileSystem>
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
  const hint = `Download ${url} by hand and save it as ${file}, or pass --data <file> pointing at a downloaded copy.`
  let response: Response
  try {
    response = await fetch(url, { redirect: "follow" })
  } catch (e) {
    throw new Errors.DatasetError({
      source: src.source,
      reason: `could not download ${url} (${errorMessage(e)}) and there is no cached copy. ${hint}`
    })
  }
  if (!response.ok || response.body === null) {
    await response.body?.cancel()
    throw new Errors.DatasetError({
      source: src.source,
      reason: `download of ${url} failed with HTTP ${response.status} and there is no cached copy. ${hint}`
    })
  }
  await fs.mkdir(path.dirname(file), { recursive: true })
  const tmp = `${file}.${process.pid}.${randomUUID()}.part`
  const hash = createHash("sha256")
  try {
    await pipeline(
      Readable.fromWeb(response.body as import("node:stream/web").ReadableStream<Uint8Array>),
      async function* (chunks: AsyncIterable<Uint8Array>) {
        for await (const chunk of chunks) {
          hash.update(chunk)
          yield chunk
        }
      },
      createWriteStream(tmp)
    )
  } catch (e) {
    await fs.rm(tmp, { force: true })
    throw new Errors.DatasetError({
      source: src.source,
      reason: `download of ${url} was interrupted (${errorMessage(e)}). ${hint}`
    })
  }
  const sha256 = hash.digest("hex")
  // Checksum first, data second: a data file without its checksum can only be one put there by hand.
  await writeAtomic(runtime, sumFile, `${sha256}  ${path.basename(file)}\n`)
  await fs.rename(tmp, file)
  return { path: file, sha256, downloaded: true }
}
