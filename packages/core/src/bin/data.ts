/**
 * The `data` command: inspect a data source, download the Hugging Face dataset into the cache, or
 * generate a synthetic dataset. Run from the repository root:
 *
 * @example
 * npx nx run core:data -- inspect --data sample
 * npx nx run core:data -- download --data hf:kixlab/CUPID
 * npx nx run core:data -- generate --out /tmp/syn.jsonl --personas 100 --sessions 50 --seed 3
 */
import { Effect } from "effect"
import { run } from "../internal/dataset/cli.js"

const code = await Effect.runPromise(
  run(process.argv.slice(2), {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`)
  })
)
process.exitCode = code
