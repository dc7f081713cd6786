/**
 * The sweep and the merge as the command line runs them: the runner's, with the report's files
 * (report.md, report.html, report.tex, results.csv, results.parquet) written as the run finishes.
 *
 * @example
 * const outcome = yield* Sweeps.sweep(yield* Config.load("configs/smoke.yaml"))
 * outcome.published?.verdict // what report.md opens with
 */
import { Report } from "@cupid-lab/report"
import { type Config, Merge, Runner } from "@cupid-lab/runner"

export interface Options extends Runner.Options {
  /** `false`: write the run's records only, no report. */
  readonly report?: boolean
}

const publisher = (openDataset: Runner.OpenDataset | undefined) =>
  Report.publisher(openDataset === undefined ? {} : { openDataset: (source: string) => openDataset(source, {}) })

export const sweep = (config: Config.Config, options: Options = {}) => {
  const { report, ...rest } = options
  return report === false
    ? Runner.sweep(config, rest)
    : Runner.sweep(config, { ...rest, publish: publisher(options.openDataset) })
}

export const merge = (options: Merge.Options) => Merge.merge({ ...options, publish: publisher(options.openDataset) })
