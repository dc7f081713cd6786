/**
 * A model that loops: a loopback server answers every call with 30 MB of text. The sweep with
 * `transcripts: full` finishes, calls.jsonl keeps the first `CUPID_TRANSCRIPT_ANSWER_CHARS`
 * characters of each answer (65,536 by default) with the whole answer's length and SHA-256 beside
 * them, so the file stays small, and the model cache keeps the whole answer (what stages read).
 */
import { OpenAiServer } from "@cupid-lab/providers/testing"
import type { Calls, ResultLine } from "@cupid-lab/results"

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

/** One sweep whose every inference call answers `content`: its result lines and calls. */
const sweepAnswering = (content: string) =>
  Effect.gen(function* () {
    const server = yield* OpenAiServer.make({
      chat: () => ({ content, usage: { promptTokens: 50, completionTokens: 7_000_000 } })
    })
    const dir = tempDir("cupid-loop-")
    fs.writeFileSync(path.join(dir, "looping.yaml"), config(dir, server.baseURL))
    const { err, io } = commandIo(dir)
    const out = path.join(dir, "run")
    const code = yield* Commands.main(["sweep", "--config", "looping", "--out", out], io)
    return {
      code,
      err: err.join(""),
      out,
      results: lines(path.join(out, "results.jsonl")).map((l) => JSON.parse(l) as ResultLine.ResultLine),
      calls: lines(path.join(out, "calls.jsonl")).flatMap((l) => (JSON.parse(l) as Calls.Line).calls)
    }
  })

describe("answers of a model that loops, read by the inferrer", () => {
  it.scopedLive("an unreadable answer of 30 MB is a recorded failure with the parser's reason", () =>
    Effect.gen(function* () {
      const unreadable = loop.repeat(Math.ceil((30 * 1024 * 1024) / loop.length))
      const run = yield* sweepAnswering(unreadable)
      expect(run.results.length, run.err).toBeGreaterThan(0)
      for (const r of run.results) {
        expect(r.inference).toBeNull()
        expect(r.error?.message).toContain("no preference label found")
        expect(r.error?.message).toContain('got: "and then I think about the preference again,')
      }
      expect(run.calls.length).toBeGreaterThan(0)
      for (const c of run.calls)
        expect(c.read).toMatchObject({ ok: false, reason: expect.stringContaining("no preference label found") })
      expect(fs.statSync(path.join(run.out, "results.jsonl")).size).toBeLessThan(1024 * 1024)
    })
  )

  it.scopedLive("an analysis of 30 MB before the heading is kept to its first 65,536 characters, the cut noted", () =>
    Effect.gen(function* () {
      const analysis = loop.repeat(Math.ceil((30 * 1024 * 1024) / loop.length))
      const run = yield* sweepAnswering(`### Analysis\n${analysis}\n### Most Likely Preference\nUse numbered steps.`)
      expect(run.code, run.err).toBe(0)
      // The text under the analysis heading, up to the preference heading.
      const before = `\n${analysis}\n`
      const kept = `${before.slice(0, 65_536).replace(/\s+/g, " ").trim()} \u2026 [cut: ${before.length} characters in all]`
      const read = (v: unknown) => v as { preference: string; analysis: string } | null
      // Compared by value, not with toEqual: a failure's diff of 64 KiB helps nobody.
      const inferred = [
        ...run.results.map((r) => read(r.inference)),
        ...run.calls.map((c) => read(c.read?.ok ? c.read.value : null))
      ]
      expect(inferred.length).toBeGreaterThan(run.results.length)
      for (const v of inferred) {
        expect(v?.preference).toBe("Use numbered steps.")
        expect(v?.analysis.length).toBe(kept.length)
        expect(v?.analysis === kept).toBe(true)
      }
      expect(fs.statSync(path.join(run.out, "results.jsonl")).size).toBeLessThan(1024 * 1024)
      expect(fs.statSync(path.join(run.out, "calls.jsonl")).size).toBeLessThan(1024 * 1024)
    })
  )
})
