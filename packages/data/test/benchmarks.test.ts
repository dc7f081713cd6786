/**
 * LongMemEval, LoCoMo and PrefEval read in their published formats, from hand-written fixtures
 * (test/fixtures): the mapping onto the domain, what stays gold, questions without evidence, and
 * errors that name the file, row and field.
 */
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, describe, expect } from "@effect/vitest"
import { NodeTest } from "@cupid-lab/core/testing"
import type { Domain } from "@cupid-lab/core"
import { Effect, Either } from "effect"
import * as Dataset from "../src/Dataset.js"

import { startHub } from "./hubServer.js"

const fixtures = path.join(import.meta.dirname, "fixtures")
const lmeS = path.join(fixtures, "longmemeval", "longmemeval_s_tiny.json")
const lmeOracle = path.join(fixtures, "longmemeval", "longmemeval_oracle_tiny.json")
const locomo = path.join(fixtures, "locomo", "locomo_tiny.json")
const prefeval = path.join(fixtures, "prefeval")

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-benchmarks-"))
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

/** A copy of a fixture with `edit` applied to its parsed JSON. */
const edited = (fixture: string, name: string, edit: (data: any) => void): string => {
  const data = JSON.parse(fs.readFileSync(fixture, "utf8"))
  edit(data)
  const file = path.join(dir, name)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, JSON.stringify(data, null, 2))
  return file
}

const failure = (source: string, options?: Dataset.LoadOptions) =>
  Effect.map(Effect.either(Dataset.loadAll(source, options)), (e) => (Either.isLeft(e) ? e.left.message : "no error"))

const byId = (instances: ReadonlyArray<Domain.Instance>) => new Map(instances.map((i) => [i.id, i]))
const labels = (i: Domain.Instance) => i.gold.sessions.map((g) => g.label)

describe("longmemeval:<file>", () => {
  NodeTest.it.effect("a question is an instance; its dated haystack is the history; answer sessions are relevant", () =>
    Effect.gen(function* () {
      const opened = yield* Dataset.open(`longmemeval:${lmeS}`)
      expect(opened.benchmark).toBe("longmemeval")
      expect(opened.resolved).toBe(lmeS)
      const { instances, skipped } = yield* Dataset.loadAll(`longmemeval:${lmeS}`)
      expect(skipped).toEqual([])
      expect(instances.map((i) => [i.id, i.type])).toEqual([
        ["q-user-1", "single-session-user"],
        ["q-multi-1", "multi-session"],
        ["q-temporal-1_abs", "temporal-reasoning"],
        ["q-assistant-1", "single-session-assistant"]
      ])
      const user = byId(instances).get("q-user-1")!
      expect(user.personaId).toBe("q-user-1")
      expect(user.query.request).toBe("What breed is my dog?")
      expect(user.query.date).toBe("2023-05-30T10:00")
      expect(user.query.sessions.map((s) => [s.id, s.index, s.date])).toEqual([
        ["s1", 0, "2023-05-01T09:12"],
        ["s2", 1, "2023-05-08T18:40"],
        ["s3", 2, "2023-05-15T07:05"],
        ["s4", 3, "2023-05-22T21:30"]
      ])
      // What a retriever sees: roles and text only, no has_answer, no haystack ids (they spell "answer_").
      expect(Object.keys(user.query.sessions[2]!).sort()).toEqual(["date", "dialogue", "hash", "id", "index"])
      expect(user.query.sessions[2]!.dialogue[0]).toEqual({
        role: "user",
        content: "My border collie keeps chewing shoes. Any tips?"
      })
      expect(JSON.stringify(user.query)).not.toContain("answer_")
      expect(JSON.stringify(user.query)).not.toContain("has_answer")
      expect(user.gold.sessions[2]).toEqual({
        id: "s3",
        factor: "",
        preference: "",
        label: "relevant",
        sourceId: "answer_u1_1",
        evidenceTurns: [0]
      })
      expect(labels(user)).toEqual(["other", "other", "relevant", "other"])
      expect(user.gold.answer).toBe("A border collie")
      expect(user.gold.withoutEvidence).toBeUndefined()

      const multi = byId(instances).get("q-multi-1")!
      expect(labels(multi)).toEqual(["relevant", "other", "relevant"])
      expect(multi.gold.sessions.map((g) => g.evidenceTurns)).toEqual([[0], undefined, [2]])
      expect(multi.gold.answer).toBe("2")
      // The assistant's turn carries the evidence: a turn label of either role is kept.
      expect(byId(instances).get("q-assistant-1")!.gold.sessions[0]!.evidenceTurns).toEqual([1])
    })
  )

  NodeTest.it.effect("abstention questions are kept without relevant sessions and say why", () =>
    Effect.gen(function* () {
      const abs = byId((yield* Dataset.loadAll(`longmemeval:${lmeS}`)).instances).get("q-temporal-1_abs")!
      expect(labels(abs)).toEqual(["other", "other"])
      expect(abs.gold.withoutEvidence).toBe("abstention")
      expect(abs.gold.sessions.every((g) => g.evidenceTurns === undefined)).toBe(true)
    })
  )

  NodeTest.it.effect("the oracle file's unsorted haystack is put in date order", () =>
    Effect.gen(function* () {
      const [q] = (yield* Dataset.loadAll(`longmemeval:${lmeOracle}`)).instances
      expect(q!.query.sessions.map((s) => s.date)).toEqual(["2023-09-03T16:20", "2023-10-20T14:00"])
      expect(q!.query.sessions[0]!.dialogue[0]!.content).toBe("Work at the bookshop is tiring lately.")
      expect(q!.gold.sessions.map((g) => g.sourceId)).toEqual(["answer_k1_1", "answer_k1_2"])
    })
  )

  NodeTest.it.effect("types filter by question_type; an unknown type names the benchmark's types", () =>
    Effect.gen(function* () {
      const only = yield* Dataset.loadAll(`longmemeval:${lmeS}`, { types: ["multi-session"] })
      expect(only.instances.map((i) => i.id)).toEqual(["q-multi-1"])
      expect(yield* failure(`longmemeval:${lmeS}`, { types: ["consistent"] })).toBe(
        `longmemeval:${lmeS}, types: expected one of single-session-user, single-session-assistant, single-session-preference, temporal-reasoning, knowledge-update, multi-session, found "consistent"`
      )
    })
  )

  NodeTest.it.effect("errors name the file, the row with its question id, and the field", () =>
    Effect.gen(function* () {
      const dates = edited(lmeS, "lme-dates.json", (d) => d[1].haystack_dates.pop())
      expect(yield* failure(`longmemeval:${dates}`)).toBe(
        `${dates}, row 2 (q-multi-1), haystack_dates: expected 3 entries, one per session of haystack_sessions, found 2`
      )
      const date = edited(lmeS, "lme-date.json", (d) => (d[0].haystack_dates[3] = "May 22nd"))
      expect(yield* failure(`longmemeval:${date}`)).toBe(
        `${date}, row 1 (q-user-1), haystack_dates[3]: expected a date like "2023/05/20 (Sat) 02:21", found "May 22nd"`
      )
      const turn = edited(lmeS, "lme-turn.json", (d) => (d[0].haystack_sessions[2][1].has_answer = "yes"))
      expect(yield* failure(`longmemeval:${turn}`)).toBe(
        `${turn}, row 1 (q-user-1), haystack_sessions[2][1].has_answer: expected boolean, found "yes"`
      )
      const type = edited(lmeS, "lme-type.json", (d) => (d[3].question_type = "abstention"))
      expect(yield* failure(`longmemeval:${type}`)).toContain(
        `${type}, row 4 (q-assistant-1), question_type: expected one of single-session-user,`
      )
      // Under the skip policy the question is listed and the others load.
      const loaded = yield* Dataset.loadAll(`longmemeval:${type}`, { onInvalid: "skip" })
      expect(loaded.instances).toHaveLength(3)
      expect(loaded.skipped).toEqual([
        { row: "4", id: "q-assistant-1", reason: expect.stringMatching(/^question_type: expected one of/) }
      ])
    })
  )

  NodeTest.it.effect(
    "a LongMemEval file read as CUPID rows says how to read it; a missing file says what is expected",
    () =>
      Effect.gen(function* () {
        expect(yield* failure(lmeS)).toBe(
          `${lmeS}, row 1: expected a CUPID row; this looks like a LongMemEval question: read the file as longmemeval:<file>`
        )
        expect(yield* failure("longmemeval:/nope/x.json")).toBe(
          "/nope/x.json: no such file (expected longmemeval:<file> (longmemeval_s.json, longmemeval_m.json, longmemeval_oracle.json or their _cleaned versions, or hf:<owner>/<name>/<file>))"
        )
      })
  )

  NodeTest.it.live(
    "longmemeval:hf:<owner>/<name>/<file> downloads the file through the cache, then reads it offline",
    () =>
      Effect.gen(function* () {
        const bytes = fs.readFileSync(lmeS)
        const hub = yield* Effect.promise(() =>
          startHub({ "xiaowu0162/longmemeval-cleaned": { files: { "longmemeval_s_cleaned.json": bytes } } })
        )
        const cacheDir = path.join(dir, "cache")
        const source = "longmemeval:hf:xiaowu0162/longmemeval-cleaned/longmemeval_s_cleaned.json"
        const loaded = yield* Dataset.loadAll(source, { cacheDir, hfEndpoint: hub.endpoint })
        expect(loaded.instances).toHaveLength(4)
        yield* Effect.promise(hub.close)
        const again = yield* Dataset.open(source, { cacheDir, hfEndpoint: hub.endpoint })
        expect(again.resolved).toBe(
          path.join(cacheDir, "hf", "xiaowu0162", "longmemeval-cleaned", "longmemeval_s_cleaned.json")
        )
        expect(hub.requests).toEqual([
          "/datasets/xiaowu0162/longmemeval-cleaned/resolve/main/longmemeval_s_cleaned.json"
        ])
        expect(yield* failure("longmemeval:hf:xiaowu0162/longmemeval-cleaned", { cacheDir })).toContain(
          "name the file in the repository"
        )
      })
  )
})

describe("locomo:<file>", () => {
  NodeTest.it.effect(
    "a question is an instance; the conversation's dated sessions are its history, shared by its questions",
    () =>
      Effect.gen(function* () {
        const opened = yield* Dataset.open(`locomo:${locomo}`)
        expect(opened.benchmark).toBe("locomo")
        const { instances, skipped } = yield* Dataset.loadAll(`locomo:${locomo}`)
        expect(skipped).toEqual([])
        expect(instances.map((i) => `${i.id} ${i.type}`)).toEqual([
          "conv-1:q1 single-hop",
          "conv-1:q2 temporal",
          "conv-1:q3 multi-hop",
          "conv-1:q4 open-domain",
          "conv-1:q5 adversarial",
          "conv-1:q6 single-hop",
          "conv-1:q7 single-hop",
          "conv-1:q8 single-hop",
          "conv-2:q1 single-hop"
        ])
        const q1 = instances[0]!
        expect(q1.personaId).toBe("conv-1")
        expect(q1.query.date).toBeUndefined()
        // Session 8 has a date and no dialogue: it is not a session.
        expect(q1.query.sessions.map((s) => s.date)).toEqual([
          "2023-05-02T13:00",
          "2023-05-10T09:15",
          "2023-05-21T18:30",
          "2023-06-03T11:05",
          "2023-06-14T20:45",
          "2023-07-01T16:20",
          "2023-07-15T10:10"
        ])
        expect(q1.query.sessions[0]!.dialogue).toEqual([
          { role: "user", speaker: "Ana", content: "Hi Ben! On Saturday I adopted a kitten named Pixel." },
          { role: "assistant", speaker: "Ben", content: "Congrats! What color is she?" },
          { role: "user", speaker: "Ana", content: "Grey with white paws." }
        ])
        expect(q1.query.sessions[2]!.dialogue[2]!.content).toBe(
          "Yes, and we booked a pottery workshop together. [image: a photo of a clay bowl on a wheel]"
        )
        expect(instances[1]!.query.sessions).toBe(q1.query.sessions)
        expect(q1.query.key).toBe(instances[7]!.query.key)
        expect(q1.query.key).not.toBe(instances[8]!.query.key)
        expect(q1.gold.sessions[0]).toEqual({
          id: "s1",
          factor: "",
          preference: "",
          label: "relevant",
          sourceId: "session_1",
          evidenceTurns: [0]
        })
        expect(instances[6]!.gold.answer).toBe("30")
      })
  )

  NodeTest.it.effect("evidence ids name sessions and turns; one string may hold several", () =>
    Effect.gen(function* () {
      const i = byId((yield* Dataset.loadAll(`locomo:${locomo}`)).instances)
      expect(labels(i.get("conv-1:q3")!)).toEqual(["other", "other", "relevant", "other", "relevant", "other", "other"])
      const q4 = i.get("conv-1:q4")!
      expect(labels(q4)).toEqual(["other", "relevant", "other", "other", "other", "relevant", "other"])
      expect(q4.gold.sessions.map((g) => g.evidenceTurns)).toEqual([
        undefined,
        [2],
        undefined,
        undefined,
        undefined,
        [0],
        undefined
      ])
    })
  )

  NodeTest.it.effect(
    "adversarial questions and questions whose evidence names no turn are kept, without relevant sessions",
    () =>
      Effect.gen(function* () {
        const i = byId((yield* Dataset.loadAll(`locomo:${locomo}`)).instances)
        const adversarial = i.get("conv-1:q5")!
        expect(adversarial.gold.withoutEvidence).toBe("adversarial")
        expect(labels(adversarial).includes("relevant")).toBe(false)
        expect(adversarial.gold.answer).toBeUndefined()
        const unresolved = i.get("conv-1:q6")!
        expect(unresolved.gold.withoutEvidence).toBe("unlabelled")
        expect(unresolved.gold.unresolvedEvidence).toEqual(["D9:1"])
      })
  )

  NodeTest.it.effect(
    "errors name the file, the row with its sample id, and the field; a bad question is skipped alone",
    () =>
      Effect.gen(function* () {
        const evidence = edited(locomo, "locomo-evidence.json", (d) => (d[0].qa[1].evidence = "D4:1"))
        expect(yield* failure(`locomo:${evidence}`)).toBe(
          `${evidence}, row 1 (conv-1), qa[1].evidence: expected an array, found "D4:1"`
        )
        const skipped = yield* Dataset.loadAll(`locomo:${evidence}`, { onInvalid: "skip" })
        expect(skipped.instances).toHaveLength(8)
        expect(skipped.skipped).toEqual([
          { row: "1", id: "conv-1:q2", reason: 'qa[1].evidence: expected an array, found "D4:1"' }
        ])
        const category = edited(locomo, "locomo-category.json", (d) => (d[1].qa[0].category = 6))
        expect(yield* failure(`locomo:${category}`)).toBe(
          `${category}, row 2 (conv-2), qa[0].category: expected one of 1, 2, 3, 4, 5, found 6`
        )
        const date = edited(locomo, "locomo-date.json", (d) => delete d[0].conversation.session_3_date_time)
        expect(yield* failure(`locomo:${date}`)).toBe(
          `${date}, row 1 (conv-1), conversation.session_3_date_time: expected a date like "1:56 pm on 8 May, 2023", found nothing (missing field)`
        )
        const speaker = edited(locomo, "locomo-speaker.json", (d) => (d[1].conversation.session_2[1].speaker = "Kay"))
        expect(yield* failure(`locomo:${speaker}`)).toBe(
          `${speaker}, row 2 (conv-2), conversation.session_2[1].speaker: expected "Kai" or "Lena" (speaker_a, speaker_b), found "Kay"`
        )
        const text = edited(locomo, "locomo-text.json", (d) => delete d[0].conversation.session_5[2].text)
        expect(yield* failure(`locomo:${text}`)).toBe(
          `${text}, row 1 (conv-1), conversation.session_5[2].text: expected string, found nothing (missing field)`
        )
      })
  )
})

describe("prefeval:<dir>", () => {
  NodeTest.it.effect(
    "an entry is an instance: its preference conversation first and relevant, then the distractor conversations",
    () =>
      Effect.gen(function* () {
        const opened = yield* Dataset.open(`prefeval:${prefeval}`)
        expect(opened.benchmark).toBe("prefeval")
        expect(opened.resolved).toBe(path.join(prefeval, "benchmark_dataset"))
        const { instances, skipped } = yield* Dataset.loadAll(`prefeval:${prefeval}`)
        expect(skipped).toEqual([])
        expect(instances.map((i) => `${i.id} ${i.type}`)).toEqual([
          "explicit/travel_hotel:1 explicit",
          "explicit/travel_hotel:2 explicit",
          "implicit-choice/travel_hotel:1 implicit-choice",
          "implicit-persona/travel_hotel:1 implicit-persona"
        ])
        const [explicit, , choice, persona] = instances
        expect(explicit!.query.request).toBe("Can you recommend a hotel for a weekend in Edinburgh?")
        expect(explicit!.query.sessions.map((s) => s.dialogue.length)).toEqual([1, 4, 2, 4])
        expect(explicit!.query.sessions[0]!.dialogue).toEqual([
          { role: "user", content: "I only stay in hotels that allow dogs, since my terrier travels with me." }
        ])
        expect(labels(explicit!)).toEqual(["relevant", "other", "other", "other"])
        expect(explicit!.gold.preference).toBe(
          "I only stay in hotels that allow dogs, since my terrier travels with me."
        )
        expect(choice!.query.sessions[0]!.dialogue.map((m) => m.role)).toEqual([
          "user",
          "assistant",
          "user",
          "assistant"
        ])
        expect(persona!.query.sessions[0]!.dialogue.map((m) => m.content)[2]).toBe(
          "The one with long ramps instead of stairs; my chair rolls right in."
        )
        expect(JSON.stringify(choice!.query)).not.toContain("family-run guesthouses")
        // The distractor sessions are the same objects for every instance.
        expect(choice!.query.sessions[1]).toBe(explicit!.query.sessions[1])
      })
  )

  NodeTest.it.effect(
    "turns=<n> keeps the first n user-assistant pairs of the distractors, as PrefEval's inter-turns",
    () =>
      Effect.gen(function* () {
        const two = (yield* Dataset.loadAll(`prefeval:${prefeval},turns=2`)).instances[0]!
        expect(two.query.sessions.map((s) => s.dialogue.length)).toEqual([1, 4])
        const four = (yield* Dataset.loadAll(`prefeval:${prefeval},turns=4`)).instances[0]!
        expect(four.query.sessions.map((s) => s.dialogue.length)).toEqual([1, 4, 2, 2])
        expect(four.query.sessions[3]!.dialogue[1]!.content).toBe(
          "A function that keeps access to the variables of the scope it was created in."
        )
        const all = yield* Dataset.open(`prefeval:${prefeval}`)
        expect((yield* Dataset.open(`prefeval:${prefeval},turns=4`)).fingerprint).not.toBe(all.fingerprint)
      })
  )

  NodeTest.it.effect("topics=<a>+<b> keeps those topics' files, with a fingerprint of their own", () =>
    Effect.gen(function* () {
      // Two topics: the fixture's travel_hotel, and a copy of its explicit file as travel_restaurant.
      const root = path.join(dir, "prefeval-topics")
      fs.cpSync(prefeval, root, { recursive: true })
      const explicit = path.join(root, "benchmark_dataset", "explicit_preference")
      fs.copyFileSync(path.join(explicit, "travel_hotel.json"), path.join(explicit, "travel_restaurant.json"))
      const every = yield* Dataset.loadAll(`prefeval:${root},turns=2`)
      const one = yield* Dataset.loadAll(`prefeval:${root},turns=2,topics=travel_restaurant`)
      const hotel = every.instances.filter((i) => i.id.includes("travel_hotel"))
      expect(one.instances.map((i) => i.id)).toEqual(
        every.instances.filter((i) => i.id.includes("travel_restaurant")).map((i) => i.id)
      )
      expect(one.instances.length).toBe(every.instances.length - hotel.length)
      // Options in either order; both topics are every topic, read with a fingerprint naming them.
      const both = yield* Dataset.open(`prefeval:${root},topics=travel_restaurant+travel_hotel,turns=2`)
      const all = yield* Dataset.open(`prefeval:${root},turns=2`)
      const restaurant = yield* Dataset.open(`prefeval:${root},turns=2,topics=travel_restaurant`)
      expect(new Set([both.fingerprint, all.fingerprint, restaurant.fingerprint]).size).toBe(3)
      expect(yield* failure(`prefeval:${root},topics=travel_hotels`)).toBe(
        `prefeval:${root},topics=travel_hotels: no topic "travel_hotels" in ${path.join(root, "benchmark_dataset")}: expected topics=<name>[+<name>...] of travel_hotel, travel_restaurant`
      )
      expect(yield* failure(`prefeval:${root},turn=2`)).toContain(`unknown option "turn=2": expected prefeval:<dir>`)
    })
  )

  NodeTest.it.effect("errors name the topic file, the entry and the field, or the missing folder", () =>
    Effect.gen(function* () {
      const root = path.join(dir, "prefeval-bad")
      fs.cpSync(prefeval, root, { recursive: true })
      const topic = path.join(root, "benchmark_dataset", "explicit_preference", "travel_hotel.json")
      const data = JSON.parse(fs.readFileSync(topic, "utf8"))
      delete data[1].question
      fs.writeFileSync(topic, JSON.stringify(data))
      expect(yield* failure(`prefeval:${root}`)).toBe(
        `${path.join(root, "benchmark_dataset")}, row explicit_preference/travel_hotel.json:2, question: expected string, found nothing (missing field)`
      )
      const skipped = yield* Dataset.loadAll(`prefeval:${root}`, { onInvalid: "skip" })
      expect(skipped.skipped).toEqual([
        {
          row: "explicit_preference/travel_hotel.json:2",
          id: "explicit/travel_hotel:2",
          reason: "question: expected string, found nothing (missing field)"
        }
      ])
      fs.rmSync(path.join(root, "benchmark_dataset", "filtered_inter_turns.json"))
      expect(yield* failure(`prefeval:${root}`)).toBe(
        `${root}: not a PrefEval data folder: expected filtered_inter_turns.json in it or in its benchmark_dataset folder (prefeval:<dir>[,turns=<n>][,topics=<topic>[+<topic>...]] (PrefEval's benchmark_dataset folder, or the repository holding it; topics by file name, e.g. travel_restaurant))`
      )
    })
  )
})
