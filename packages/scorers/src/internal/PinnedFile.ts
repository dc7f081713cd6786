// The reader of the authors' pinned files lives in core (`PinnedFile`), where the `qa` generator's
// LongMemEval reader uses it too; the judges' prompt modules import it from here.
import { PinnedFile } from "@cupid-lab/core"

export type Source = PinnedFile.Source
export type File = PinnedFile.File
export type Locations = PinnedFile.Locations

export const { fromEnvironment, cacheKey, read } = PinnedFile
