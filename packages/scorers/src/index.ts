export * as Statistics from "./Statistics.js"
export * as Builtins from "./Builtins.js"
