/**
 * The visible text of the whole dataset a sweep runs on, for plugins that fit themselves to the
 * data (e.g. an embedder trained on the sessions). Only visible text: no labels.
 *
 * @example
 * import { Corpus } from "@cupid-lab/core"
 * const queries = yield* Stream.runCollect((yield* Corpus.Corpus).queries)
 */
import { Context, Layer, Stream } from "effect"
import type { Query } from "./Domain.js"
import type { DatasetError } from "./Errors.js"

export interface Service {
  /** A fresh stream over every query of the dataset each time it is run. */
  readonly queries: Stream.Stream<Query, DatasetError>
  /** Identifies the dataset (content hash), so fitted artifacts can be memoized per dataset. */
  readonly fingerprint: string
}

export class Corpus extends Context.Tag("@cupid-lab/core/Corpus")<Corpus, Service>() {}

export const layerFromQueries = (queries: ReadonlyArray<Query>, fingerprint: string): Layer.Layer<Corpus> =>
  Layer.succeed(Corpus, { queries: Stream.fromIterable(queries), fingerprint })
