/**
 * A model that loops: a loopback server answers every call with 30 MB of text. The sweep with
 * `transcripts: full` finishes, calls.jsonl keeps the first `CUPID_TRANSCRIPT_ANSWER_CHARS`
 * characters of each answer (65,536 by default) with the whole answer's length and SHA-256 beside
 * them, so the file stays small, and the model cache keeps the whole answer (what stages read).
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { Calls } from "@cupid-lab/results"

import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as path from "node:path"
import * as Commands from "../src/cli/Commands.js"

import { commandIo, lines, loopbackInferrerConfig, tempDir } from "./support.js"

const loop = "and then I think about the preference again, "
const answer = `### Most Likely Preference\n\nUse numbered steps.\n\n${loop.repeat(Math.ceil((30 * 1024 * 1024) / loop.length))}`

const config = (dir: string, baseURL: string) =>
  loopbackInferrerConfig("looping", path.join(dir, "cache"), baseURL, ["transcripts: full"])

const cacheFiles = (dir: string): Array<string> =>
  fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".json"))

describe("transcripts of a model that loops", () => {
  it.scopedLive("caps each answer in calls.jsonl, with its length and SHA-256, and the sweep finishes", () =>
    Effect.gen(function* () {
      // Usage given, so the server does not count the words of 30 MB for every answer.
      const server = yield* OpenAiServer.make({
        chat: () => ({ content: answer, usage: { promptTokens: 50, completionTokens: 7_000_000 } })
      })
      const dir = tempDir("cupid-loop-")
      fs.writeFileSync(path.join(dir, "looping.yaml"), config(dir, server.baseURL))
      const { err, io } = commandIo(dir)
      const out = path.join(dir, "run")
      expect(yield* Commands.main(["sweep", "--config", "looping", "--out", out], io), err.join("")).toBe(0)

      const file = path.join(out, "calls.jsonl")
      const calls = lines(file).flatMap((l) => (JSON.parse(l) as Calls.Line).calls)
      expect(calls).toHaveLength(3)
      const sha256 = createHash("sha256").update(answer, "utf8").digest("hex")
      for (const c of calls) {
        expect(c.answer).toBe(answer.slice(0, 65_536))
        expect([c.answerChars, c.answerSha256, c.answerCap]).toEqual([answer.length, sha256, 65_536])
        expect(c.read).toMatchObject({ ok: true, value: { preference: "Use numbered steps." } })
      }
      // Three answers of 30 MB each, and the file holds 64 KiB of each.
      expect(fs.statSync(file).size).toBeLessThan(1024 * 1024)
      expect(fs.statSync(path.join(out, "results.jsonl")).size).toBeLessThan(1024 * 1024)
      // The cache keeps the whole answer: what a later run's stages read.
      const cache = path.join(dir, "cache")
      const stored = cacheFiles(cache).map(
        (f) => (JSON.parse(fs.readFileSync(path.join(cache, f), "utf8")) as { value: { text: string } }).value.text
      )
      expect(stored.length).toBeGreaterThan(0)
      expect(stored.every((t) => t === answer)).toBe(true)
    })
  )
})
