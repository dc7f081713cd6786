/**
 * A loopback stand-in for the Hugging Face hub, for tests: per dataset repository a card
 * (`README.md`, optional) and files, served at `/datasets/<repo>/resolve/main/<path>`, and the
 * listing `/api/datasets/<repo>` with every file in `siblings`. Every request is recorded.
 */
import * as http from "node:http"
import type { AddressInfo } from "node:net"

export interface HubRepo {
  /** The card's text; no card when absent (the hub answers 404). */
  readonly card?: string
  readonly files: Readonly<Record<string, Buffer | string>>
  /** Answer the files through a redirect to `/cdn/...`, as the real hub does. */
  readonly redirect?: boolean
}

export interface Hub {
  readonly endpoint: string
  /** Request paths (URL-decoded), in arrival order. */
  readonly requests: Array<string>
  readonly close: () => Promise<void>
}

/** `special` answers a request first when it returns true (e.g. a truncated body). */
export const startHub = async (
  repos: Readonly<Record<string, HubRepo>>,
  special?: (url: string, res: http.ServerResponse) => boolean
): Promise<Hub> => {
  const requests: Array<string> = []
  const fileOf = (repo: HubRepo, file: string): Buffer | string | undefined =>
    file === "README.md" ? repo.card : Object.hasOwn(repo.files, file) ? repo.files[file] : undefined
  const server = http.createServer((req, res) => {
    const url = decodeURIComponent(req.url ?? "")
    requests.push(url)
    if (special?.(url, res) === true) return
    const listing = /^\/api\/datasets\/([^/]+\/[^/]+)$/.exec(url)
    if (listing !== null && Object.hasOwn(repos, listing[1]!)) {
      const repo = repos[listing[1]!]!
      const names = [...(repo.card !== undefined ? ["README.md"] : []), ...Object.keys(repo.files)]
      res
        .writeHead(200, { "content-type": "application/json" })
        .end(JSON.stringify({ id: listing[1], private: false, siblings: names.map((rfilename) => ({ rfilename })) }))
      return
    }
    const resolve = /^\/(datasets|cdn)\/([^/]+\/[^/]+)\/(?:resolve\/main\/)?(.+)$/.exec(url)
    const repo = resolve !== null && Object.hasOwn(repos, resolve[2]!) ? repos[resolve[2]!]! : undefined
    const body = repo !== undefined ? fileOf(repo, resolve![3]!) : undefined
    if (body === undefined) {
      res.writeHead(404).end("Entry not found")
    } else if (resolve![1] === "datasets" && repo!.redirect === true && resolve![3] !== "README.md") {
      res.writeHead(302, { location: `/cdn/${resolve![2]}/${req.url!.split("/resolve/main/")[1]}` }).end()
    } else {
      res.writeHead(200, { "content-length": Buffer.byteLength(body) }).end(body)
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  // Drops open connections too: a test's server may be holding one that never finishes.
  const close = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return { endpoint, requests, close }
}

/** The card kixlab/CUPID publishes: its test split is `test.parquet` at the repository root. */
export const cupidCard = [
  "---",
  "license: cc-by-4.0",
  "configs:",
  "- config_name: default",
  "  data_files:",
  "  - split: test",
  "    path: test.parquet",
  "---",
  "",
  "# CUPID",
  ""
].join("\n")
