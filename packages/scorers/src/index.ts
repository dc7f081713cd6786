export * as Statistics from "./Statistics.js"
