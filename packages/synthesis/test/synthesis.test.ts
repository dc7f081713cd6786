/**
 * Synthesis end to end against a scripted model on a loopback OpenAI-compatible server, through
 * the real `openai` provider, the file model cache and the raw file: 3 personas, the output
 * validated and loaded by the dataset loader, a run interrupted mid-way and resumed, malformed
 * answers at every stage, and a real sweep on the result.
 */
import { Dataset } from "@cupid-lab/data"
import { Config as SweepConfig, Runner } from "@cupid-lab/runner"
import { OpenAiServer } from "@cupid-lab/providers/testing"
import { SynthConfig, Synthesis } from "@cupid-lab/synthesis"

import { describe, expect, it } from "@effect/vitest"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Either, Fiber } from "effect"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"

import { answer, type ChatBody, Defect } from "./ScriptedModel.js"

const dirs: Array<string> = []
const tempDir = () => {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-synth-"))
  dirs.push(d)
  return d
}
const cleanup = Effect.addFinalizer(() =>
  Effect.sync(() => {
    for (const d of dirs.splice(0)) fs.rmSync(d, { recursive: true, force: true })
  })
)

const configText = (baseURL: string, seeds: ReadonlyArray<string>, extra = "") => `
seed: 7
out: OUT
cacheDir: CACHE
models:
  writer: { provider: openai, model: scripted-writer, baseURL: "${baseURL}", maxRetries: 0 }
  sim: { provider: openai, model: scripted-sim, baseURL: "${baseURL}", maxRetries: 0 }
roles:
  persona: writer
  user: sim
  assistant: { model: sim, temperature: 0.7 }
personas:
  count: ${seeds.length}
  seeds: ${JSON.stringify(seeds)}
dialogue: { maxTurns: 5 }
concurrency: { personas: 2, sessions: 3 }
prices:
  "openai/scripted-writer": { prompt: 2, completion: 10 }
  "openai/scripted-sim": { prompt: 1, completion: 1 }
${extra}`

const load = (dir: string, text: string) => {
  const file = path.join(dir, "synth.yaml")
  fs.writeFileSync(
    file,
    text.replace("OUT", JSON.stringify(path.join(dir, "out"))).replace("CACHE", JSON.stringify(path.join(dir, "cache")))
  )
  return Either.getOrThrow(SynthConfig.load(file))
}

const goodSeeds = [
  "A hospital pharmacist who checks prescriptions.",
  "A restaurant chef who plans menus.",
  `A ferry engineer who maintains engines ${Defect.sloppy}.`
]

const bodyKey = (r: OpenAiServer.RecordedRequest) => r.rawBody

/**
 * How many answers the file model cache rooted at `dir` holds: its entries are
 * `<dir>/<first two hex digits>/<sha-256 key>.json` (temporary files, renamed into place, end in `.tmp`).
 */
const cacheEntries = (dir: string): number =>
  fs.existsSync(dir)
    ? fs
        .readdirSync(dir, { withFileTypes: true })
        .filter((d) => d.isDirectory())
        .reduce(
          (n, d) => n + fs.readdirSync(path.join(dir, d.name)).filter((f) => /^[0-9a-f]{64}\.json$/.test(f)).length,
          0
        )
    : 0

/** The ids of the personas whose drawn seed contains `marker` (from their raw persona records). */
const personasWith = (out: string, marker: string): ReadonlyArray<string> =>
  fs
    .readFileSync(path.join(out, "raw.jsonl"), "utf8")
    .split("\n")
    .filter((l) => l.includes(`"_tag":"persona"`) && l.includes(marker))
    .map((l) => `persona_${String((JSON.parse(l) as { persona: number }).persona + 1).padStart(3, "0")}`)

describe("Synthesis", () => {
  it.scopedLive(
    "3 personas end to end: instances load with Dataset.open, the validator's findings are reported, a rerun sends nothing and writes the same bytes",
    () =>
      Effect.gen(function* () {
        yield* cleanup
        const server = yield* OpenAiServer.make({ chat: (body) => answer(body as ChatBody).text })
        const dir = tempDir()
        const config = load(dir, configText(server.baseURL, goodSeeds))

        const dry = yield* Synthesis.dryRun(config)
        // Per persona: 1 persona + 1 factors + 13 sessions + 9 checklists (6 other factors, A, A', B)
        // + 12 dialogues x 3 turns x 2 calls = 96; nothing is sent by a dry run.
        expect(dry.usage.total!.calls).toBe(3 * 96)
        expect(server.requests.length).toBe(0)

        const outcome = yield* Synthesis.run(config)
        expect(outcome.failures).toEqual([])
        expect(outcome.personas).toEqual({ total: 3, complete: 3, incomplete: 0 })
        // The scripted dialogues end at turn 3, like the dry run's assumption: the same call count.
        expect(outcome.usage.total!.calls).toBe(3 * 96)
        expect(server.requests.length).toBe(3 * 96)
        expect(outcome.instances.built).toBe(9)
        // The "sloppy" persona: factor 2's sessions never name it, factor 3's user turns quote its
        // preference; each of its instances keeps one of those sessions unless both were dropped.
        const [sloppyId] = personasWith(config.out, Defect.sloppy)
        const sloppy = outcome.excluded.filter((e) => e.id.startsWith(`${sloppyId}:`))
        expect(outcome.excluded.length).toBe(sloppy.length)
        expect(outcome.excluded.length).toBeGreaterThan(0)
        const problems = outcome.excluded.flatMap((e) => e.problems)
        expect(problems.some((p) => /does not name its factor ".* factor 2"/.test(p))).toBe(true)
        expect(problems.some((p) => /6-word run .* of the session's preference/.test(p))).toBe(true)
        expect(outcome.instances.valid).toBe(9 - outcome.excluded.length)

        const validation = JSON.parse(fs.readFileSync(outcome.files.validation, "utf8"))
        expect(validation.summary.valid).toBe(outcome.instances.valid)
        expect(validation.excluded.map((e: { id: string }) => e.id)).toEqual(outcome.excluded.map((e) => e.id))

        const fromParquet = yield* Dataset.loadAll(outcome.files.parquet!)
        const fromJsonl = yield* Dataset.loadAll(outcome.files.jsonl!)
        expect(fromParquet.instances.length).toBe(outcome.instances.valid)
        expect(fromParquet.instances.map((i) => i.id)).toEqual(fromJsonl.instances.map((i) => i.id))
        for (const instance of fromParquet.instances) {
          expect(instance.query.sessions.length).toBe(8)
          const relevant = instance.gold.sessions.filter((s) => s.label === "relevant").length
          expect(relevant).toBe(2)
          if (instance.type === "changing")
            expect(instance.gold.sessions.filter((s) => s.label === "stale").length).toBe(2)
        }

        const bytes = ["instances.jsonl", "instances.parquet", "validation.json", "raw.jsonl"].map((f) =>
          fs.readFileSync(path.join(config.out, f))
        )
        const again = yield* Synthesis.run(config)
        expect(server.requests.length).toBe(3 * 96)
        expect(again.usage.total?.calls ?? 0).toBe(0)
        ;["instances.jsonl", "instances.parquet", "validation.json", "raw.jsonl"].forEach((f, i) =>
          expect(fs.readFileSync(path.join(config.out, f)).equals(bytes[i]!)).toBe(true)
        )

        // Rebuilt from the raw file alone: the same instances.
        fs.rmSync(outcome.files.jsonl!)
        yield* Synthesis.rebuild(config)
        expect(fs.readFileSync(outcome.files.jsonl!).equals(bytes[0]!)).toBe(true)

        // A real sweep on the output.
        const sweepFile = path.join(dir, "sweep.yaml")
        fs.writeFileSync(
          sweepFile,
          [
            "name: on-synthetic",
            `data: { source: ${JSON.stringify(outcome.files.parquet)} }`,
            "pipeline: { retriever: all, inferrer: extractive }",
            "scorers: [{ use: retrieval, ks: [2] }]",
            "sweep: { retriever: [all, { use: recency, k: 2 }, oracle] }",
            `out: ${JSON.stringify(path.join(dir, "sweep-out"))}`,
            `cacheDir: ${JSON.stringify(path.join(dir, "cache"))}`
          ].join("\n")
        )
        const sweepConfig = yield* SweepConfig.load(sweepFile)
        const swept = yield* Runner.sweep(sweepConfig)
        expect(swept.instances).toBe(outcome.instances.valid)
        expect(swept.pairs.failed).toBe(0)
        expect(swept.pairs.done).toBe(3 * outcome.instances.valid)
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.scopedLive(
    "a run interrupted mid-way and resumed repeats no answered call and writes what an uninterrupted run writes",
    () =>
      Effect.gen(function* () {
        yield* cleanup
        const answered = new Set<string>()
        const holdAfter = 70
        // The interrupted run's server: it answers the first `holdAfter` requests and holds every later one.
        const server = yield* OpenAiServer.make({
          chat: (body, request) => {
            if (request.index >= holdAfter) return new Promise<string>(() => {})
            const text = answer(body as ChatBody).text
            answered.add(request.rawBody)
            return text
          }
        })
        // The resumed run's own server (`baseURL` is part of neither the cache keys nor the run's
        // fingerprint): a request the interrupted run sent just before it stopped may still be on
        // its way to `server`, and it must not be counted as one of the resumed run's requests.
        const resumedServer = yield* OpenAiServer.make({ chat: (body) => answer(body as ChatBody).text })
        const dir = tempDir()
        const config = load(dir, configText(server.baseURL, goodSeeds))
        const fiber = yield* Effect.fork(Synthesis.run(config))
        yield* Effect.promise(() => server.waitForRequests(holdAfter + 1))
        // Interrupt only once the client has stored every answer the server sent (one cache entry
        // per answered call): an answer sent but not yet read when the run stops is, rightly, asked
        // again by the rerun. The ceiling only ends a hung test; it is below vitest's (vitest.config.ts)
        // so that the failure says what was missing.
        const ceiling = Date.now() + 300_000
        while (cacheEntries(config.cacheDir) < answered.size) {
          if (Date.now() > ceiling)
            return yield* Effect.dieMessage(
              `the model cache holds ${cacheEntries(config.cacheDir)} entries, not the ${answered.size} answered calls`
            )
          yield* Effect.sleep("20 millis")
        }
        yield* Fiber.interrupt(fiber)
        const firstRun = server.requests.length
        const answeredFirst = new Set(answered)
        expect(answeredFirst.size).toBe(holdAfter)
        // Some units were persisted before the interruption.
        expect(fs.readFileSync(path.join(config.out, "raw.jsonl"), "utf8").split("\n").length).toBeGreaterThan(2)

        const outcome = yield* Synthesis.run(load(dir, configText(resumedServer.baseURL, goodSeeds)))
        const secondRun = resumedServer.requests
        const repeated = secondRun.filter((r) => answeredFirst.has(bodyKey(r)))
        expect(repeated.length).toBe(0)
        // Every request is either answered once or was held (never answered) and asked again.
        expect(firstRun + secondRun.length).toBe(3 * 96 + (firstRun - holdAfter))
        expect(outcome.personas.complete).toBe(3)

        // An uninterrupted run with its own cache gives the same bytes.
        const cleanDir = tempDir()
        const clean = yield* Synthesis.run(load(cleanDir, configText(resumedServer.baseURL, goodSeeds)))
        for (const f of ["instances.jsonl", "instances.parquet", "validation.json", "raw.jsonl"]) {
          expect(fs.readFileSync(path.join(clean.out, f)).equals(fs.readFileSync(path.join(outcome.out, f)))).toBe(true)
        }
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.scopedLive(
    "malformed answers at every stage are recorded failures (stage, persona, reason), never cached, retried on rerun",
    () =>
      Effect.gen(function* () {
        yield* cleanup
        const server = yield* OpenAiServer.make({ chat: (body) => answer(body as ChatBody).text })
        const dir = tempDir()
        const seeds = [
          `A nurse ${Defect.badPersona}.`,
          `A baker ${Defect.badFactors}.`,
          `A pilot ${Defect.missingField}.`,
          `A lawyer ${Defect.leakyRequest}.`,
          `A farmer ${Defect.badChecklist}.`,
          `A teacher ${Defect.neverEnds}.`,
          `A coach ${Defect.badUser}.`,
          "A librarian who runs reading programs."
        ]
        const config = load(dir, configText(server.baseURL, seeds))
        const outcome = yield* Synthesis.run(config)
        const stagesOf = (marker: string) => {
          const ids = personasWith(config.out, marker)
          expect(ids.length).toBe(1)
          return [...new Set(outcome.failures.filter((f) => ids.includes(f.persona)).map((f) => f.stage))].sort()
        }
        // The bad persona answer never reaches the raw file: find its persona by the failure itself.
        expect(outcome.failures.filter((f) => f.stage === "persona").length).toBe(1)
        expect(outcome.failures.find((f) => f.stage === "persona")!.reason).toMatch(/no "Name:" line/)
        expect(stagesOf(Defect.badFactors)).toEqual(["factors"])
        expect(outcome.failures.find((f) => f.stage === "factors")!.reason).toMatch(/not JSON/)
        expect(stagesOf(Defect.missingField)).toEqual(["sessions"])
        expect(outcome.failures.find((f) => f.stage === "sessions" && f.reason.includes("story"))!.session).toBe(2)
        expect(stagesOf(Defect.leakyRequest)).toEqual(["sessions"])
        expect(
          outcome.failures.some((f) => f.stage === "sessions" && /still contains its 6-word run/.test(f.reason))
        ).toBe(true)
        expect(stagesOf(Defect.badChecklist)).toEqual(["checklists"])
        expect(outcome.failures.some((f) => f.stage === "checklists" && /2-4 checklist items/.test(f.reason))).toBe(
          true
        )
        expect(stagesOf(Defect.neverEnds)).toEqual(["dialogues"])
        expect(
          outcome.failures.filter((f) => /did not end the dialogue within maxTurns \(5\)/.test(f.reason)).length
        ).toBe(12)
        expect(stagesOf(Defect.badUser)).toEqual(["dialogues"])
        expect(outcome.failures.some((f) => f.stage === "dialogues" && /not JSON/.test(f.reason))).toBe(true)
        // Only the librarian has no failure.
        expect(outcome.personas.complete).toBe(1)
        const failuresFile = JSON.parse(fs.readFileSync(outcome.files.failures, "utf8"))
        expect(failuresFile.failures.length).toBe(outcome.failures.length)

        // Rerun: the failed units are asked again (nothing malformed was cached), the rest is not.
        const before = server.requests.length
        const again = yield* Synthesis.run(config)
        expect(again.failures).toEqual(outcome.failures)
        const asked = server.requests.slice(before).map((r) => answer(r.body as ChatBody).role)
        expect(asked.filter((r) => r === "persona").length).toBe(1)
        expect(asked.filter((r) => r === "factors").length).toBe(1)
        // The bad checklist persona's 8 marked preferences (its changed preference is unmarked and got
        // a good checklist); the two failed sessions; the simulator's first
        // turn of the 12 dialogues whose answers are prose (the assistant's turn before it is cached).
        // The never-ending dialogues' turns were valid answers: cached, so not asked again.
        expect(asked.filter((r) => r === "checklist").length).toBe(8)
        expect(asked.filter((r) => r === "session").length).toBe(2)
        expect(asked.filter((r) => r === "user").length).toBe(12)
        expect(asked.length).toBe(1 + 1 + 8 + 2 + 12)
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it.scopedLive(
    "validation.modelCheck: one validator call per dialogue; instances whose items the validator finds unhinted are excluded",
    () =>
      Effect.gen(function* () {
        yield* cleanup
        const server = yield* OpenAiServer.make({ chat: (body) => answer(body as ChatBody).text })
        const dir = tempDir()
        const seeds = ["A hospital pharmacist who checks prescriptions.", `A surveyor ${Defect.halfHinted}.`]
        const config = load(dir, configText(server.baseURL, seeds, "validation: { modelCheck: true }"))
        const outcome = yield* Synthesis.run(config)
        // 96 calls per persona plus one validator call per dialogue (12).
        expect(outcome.usage.validator!.calls).toBe(2 * 12)
        expect(outcome.usage.total!.calls).toBe(2 * (96 + 12))
        const [half] = personasWith(config.out, Defect.halfHinted)
        expect(outcome.excluded.map((e) => e.id)).toEqual([
          `${half}:consistent`,
          `${half}:contrastive`,
          `${half}:changing`
        ])
        for (const e of outcome.excluded) {
          expect(e.problems.length).toBe(8)
          expect(e.problems.every((p) => p.endsWith("the validator model finds checklist item 2 not hinted at"))).toBe(
            true
          )
        }
        expect(outcome.instances.valid).toBe(3)
      }).pipe(Effect.provide(NodeContext.layer))
  )

  it("config errors name the file and the key path", () => {
    const bad = SynthConfig.parse(
      "models: { m: { provider: openai, model: x } }\nroles: { persona: m, user: nope, assistant: m }\nsessions: { length: 6 }\nfactors: { count: 2 }\nextra: 1\n",
      "synth.yaml"
    )
    expect(Either.isLeft(bad)).toBe(true)
    if (Either.isLeft(bad))
      expect(bad.left.message).toMatch(/^synth\.yaml: unknown top-level key "extra"; valid keys: cacheDir, /)
    const wrong = SynthConfig.parse(
      "models: { m: { provider: openai, model: x } }\nroles: { persona: m, user: nope, assistant: m }\nsessions: { length: 6 }\nfactors: { count: 2 }\n",
      "synth.yaml"
    )
    expect(Either.isLeft(wrong) && wrong.left.message).toBe(
      [
        'synth.yaml: roles.user: unknown model "nope"; valid choices: m',
        "synth.yaml: sessions.length: expected more than 7 (the current factor's 4 sessions, the contrastive factor's 2, at least one other, and the last session), found 6",
        "synth.yaml: factors.count: expected at least 3 (a contrastive pair and one other factor), found 2"
      ].join("\n")
    )
    const secret = SynthConfig.parse(
      "models: { m: { provider: openai, model: x, apiKey: sk-1 } }\nroles: { persona: m, user: m, assistant: m }\n",
      "s.yaml"
    )
    expect(Either.isLeft(secret) && secret.left.message).toMatch(/^s\.yaml: models\.m\.apiKey: secrets do not belong/)
  })
})
