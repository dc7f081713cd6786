export * as CohereServer from "./CohereServer.js"
export * as LoopbackServer from "./LoopbackServer.js"
export * as OpenAiServer from "./OpenAiServer.js"
export * as TinyBert from "./TinyBert.js"
