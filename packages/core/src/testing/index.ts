export * as FaultyFileSystem from "./FaultyFileSystem.js"
export * as NodeTest from "./NodeTest.js"
