export * as Conformance from "./Conformance.js"
export * as Histories from "./Histories.js"
