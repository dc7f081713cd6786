// Every temporary directory the tests make (os.tmpdir(), mkdtemp, child processes) lands under one
// directory per test run, removed when the run ends, so a run leaves nothing behind in /tmp.
// At the end, the tests skipped for a missing prerequisite are counted by reason, one line each
// (a skipped test shows a short note; the reason, with how to get what is missing, is told once here).
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"

interface Node {
  readonly type: string
  readonly mode?: string
  readonly meta?: Record<string, unknown>
  readonly result?: { readonly state?: string }
  readonly tasks?: ReadonlyArray<Node>
}

/** The skipped tests' reasons (from `ReferenceCheckout.skip`) and how many tests each skipped. */
const skippedByReason = (nodes: ReadonlyArray<Node>, counts = new Map<string, number>()): Map<string, number> => {
  for (const n of nodes) {
    if (n.tasks !== undefined) skippedByReason(n.tasks, counts)
    const reason = n.meta?.["skipReason"]
    if (n.type === "test" && n.result?.state === "skip" && typeof reason === "string")
      counts.set(reason, (counts.get(reason) ?? 0) + 1)
  }
  return counts
}

export default function setup(project: TestProject): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-tests-"))
  const previous = process.env["TMPDIR"]
  process.env["TMPDIR"] = root
  return () => {
    if (previous === undefined) delete process.env["TMPDIR"]
    else process.env["TMPDIR"] = previous
    fs.rmSync(root, { recursive: true, force: true })
    const counts = skippedByReason(project.vitest.state.getFiles() as unknown as ReadonlyArray<Node>)
    for (const [reason, n] of counts) console.log(`${n} test${n === 1 ? "" : "s"} skipped: ${reason}`)
  }
}
