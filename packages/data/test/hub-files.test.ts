import { describe, expect, it } from "@effect/vitest"
import { Either } from "effect"
import {
  cardMetadata,
  declaredFiles,
  expand,
  listedFiles,
  preferredType,
  splitOfPath
} from "../src/internal/hubFiles.js"

const card = (...yaml: Array<string>) => ["---", ...yaml, "---", "", "# A dataset", ""].join("\n")

/** What the card declares, or the problem's field and reason. */
const declared = (text: string) => {
  const result = Either.flatMap(cardMetadata(text), declaredFiles)
  return Either.isRight(result) ? result.right : { problem: result.left }
}

describe("dataset card: which files the split to read is", () => {
  it("kixlab/CUPID's card: the test split of the default config, a file at the root", () => {
    expect(
      declared(card("configs:", "- config_name: default", "  data_files:", "  - split: test", "    path: test.parquet"))
    ).toEqual({
      patterns: ["test.parquet"],
      rule: "dataset card, config default, split test"
    })
  })

  it("data_files as a string, a list, a list of splits with lists of paths; the test split wins over others", () => {
    expect(declared(card("configs:", "- config_name: default", "  data_files: ./all.jsonl"))).toEqual({
      patterns: ["all.jsonl"],
      rule: "dataset card, config default, split train"
    })
    expect(declared(card("configs:", "- config_name: main", "  data_files: [a.parquet, b.parquet]"))).toEqual({
      patterns: ["a.parquet", "b.parquet"],
      rule: "dataset card, config main, split train"
    })
    expect(
      declared(
        card(
          "configs:",
          "- config_name: other",
          "  data_files: other.parquet",
          "- config_name: main",
          "  default: true",
          "  data_files:",
          "  - split: train",
          "    path: data/train-*",
          "  - split: test",
          "    path: [data/test-0.parquet, data/test-1.parquet]"
        )
      )
    ).toEqual({
      patterns: ["data/test-0.parquet", "data/test-1.parquet"],
      rule: "dataset card, config main, split test"
    })
  })

  it("no front matter, no configs or no data_files: the file list decides", () => {
    expect(declared("# Just prose\n")).toBeUndefined()
    expect(declared(card("license: mit"))).toBeUndefined()
    expect(declared("---\n---\n")).toBeUndefined()
    expect(declared(card("configs:", "- config_name: default", "  sep: ','"))).toBeUndefined()
  })

  it("problems name the field: no default among several configs, several splits and no test, a malformed entry, bad YAML", () => {
    expect(
      declared(
        card("configs:", "- config_name: a", "  data_files: a.parquet", "- config_name: b", "  data_files: b.parquet")
      )
    ).toEqual({
      problem: { field: "configs", reason: "declares configs a, b and none is named default or marked default: true" }
    })
    expect(
      declared(
        card(
          "configs:",
          "- config_name: default",
          "  data_files:",
          "  - split: train",
          "    path: train.parquet",
          "  - split: validation",
          "    path: dev.parquet"
        )
      )
    ).toEqual({
      problem: {
        field: "configs[0].data_files",
        reason: "config default declares splits train, validation and none is test"
      }
    })
    const malformed = declared(card("configs:", "- config_name: default", "  data_files:", "  - split: test"))
    expect(malformed).toEqual({
      problem: {
        field: "configs[0].data_files[0].path",
        reason: "expected string | ReadonlyArray<string>, found nothing (missing field)"
      }
    })
    expect(declared(card("configs: [unclosed"))).toEqual({
      problem: { reason: expect.stringMatching(/^the front matter is not valid YAML \(.+\)$/) }
    })
  })
})

describe("file list: which files the split to read is", () => {
  it("split names as the hub reads them: a folder, or a word of the file name", () => {
    const cases: Array<[string, string | undefined]> = [
      ["test.parquet", "test"],
      ["data/test-00000-of-00001.parquet", "test"],
      ["test/part.jsonl", "test"],
      ["cupid_test.json", "test"],
      ["eval.parquet", "test"],
      ["data/train-00000-of-00002.parquet", "train"],
      ["dev.jsonl", "validation"],
      ["latest.parquet", undefined],
      ["contest/cupid.parquet", undefined],
      ["testimonials.parquet", undefined],
      ["cupid.parquet", undefined]
    ]
    for (const [file, split] of cases) expect(splitOfPath(file), file).toBe(split)
  })

  it("the test split, else the only split; files naming no split count only when none does", () => {
    expect(
      listedFiles([".gitattributes", "README.md", "data/test.jsonl", "data/train.jsonl", "dataset_infos.json"])
    ).toEqual(Either.right({ patterns: ["data/test.jsonl"], rule: "file list, split test" }))
    expect(
      listedFiles(["README.md", "data/train-00001-of-00002.parquet", "data/train-00000-of-00002.parquet", "stats.json"])
    ).toEqual(
      Either.right({
        patterns: ["data/train-00000-of-00002.parquet", "data/train-00001-of-00002.parquet"],
        rule: "file list, split train"
      })
    )
    expect(listedFiles(["README.md", "cupid.parquet", "cupid.jsonl"])).toEqual(
      Either.right({ patterns: ["cupid.parquet"], rule: "file list, the only split (no file names one)" })
    )
    expect(listedFiles(["train.parquet", "validation.parquet"])).toEqual(
      Either.left({ reason: "names splits train, validation in its file names and none is test" })
    )
    expect(listedFiles(["README.md", "data.csv"])).toEqual(
      Either.left({ reason: "has no .parquet, .jsonl or .json file" })
    )
  })

  it("one format per split: parquet, else JSON lines, else JSON", () => {
    expect(preferredType(["test.json", "test.jsonl", "test.ndjson"])).toEqual(["test.jsonl", "test.ndjson"])
    expect(preferredType(["test.json", "test.parquet"])).toEqual(["test.parquet"])
    expect(preferredType(["test.csv", "test.json"])).toEqual(["test.json"])
    expect(preferredType(["test.csv"])).toEqual([])
  })

  it("card patterns expand against the file list: * stays in a folder, ** crosses folders, matches in path order", () => {
    const files = [
      "data/test-1.parquet",
      "data/test-0.parquet",
      "data/sub/test-2.parquet",
      "test.parquet",
      "data/test-0.json"
    ]
    expect(expand(["data/test-*.parquet"], files)).toEqual(["data/test-0.parquet", "data/test-1.parquet"])
    expect(expand(["data/**/test-*.parquet"], files)).toEqual([
      "data/sub/test-2.parquet",
      "data/test-0.parquet",
      "data/test-1.parquet"
    ])
    expect(expand(["data/test-[01].*"], files)).toEqual([
      "data/test-0.json",
      "data/test-0.parquet",
      "data/test-1.parquet"
    ])
    expect(expand(["test.parquet", "*.parquet"], files)).toEqual(["test.parquet"])
    expect(expand(["missing.parquet"], files)).toEqual(["missing.parquet"])
  })
})
