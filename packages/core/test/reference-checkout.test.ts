// Where the tests find the CUPID authors' repository, and what `npm test`'s pretest does when it is
// not there: download the pinned commit's archive (here from a loopback server serving an archive
// built from the real checkout), keep it only when the pinned files match, and otherwise say how to
// get it so that the tests that need it are skipped.
import { describe, expect, it } from "@effect/vitest"
import * as fs from "node:fs"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import * as ReferencePrompts from "../src/ReferencePrompts.js"
import * as ReferenceCheckout from "../src/testing/ReferenceCheckout.js"
import * as Subprocess from "../src/testing/Subprocess.js"

const tmp = () => fs.mkdtempSync(path.join(os.tmpdir(), "reference-checkout-"))
const nowhere = path.join(os.tmpdir(), "no-such-checkout")

/** A .tar.gz shaped like GitHub's (one top directory, CUPID-<commit>/) of the real checkout, one file changed by `edit`. */
const archiveOf = async (edit?: { file: string; text: string }): Promise<Buffer> => {
  const work = tmp()
  const top = path.join(work, `CUPID-${ReferencePrompts.commit}`)
  fs.cpSync(ReferenceCheckout.need(), top, { recursive: true })
  if (edit !== undefined) fs.writeFileSync(path.join(top, edit.file), edit.text)
  const packed = await Subprocess.run("tar", ["-czf", path.join(work, "a.tar.gz"), "-C", work, path.basename(top)])
  if (packed.code !== 0) throw new Error(`tar -czf exited ${packed.code ?? packed.signal}: ${packed.stderr}`)
  return fs.readFileSync(path.join(work, "a.tar.gz"))
}

/** Serve `body` at every path on a loopback port; the requested paths are recorded. */
const serve = async (body: Buffer) => {
  const requested: Array<string> = []
  const server = http.createServer((req, res) => {
    requested.push(req.url ?? "")
    res.writeHead(200, { "content-type": "application/x-gzip" }).end(body)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/kixlab/CUPID/tar.gz/${ReferencePrompts.commit}`
  return { url, requested, close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

describe("ReferenceCheckout: the pretest's download", () => {
  it("downloads the pinned commit's archive into the cache, checks it, and the tests then read it from there", async () => {
    const server = await serve(await archiveOf())
    try {
      const cache = tmp()
      const env = { CUPID_REFERENCE_ARCHIVE_URL: server.url, CUPID_REFERENCE_CACHE: cache }
      expect(ReferenceCheckout.resolve(env, nowhere).dir).toBeUndefined()
      const told: Array<string> = []
      const dir = await ReferenceCheckout.prepare({ env, beside: nowhere, log: (l) => told.push(l) })
      expect(dir).toBe(path.join(cache, ReferencePrompts.commit))
      expect(server.requested).toEqual([`/kixlab/CUPID/tar.gz/${ReferencePrompts.commit}`])
      expect(told[0]).toContain(`from ${server.url} into ${cache}`)
      expect(ReferenceCheckout.problems(dir!)).toEqual([])
      expect(ReferenceCheckout.resolve(env, nowhere)).toEqual({ dir, from: "cache" })
      expect(ReferenceCheckout.missing(ReferenceCheckout.resolve(env, nowhere))).toBeUndefined()
      // Nothing else is left in the cache, and a second run downloads nothing.
      expect(fs.readdirSync(cache)).toEqual([ReferencePrompts.commit])
      expect(await ReferenceCheckout.prepare({ env, beside: nowhere, log: () => {} })).toBe(dir)
      expect(server.requested).toHaveLength(1)
    } finally {
      await server.close()
    }
  })

  it("refuses an archive whose pinned files differ, keeping nothing", async () => {
    const judge = ReferencePrompts.files.judge
    const server = await serve(await archiveOf({ file: judge.path, text: "system_prompt: x\nuser_prompt: y\n" }))
    try {
      const cache = tmp()
      const env = { CUPID_REFERENCE_ARCHIVE_URL: server.url, CUPID_REFERENCE_CACHE: cache }
      const e = await ReferenceCheckout.prepare({ env, beside: nowhere, log: () => {} }).then(
        () => undefined,
        (err: unknown) => err
      )
      expect(e).toBeInstanceOf(ReferenceCheckout.MismatchError)
      expect((e as Error).message).toContain(`not the pinned ${judge.sha256}`)
      expect((e as Error).message).toContain(`git -C CUPID checkout ${ReferencePrompts.commit}`)
      expect(fs.readdirSync(cache)).toEqual([])
      expect(ReferenceCheckout.resolve(env, nowhere).dir).toBeUndefined()
    } finally {
      await server.close()
    }
  })

  it("without network: says it could not download, and the reason to skip names the clone command", async () => {
    const cache = tmp()
    const env = { CUPID_REFERENCE_ARCHIVE_URL: "http://127.0.0.1:9/archive.tar.gz", CUPID_REFERENCE_CACHE: cache }
    const told: Array<string> = []
    expect(await ReferenceCheckout.prepare({ env, beside: nowhere, log: (l) => told.push(l) })).toBeUndefined()
    expect(told[1]).toMatch(/^could not download it: .*; the tests that need it will be skipped$/)
    expect(fs.readdirSync(cache)).toEqual([])
    const unmade = path.join(cache, "unmade")
    await ReferenceCheckout.prepare({ env: { ...env, CUPID_REFERENCE_CACHE: unmade }, beside: nowhere, log: () => {} })
    expect(fs.existsSync(unmade)).toBe(false)
    const why = ReferenceCheckout.missing(ReferenceCheckout.resolve(env, nowhere))
    expect(why).toContain(nowhere)
    expect(why).toContain(
      `git clone https://github.com/kixlab/CUPID && git -C CUPID checkout ${ReferencePrompts.commit}`
    )
  })

  it("a checkout named by CUPID_REFERENCE_DIR comes first, and a wrong one is reported, not skipped", () => {
    const dir = tmp()
    expect(ReferenceCheckout.resolve({ CUPID_REFERENCE_DIR: dir }, nowhere)).toEqual({
      dir,
      from: "CUPID_REFERENCE_DIR"
    })
    expect(ReferenceCheckout.missing(ReferenceCheckout.resolve({ CUPID_REFERENCE_DIR: dir }, nowhere))).toBeUndefined()
    expect(ReferenceCheckout.problems(dir)).toHaveLength(Object.keys(ReferencePrompts.files).length)
    expect(ReferenceCheckout.problems(dir)[0]).toMatch(/preference_inferrer\.yaml is missing$/)
  })
})
