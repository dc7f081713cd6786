/**
 * The summarization stage: one summary (context bullets, preference bullets) per session.
 *
 * @example
 * import { Summarizer } from "@cupid-lab/core"
 * const summary = yield* summarizer.summarize(session)
 */
import { Context, type Effect } from "effect"
import type { SessionSummary, SessionView } from "./Domain.js"
import type { StageError } from "./Errors.js"

export interface Service {
  readonly summarize: (session: SessionView) => Effect.Effect<SessionSummary, StageError>
}

export class Summarizer extends Context.Tag("@cupid-lab/core/Summarizer")<Summarizer, Service>() {}
