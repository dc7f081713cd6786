export * as ReferenceHarness from "./ReferenceHarness.js"
export * as ScorerConformance from "./ScorerConformance.js"
export * as LocomoReference from "./LocomoReference.js"
export * as LongMemEvalReference from "./LongMemEvalReference.js"
