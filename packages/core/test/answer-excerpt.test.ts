/**
 * What a transcript keeps of an answer (Usage.excerptOf): the first `cap` characters, never half
 * of a surrogate pair, with the whole answer's length and SHA-256; the cap from
 * CUPID_TRANSCRIPT_ANSWER_CHARS, 65,536 when it is unset or not a non-negative integer.
 */
import { afterEach, describe, expect, it } from "@effect/vitest"
import { createHash } from "node:crypto"
import { Usage } from "../src/index.js"

const sha = (t: string) => createHash("sha256").update(t, "utf8").digest("hex")

afterEach(() => {
  delete process.env["CUPID_TRANSCRIPT_ANSWER_CHARS"]
})

describe("Usage.excerptOf", () => {
  it("keeps a short answer whole and cuts a long one at the cap", () => {
    expect(Usage.excerptOf("short", 10)).toEqual({ text: "short", chars: 5, sha256: sha("short"), cap: 10 })
    const long = "ab".repeat(50)
    expect(Usage.excerptOf(long, 7)).toEqual({ text: "abababa", chars: 100, sha256: sha(long), cap: 7 })
    expect(Usage.excerptOf(long, 0).text).toBe("")
  })

  it("never keeps half of a surrogate pair", () => {
    const text = "ab\u{1F600}cd"
    expect(Usage.excerptOf(text, 3).text).toBe("ab")
    expect(Usage.excerptOf(text, 4).text).toBe("ab\u{1F600}")
    expect(Usage.excerptOf(text, 4).sha256).toBe(sha(text))
  })

  it("reads the cap from CUPID_TRANSCRIPT_ANSWER_CHARS", () => {
    expect(Usage.answerCap()).toBe(65_536)
    process.env["CUPID_TRANSCRIPT_ANSWER_CHARS"] = "1000"
    expect(Usage.answerCap()).toBe(1000)
    expect(Usage.excerptOf("x".repeat(5000)).text).toHaveLength(1000)
    for (const bad of ["", "-1", "1.5", "lots"]) {
      process.env["CUPID_TRANSCRIPT_ANSWER_CHARS"] = bad
      expect(Usage.answerCap()).toBe(65_536)
    }
  })
})
