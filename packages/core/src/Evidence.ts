/**
 * What the inference and generation stages read: the selected sessions in chronological order,
 * and their summaries when a summarizer is configured (then stages read the summaries instead).
 */
import type { SessionSummary, SessionView } from "./Domain.js"

export interface Evidence {
  readonly sessions: ReadonlyArray<SessionView>
  readonly summaries?: ReadonlyArray<SessionSummary>
}
