// Building, validating and writing the instances of every complete persona of the raw file.
import { Domain, Files } from "@cupid-lab/core"
import { Effect } from "effect"
import * as fs from "node:fs"
import * as path from "node:path"
import { SynthesisRunError } from "../Errors.js"
import * as Instances from "../Instances.js"
import type * as Records from "../Records.js"
import type { Excluded, Outcome, StageUsage } from "../Synthesis.js"
import type { Config } from "../SynthConfig.js"
import { assemble } from "./Assemble.js"
import { CupidParquet } from "@cupid-lab/data"
import type * as RawStore from "./RawStore.js"

const ioError = (file: string) => (e: unknown) =>
  new SynthesisRunError({ path: file, reason: e instanceof Error ? e.message : String(e) })

/** Build, validate and write the instances of every complete persona in the raw file. */
export const writeOutputs = (
  config: Config,
  store: RawStore.RawStore,
  failures: ReadonlyArray<Records.Failure>,
  usage: Record<string, StageUsage>
) =>
  Effect.gen(function* () {
    const writes: Array<readonly [string, string | Uint8Array]> = []
    const outcome = yield* Effect.try({
      try: () => {
        const out = config.out
        const rows: Array<Domain.CupidRow> = []
        const excluded: Array<Excluded> = []
        const byType: Record<string, { valid: number; excluded: number }> = {}
        const byRule: Record<string, number> = {}
        let complete = 0
        for (let i = 0; i < config.personas.count; i++) {
          const data = assemble(config, store, i)
          if (data === undefined) continue
          complete++
          for (const built of Instances.build(data, config.sessions, config.seed)) {
            const t = (byType[built.row.instance_type] ??= { valid: 0, excluded: 0 })
            if (built.problems.length === 0) {
              rows.push(built.row)
              t.valid++
            } else {
              t.excluded++
              excluded.push({
                id: Domain.instanceId(built.row.persona_id, built.row.instance_type),
                problems: built.problems
              })
              for (const p of built.problems) {
                const rule = ruleOf(p)
                byRule[rule] = (byRule[rule] ?? 0) + 1
              }
            }
          }
        }
        fs.mkdirSync(out, { recursive: true })
        const files = {
          raw: store.file,
          jsonl: config.output.jsonl ? path.join(out, "instances.jsonl") : undefined,
          parquet: config.output.parquet ? path.join(out, "instances.parquet") : undefined,
          validation: path.join(out, "validation.json"),
          failures: path.join(out, "failures.json")
        }
        const summary = {
          personas: config.personas.count,
          complete,
          instances: complete * Domain.cupidTypes.length,
          valid: rows.length,
          excluded: excluded.length,
          byType,
          byRule
        }
        writes.push([files.validation, `${JSON.stringify({ summary, excluded }, null, 2)}\n`])
        writes.push([files.failures, `${JSON.stringify({ failures, usage }, null, 2)}\n`])
        // The instances last: whatever happens to them, the files that say what went wrong are written.
        if (files.jsonl !== undefined) writes.push([files.jsonl, rows.map((r) => `${JSON.stringify(r)}\n`).join("")])
        if (files.parquet !== undefined) writes.push([files.parquet, CupidParquet.toBuffer(rows)])
        const outcome: Outcome = {
          out,
          files,
          personas: { total: config.personas.count, complete, incomplete: config.personas.count - complete },
          instances: { built: summary.instances, valid: rows.length, excluded: excluded.length },
          failures,
          excluded,
          usage
        }
        return outcome
      },
      catch: ioError(config.out)
    })
    yield* Effect.forEach(
      writes,
      ([file, data]) =>
        Files.writeFileAtomic(file, data).pipe(
          Effect.mapError((e) => new SynthesisRunError({ path: file, reason: Files.describe(e) }))
        ),
      { discard: true }
    )
    yield* Effect.try({ try: () => store.compact(), catch: ioError(config.out) })
    return outcome
  })

/** The rule a validation problem breaks, for the summary counts. */
const ruleOf = (problem: string): string =>
  problem.startsWith("composition")
    ? "composition"
    : problem.includes("word run")
      ? "preference leaked"
      : problem.includes("does not name")
        ? "factor not named"
        : problem.includes("validator model")
          ? "checklist item not hinted (model check)"
          : problem.includes("never hinted")
            ? "checklist item not hinted"
            : "other"

export const sortFailures = (failures: Array<Records.Failure>) =>
  failures.sort((x, y) =>
    x.persona < y.persona
      ? -1
      : x.persona > y.persona
        ? 1
        : (x.session ?? 0) - (y.session ?? 0) || (x.stage < y.stage ? -1 : x.stage > y.stage ? 1 : 0)
  )
