// An entry longer than ModelCache.keptChars on disk (a model that loops answers tens of MB) is not
// held in memory for the rest of the run: the next lookup reads the file again. Smaller entries are.
import { afterEach, describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Layer, Option } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import * as ModelCache from "../src/ModelCache.js"

const made: Array<string> = []
afterEach(() => {
  for (const dir of made.splice(0)) fs.rmSync(dir, { recursive: true, force: true })
})

const entryFile = (dir: string, key: string) => path.join(dir, key.slice(0, 2), `${key}.json`)

/** Stores `text` under `key`, rewrites the entry's file behind the cache's back, and reads the key again. */
const storeEditRead = (text: string) => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cache-large-"))
  made.push(dir)
  const key = ModelCache.key({ text: text.length })
  return Effect.gen(function* () {
    const cache = yield* ModelCache.ModelCache
    yield* cache.set(key, { text })
    fs.writeFileSync(entryFile(dir, key), JSON.stringify({ key, value: { text: "edited on disk" } }))
    return yield* cache.get<{ text: string }>(key)
  }).pipe(Effect.provide(ModelCache.layerFile(dir).pipe(Layer.provide(NodeContext.layer))))
}

describe("ModelCache: large entries", () => {
  it.effect("reads an entry over keptChars from disk again; keeps a small one in memory", () =>
    Effect.gen(function* () {
      const large = yield* storeEditRead("x".repeat(ModelCache.keptChars + 1))
      expect(Option.map(large, (v) => v.text)).toEqual(Option.some("edited on disk"))
      const small = yield* storeEditRead("a short answer")
      expect(Option.map(small, (v) => v.text)).toEqual(Option.some("a short answer"))
    })
  )
})
