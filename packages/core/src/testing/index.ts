export * as FaultyFileSystem from "./FaultyFileSystem.js"
export * as NodeTest from "./NodeTest.js"
export * as ReferenceCheckout from "./ReferenceCheckout.js"
