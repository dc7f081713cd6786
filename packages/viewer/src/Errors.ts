/** Errors of the results viewer's server. */
import { Schema } from "effect"

export class ViewError extends Schema.TaggedError<ViewError>()("ViewError", {
  status: Schema.Number,
  message: Schema.String
}) {}

export class ViewerNotBuilt extends Schema.TaggedError<ViewerNotBuilt>()("ViewerNotBuilt", { path: Schema.String }) {
  override get message(): string {
    return `the viewer's browser code is not built (${this.path} is missing): run npm run build (or npm install)`
  }
}
