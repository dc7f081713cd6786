/**
 * The worker thread of ResultFiles.ts: given one job (a run's LineTable and the two target files),
 * it writes results.csv and results.parquet, answers how it went, and ends.
 */
import { Effect } from "effect"
import { parentPort } from "node:worker_threads"
import * as ResultFiles from "./ResultFiles.js"

parentPort?.once("message", (job: ResultFiles.Job) => {
  void Effect.runPromise(ResultFiles.answer(job)).then((outcome) => parentPort?.postMessage(outcome))
})
