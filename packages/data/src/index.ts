export * as Dataset from "./Dataset.js"
export * as Synthetic from "./Synthetic.js"
export * as Tasks from "./Tasks.js"
export * as Transform from "./Transform.js"
