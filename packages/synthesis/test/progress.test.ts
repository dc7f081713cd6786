import { describe, expect, it } from "@effect/vitest"
import { Progress } from "@cupid-lab/synthesis"

const snapshot: Progress.Snapshot = {
  personasDone: 5,
  personasTotal: 13,
  personasRun: 2,
  personasToRun: 10,
  calls: 192,
  cachedCalls: 96,
  tokens: 12_345,
  usd: 0.5,
  failures: 1,
  elapsedMs: 60_000
}

describe("Progress", () => {
  it("ETA from this run's pace, calls, tokens and dollars", () => {
    // 8 personas left at 30 s each: 240 s.
    expect(Progress.eta(snapshot)).toBe(240_000)
    expect(Progress.describe(snapshot)).toBe(
      "5/13 personas · ETA 4m00s · calls 192 (cached 96) · tokens 12k · $0.5000 · failed 1"
    )
    expect(Progress.describe({ ...snapshot, usd: NaN })).toContain("$? (a model has no price)")
  })

  it("plain lines at most every interval off a terminal; a live line on one", () => {
    const plain: Array<string> = []
    const p = Progress.make({ write: (t) => plain.push(t) }, { intervalMs: 1000 })
    p.update({ ...snapshot, elapsedMs: 0 })
    p.update({ ...snapshot, elapsedMs: 500 })
    p.update({ ...snapshot, elapsedMs: 1000 })
    expect(plain.length).toBe(2)
    expect(plain[0]!.startsWith("progress: 5/13 personas")).toBe(true)
    const live: Array<string> = []
    Progress.make({ write: (t) => live.push(t), isTTY: true, columns: 200 }).done(snapshot)
    // 5 of 13 of a 24-character bar: round(9.23) = 9 filled.
    expect(live[0]!.startsWith(`\r[${"#".repeat(9)}${"-".repeat(15)}] 5/13 personas`)).toBe(true)
    expect(live[0]!.endsWith("\n")).toBe(true)
  })
})
