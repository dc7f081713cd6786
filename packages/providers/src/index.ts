export * as Builtins from "./Builtins.js"
