/**
 * The plugins this package ships, as one list the experiments runner registers.
 */
import type { Plugin } from "@cupid-lab/core"
import * as Cost from "./Cost.js"
import * as Judge from "./Judge.js"
import * as LocomoF1 from "./LocomoF1.js"
import * as LocomoJudge from "./LocomoJudge.js"
import * as LongMemEvalJudge from "./LongMemEvalJudge.js"
import * as PrefEvalJudge from "./PrefEvalJudge.js"
import * as PreferenceMatch from "./PreferenceMatch.js"
import * as Retrieval from "./Retrieval.js"
import * as RetrievalAtK from "./RetrievalAtK.js"

export const plugins: ReadonlyArray<Plugin.AnyPlugin> = [
  Retrieval.plugin,
  RetrievalAtK.plugin,
  PreferenceMatch.plugin,
  Judge.plugin,
  LocomoF1.plugin,
  LocomoJudge.plugin,
  LongMemEvalJudge.plugin,
  PrefEvalJudge.plugin,
  Cost.plugin
]
