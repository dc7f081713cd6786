// Every temporary directory the tests make (os.tmpdir(), mkdtemp, child processes) lands under one
// directory per test run, removed when the run ends, so a run leaves nothing behind in /tmp.
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

export default function setup(): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-tests-"))
  const previous = process.env["TMPDIR"]
  process.env["TMPDIR"] = root
  return () => {
    if (previous === undefined) delete process.env["TMPDIR"]
    else process.env["TMPDIR"] = previous
    fs.rmSync(root, { recursive: true, force: true })
  }
}
