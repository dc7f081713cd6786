/**
 * `cupid-lab data ...` through the compiled CLI (packages/experiments/dist/cli.mjs, built by
 * tools/build-cli.mjs when a source is newer), as a child process: statistics worked out by hand,
 * exit codes 0 / 1 (data error) / 2 (usage error), and a download from a loopback hub.
 */
import { CompiledCli, Subprocess } from "@cupid-lab/core/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { createHash } from "node:crypto"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import * as CupidParquet from "../src/CupidParquet.js"
import * as Synthetic from "../src/Synthetic.js"
import { cupidCard, startHub } from "./hubServer.js"

let dir: string
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url))

interface Result {
  readonly code: number | null
  readonly out: string
  readonly err: string
}

/** `cupid-lab data <argv>` to its end, with `env` added; the test process stays free to serve HTTP meanwhile. */
const cliWith = async (env: Readonly<Record<string, string>>, ...argv: Array<string>): Promise<Result> => {
  const r = await Subprocess.run(process.execPath, [CompiledCli.entry, "data", ...argv], {
    cwd: dir,
    env: { ...process.env, FORCE_COLOR: "0", ...env }
  })
  return { code: r.code, out: r.stdout.replace(/\n$/, ""), err: r.stderr.replace(/\n$/, "") }
}

const cli = (...argv: Array<string>): Promise<Result> => cliWith({}, ...argv)

const message = (content: string, role: "user" | "assistant" = "user") => ({ role, content })

/**
 * Two instances whose statistics are worked out by hand (Tokens.count on "User: ..." lines):
 *   "User: Plan it."                     -> User : Plan it .            = 5 tokens
 *   "User: Hi\nAssistant: Hello there"    -> User : Hi Assistant(2) : Hello there = 8 tokens
 *   "User: Ok"                            -> User : Ok                   = 3 tokens
 * p1:consistent = [F/P, G/P], current F/P: relevant at 1, other at 2; history 13 tokens.
 * p1:changing   = [F/P, G/P, F/Q], current F/Q: stale at 1, other at 2, relevant at 3; history 16.
 * Line 3 has an unknown instance type.
 */
const handMade = [
  {
    persona_id: "p1",
    instance_type: "consistent",
    current_request: "Plan the next one.",
    current_context_factor: "F",
    current_contextual_preference: "P",
    current_checklist: ["P?"],
    prior_interactions: [
      { context_factor: "F", contextual_preference: "P", dialogue: [message("Plan it.")] },
      {
        context_factor: "G",
        contextual_preference: "P",
        dialogue: [message("Hi"), message("Hello there", "assistant")]
      }
    ]
  },
  {
    persona_id: "p1",
    instance_type: "changing",
    current_request: "Plan the next one.",
    current_context_factor: "F",
    current_contextual_preference: "Q",
    current_checklist: ["Q?"],
    prior_interactions: [
      { context_factor: "F", contextual_preference: "P", dialogue: [message("Plan it.")] },
      {
        context_factor: "G",
        contextual_preference: "P",
        dialogue: [message("Hi"), message("Hello there", "assistant")]
      },
      { context_factor: "F", contextual_preference: "Q", dialogue: [message("Ok")] }
    ]
  },
  { persona_id: "p2", instance_type: "later" }
]

beforeAll(async () => {
  await CompiledCli.build()
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "cupid-cli-"))
  fs.writeFileSync(path.join(dir, "hand.jsonl"), handMade.map((r) => JSON.stringify(r)).join("\n") + "\n")
})

afterAll(() => fs.rmSync(dir, { recursive: true, force: true }))

describe("data inspect", () => {
  it("prints hand-computed statistics and the skipped rows", async () => {
    const file = path.join(dir, "hand.jsonl")
    const r = await cli("inspect", "--data", file, "--on-invalid", "skip")
    const sha = createHash("sha256").update(fs.readFileSync(file)).digest("hex")
    expect(r.code).toBe(0)
    expect(r.out).toBe(
      [
        `source: ${file}`,
        "benchmark: cupid",
        `fingerprint: ${sha}`,
        "instances: 2 (consistent 1, contrastive 0, changing 1)",
        "sessions per instance: min 2, mean 2.5, max 3",
        "tokens per session: min 3, mean 5.8, max 8",
        "tokens per history: min 13, mean 14.5, max 16",
        "relevance labels per instance (mean; total in parentheses):",
        "  type         relevant       stale          other",
        "  consistent   1.00 (1)       0.00 (0)       1.00 (1)",
        "  changing     1.00 (1)       1.00 (1)       1.00 (1)",
        "  all          1.00 (2)       0.50 (1)       1.00 (2)",
        "instances without a relevant session: 0",
        "positions of relevant sessions (1 = oldest):",
        `  1 | ${"#".repeat(40)} 1`,
        `  2 | ${" ".repeat(40)} 0`,
        `  3 | ${"#".repeat(40)} 1`,
        "mean relevant position: 2.00 (relative to history length: 0.75, 1 = most recent)",
        "skipped rows: 1",
        '  row 3 (p2:later): instance_type: expected one of consistent, contrastive, changing, found "later"'
      ].join("\n")
    )
  })

  it("counts the instances none of whose sessions is relevant, under exact string equality of factor and preference", async () => {
    const [consistent, changing] = handMade as [(typeof handMade)[0], (typeof handMade)[0]]
    const rows = [
      consistent,
      // The same preference but for a trailing space: not relevant, so this changing instance has none.
      { ...changing, current_contextual_preference: "Q " },
      // The factor differs in case only: nothing relevant either.
      { ...consistent, persona_id: "p2", current_context_factor: "f" },
      { ...consistent, persona_id: "p3" }
    ]
    const file = path.join(dir, "no-relevant.jsonl")
    fs.writeFileSync(file, rows.map((r) => JSON.stringify(r)).join("\n") + "\n")
    const r = await cli("inspect", "--data", file)
    expect(r.code).toBe(0)
    const lines = r.out.split("\n")
    expect(lines).toContain("instances without a relevant session: 2 (p1:changing, p2:consistent)")
    expect(lines).toContain("  all          0.50 (2)       0.50 (2)       1.25 (5)")
  })

  it("with the default fail policy a bad row is exit code 1 and names file, row and field", async () => {
    const file = path.join(dir, "hand.jsonl")
    const r = await cli("inspect", "--data", file)
    expect(r.code).toBe(1)
    expect(r.err).toBe(
      `error: ${file}, row 3, instance_type: expected one of consistent, contrastive, changing, found "later"`
    )
  })

  it("generate then inspect a small synthetic file: CUPID's label counts per type", async () => {
    const out = path.join(dir, "gen.jsonl")
    const g = await cli(
      "generate",
      "--out",
      out,
      "--personas",
      "2",
      "--sessions",
      "8",
      "--seed",
      "4",
      "--difficulty",
      "easy"
    )
    expect(g.code).toBe(0)
    const sha = createHash("sha256").update(fs.readFileSync(out)).digest("hex")
    expect(g.out).toBe(
      [
        `wrote 6 rows to ${out}`,
        "source: synthetic:personas=2,sessions=8,seed=4,position=spread,contrastive=0.1,stale=0.1,types=consistent+contrastive+changing,difficulty=easy",
        `sha256: ${sha}`
      ].join("\n")
    )
    expect(fs.readFileSync(out, "utf8")).toBe(
      [...Synthetic.generate({ ...Synthetic.defaults, personas: 2, seed: 4, difficulty: "easy" })]
        .map((r) => JSON.stringify(r) + "\n")
        .join("")
    )

    const r = await cli("inspect", "--data", out, "--types", "consistent,changing")
    expect(r.code).toBe(0)
    const lines = r.out.split("\n")
    expect(lines).toContain("instances: 4 (consistent 2, contrastive 0, changing 2)")
    expect(lines).toContain("sessions per instance: min 8, mean 8, max 8")
    expect(lines).toContain("  consistent   2.00 (4)       0.00 (0)       6.00 (12)")
    expect(lines).toContain("  changing     2.00 (4)       2.00 (4)       4.00 (8)")
    expect(lines.filter((l) => /^  [1-8] \| /.test(l)).length).toBe(8)
    expect(lines.at(-1)).toBe("skipped rows: 0")

    const hard = path.join(dir, "hard.jsonl")
    const h = await cli("generate", "--out", hard, "--personas", "2", "--seed", "4", "--spec", "relevant=3,topic=1")
    expect(h.code).toBe(0)
    expect(h.out.split("\n")[1]).toBe(
      "source: synthetic:personas=2,sessions=8,seed=4,position=spread,contrastive=0.1,stale=0.1,types=consistent+contrastive+changing,difficulty=hard,topic=1,relevant=3-3"
    )
    const hi = await cli("inspect", "--data", hard, "--types", "consistent")
    expect(hi.out.split("\n")).toContain("  consistent   3.00 (6)       0.00 (0)       5.00 (10)")
  })

  it("a synthetic source inspects without a file", async () => {
    const r = await cli(
      "inspect",
      "--data",
      "synthetic:personas=1,sessions=60,position=recent,difficulty=easy",
      "--limit",
      "2"
    )
    expect(r.code).toBe(0)
    expect(r.out).toContain("instances: 2 (consistent 1, contrastive 1, changing 0)")
    // 60 positions are shown as 10 bins of 6; the two most recent fall in the last bin.
    expect(r.out).toContain(`  55-60 | ${"#".repeat(40)} 4`)
  })
})

describe("data inspect on the other benchmarks", () => {
  const fixtures = path.join(repoRoot, "packages", "data", "test", "fixtures")

  it("LoCoMo: its categories, its questions without evidence and the evidence ids that name no turn", async () => {
    const file = path.join(fixtures, "locomo", "locomo_tiny.json")
    const r = await cli("inspect", "--data", `locomo:${file}`)
    expect(r.code).toBe(0)
    const lines = r.out.split("\n")
    expect(lines.slice(0, 2)).toEqual([`source: locomo:${file} (${file})`, "benchmark: locomo"])
    expect(lines).toContain("instances: 9 (multi-hop 1, temporal 1, open-domain 1, single-hop 5, adversarial 1)")
    expect(lines).toContain("dated: 58 of 58 sessions, 0 of 9 requests")
    expect(lines).toContain(
      "questions without evidence (kept, not scored by retrieval metrics): 2 [adversarial 1, unlabelled 1] (conv-1:q5, conv-1:q6)"
    )
    expect(lines).toContain('evidence ids that name no turn of the history: 1 (conv-1:q6 "D9:1")')
    expect(lines).toContain("instances without a relevant session: 0")
    expect(lines).toContain("  multi-hop    2.00 (2)       0.00 (0)       5.00 (5)")
    expect(lines).toContain("  adversarial  0.00 (0)       0.00 (0)       7.00 (7)")
  })

  it("LongMemEval and PrefEval: their types, abstention questions, dates; an unknown type is a data error (1)", async () => {
    const lme = path.join(fixtures, "longmemeval", "longmemeval_s_tiny.json")
    const r = await cli("inspect", "--data", `longmemeval:${lme}`)
    expect(r.code).toBe(0)
    const lines = r.out.split("\n")
    expect(lines).toContain(
      "instances: 4 (single-session-user 1, single-session-assistant 1, single-session-preference 0, temporal-reasoning 1, knowledge-update 0, multi-session 1)"
    )
    expect(lines).toContain("dated: 11 of 11 sessions, 4 of 4 requests")
    expect(lines).toContain(
      "questions without evidence (kept, not scored by retrieval metrics): 1 [abstention 1] (q-temporal-1_abs)"
    )
    expect(lines).toContain("evidence ids that name no turn of the history: 0")

    const p = await cli(
      "inspect",
      "--data",
      `prefeval:${path.join(fixtures, "prefeval")}`,
      "--types",
      "explicit,implicit-persona"
    )
    expect(p.code).toBe(0)
    expect(p.out.split("\n")).toContain("instances: 3 (explicit 2, implicit-choice 0, implicit-persona 1)")
    expect(p.out.split("\n")).toContain("questions without evidence (kept, not scored by retrieval metrics): 0")

    const bad = await cli("inspect", "--data", `longmemeval:${lme}`, "--types", "later")
    expect(bad.code).toBe(1)
    expect(bad.err).toBe(
      `error: longmemeval:${lme}, types: expected one of single-session-user, single-session-assistant, single-session-preference, temporal-reasoning, knowledge-update, multi-session, found "later"`
    )
  })
})

describe("data: usage errors", () => {
  it("bad flags, commands and values print a clear message and name the help to read, with exit code 2", async () => {
    const x = path.join(dir, "x.jsonl")
    const cases: Array<[Array<string>, string, string]> = [
      [["inspect", "--bogus"], "Received unknown argument: '--bogus'", "data inspect"],
      [["frobnicate"], "Invalid subcommand", "data"],
      [["download", "--personas", "3"], "Expected to find option: '--data'", "data download"],
      [["inspect", "extra"], "Received unknown argument: 'extra'", "data inspect"],
      [["generate"], "Expected to find option: '--out'", "data generate"],
      [["generate", "--out", x, "--sessions", "5"], "--sessions: expected an integer from 8 to 10000", "data generate"],
      [["generate", "--out", x, "--seed", "abc"], '--seed: expected a number, found "abc"', "data generate"],
      [["generate", "--out", x, "--spec", "relevant=lots"], "--spec: ", "data generate"],
      [["inspect", "--types", " , "], '--types: expected one or more instance types, found " , "', "data inspect"],
      [["inspect", "--on-invalid", "ignore"], '--on-invalid: expected fail or skip, found "ignore"', "data inspect"],
      [
        ["download", "--data", "sample"],
        '--data: expected an hf: source such as hf:kixlab/CUPID, found "sample"',
        "data download"
      ],
      [[], "data needs a subcommand: inspect, download or generate", "data"]
    ]
    for (const [argv, first, help] of cases) {
      const r = await cli(...argv)
      expect(r.code, argv.join(" ")).toBe(2)
      expect(r.err.split("\n")[0], argv.join(" ")).toContain(first)
      expect(r.err.split("\n").at(-1), argv.join(" ")).toBe(`(cupid-lab ${help} --help lists the options)`)
      expect(r.out, argv.join(" ")).toBe("")
    }
    expect(fs.existsSync(x)).toBe(false)
  })

  it("--help describes the subcommands and every option", async () => {
    const help = await cli("--help")
    expect(help.code).toBe(0)
    expect(help.out).toContain("- inspect [--data source]")
    expect(help.out).toContain("- generate --out file.jsonl")
    const generate = await cli("generate", "--help")
    expect(generate.code).toBe(0)
    expect(generate.out).toContain("prior sessions per instance, 8 to 10000 (default 8)")
  })
})

describe("data download", () => {
  it("kixlab/CUPID: the card's test.parquet from a loopback hub, then the cached copy without a request; a malformed hf: source is a data error (1)", async () => {
    await CupidParquet.write(path.join(dir, "hub.parquet"), [
      ...Synthetic.generate({ ...Synthetic.defaults, personas: 1 })
    ])
    const bytes = fs.readFileSync(path.join(dir, "hub.parquet"))
    const hub = await startHub({
      "kixlab/CUPID": { card: cupidCard, files: { "test.parquet": bytes, "data/test-00000-of-00001.parquet": bytes } }
    })
    const cacheDir = path.join(dir, "cache")
    const download = () =>
      cli("download", "--data", "hf:kixlab/CUPID", "--cache-dir", cacheDir, "--hf-endpoint", hub.endpoint)
    const first = await download()
    const served = [...hub.requests]
    const second = await download().finally(hub.close)
    const target = path.join(cacheDir, "hf", "kixlab", "CUPID", "test.parquet")
    const sha = createHash("sha256").update(bytes).digest("hex")
    expect(first).toEqual({
      code: 0,
      out: `files: test.parquet (dataset card, config default, split test)\ndownloaded: ${target}\nsha256: ${sha}`,
      err: ""
    })
    expect(served).toEqual([
      "/datasets/kixlab/CUPID/resolve/main/README.md",
      "/datasets/kixlab/CUPID/resolve/main/test.parquet"
    ])
    expect(second).toEqual({
      code: 0,
      out: `files: test.parquet (dataset card, config default, split test, as recorded in the cache)\nalready cached: ${target}\nsha256: ${sha}`,
      err: ""
    })
    expect(hub.requests.length).toBe(2)

    const bad = await cli("download", "--data", "hf:nope")
    expect(bad.code).toBe(1)
    expect(bad.err).toBe(
      "error: hf:nope: expected hf:<owner>/<name> or hf:<owner>/<name>/<path in repo>, e.g. hf:kixlab/CUPID"
    )
  })

  it("the limits on the waits come from CUPID_HTTP_*: a hub that never answers is an error naming the URL, the wait and the limit (1)", async () => {
    const hub = await startHub({}, (url) => url.startsWith("/datasets/kixlab/CUPID/"))
    const cacheDir = path.join(dir, "cache-silent")
    const env = { CUPID_HTTP_FIRST_BYTE_TIMEOUT: "0.3", CUPID_HTTP_RETRIES: "1", CUPID_HTTP_RETRY_DELAY: "0.01" }
    const r = await cliWith(
      env,
      "download",
      "--data",
      "hf:kixlab/CUPID/test.parquet",
      "--cache-dir",
      cacheDir,
      "--hf-endpoint",
      hub.endpoint
    ).finally(hub.close)
    const url = `${hub.endpoint}/datasets/kixlab/CUPID/resolve/main/test.parquet`
    expect(r.code).toBe(1)
    expect(r.err).toBe(
      `error: hf:kixlab/CUPID/test.parquet: could not download ${url} (timed out waiting for the first byte ` +
        "(the response headers): none within 0.3 s (the first-byte limit, CUPID_HTTP_FIRST_BYTE_TIMEOUT); " +
        `gave up after 2 attempts) and there is no cached copy. Download ${url} by hand and save it as ` +
        `${path.join(cacheDir, "hf", "kixlab", "CUPID", "test.parquet")}, or pass --data <file> pointing at a downloaded copy.`
    )
    // The message counts the attempts. The hub sees at most that many: on a busy machine a request
    // the client abandons after 0.3 s may be dropped before the hub has read it.
    expect(hub.requests.length).toBeGreaterThanOrEqual(1)
    expect(hub.requests.length).toBeLessThanOrEqual(2)
    const bad = await cliWith({ CUPID_HTTP_DEADLINE: "never" }, "download", "--data", "hf:kixlab/CUPID/test.parquet")
    expect(bad.code).toBe(1)
    expect(bad.err).toBe(
      'error: hf:kixlab/CUPID/test.parquet: CUPID_HTTP_DEADLINE: expected a number of seconds above 0, found "never"'
    )
  })

  it("a card without configs: the file list's test split; no usable file: an error listing the repository's files", async () => {
    const row = JSON.stringify(handMade[0])
    const hub = await startHub({
      "someone/prose-card": {
        card: "# Prose only\n\nNo front matter here.\n",
        files: {
          ".gitattributes": "",
          "data/test.jsonl": `${row}\n`,
          "data/train.jsonl": `${row}\n`,
          "dataset_infos.json": "{}"
        }
      },
      "someone/unusable": {
        card: "---\nlicense: mit\n---\n",
        files: { ".gitattributes": "", "data.csv": "a,b\n", "notes.txt": "" }
      }
    })
    const cacheDir = path.join(dir, "cache-fallback")
    const fallback = await cli(
      "download",
      "--data",
      "hf:someone/prose-card",
      "--cache-dir",
      cacheDir,
      "--hf-endpoint",
      hub.endpoint
    )
    const unusable = await cli(
      "download",
      "--data",
      "hf:someone/unusable",
      "--cache-dir",
      cacheDir,
      "--hf-endpoint",
      hub.endpoint
    ).finally(hub.close)
    const target = path.join(cacheDir, "hf", "someone", "prose-card", "data", "test.jsonl")
    expect(fallback.code).toBe(0)
    expect(fallback.out.split("\n").slice(0, 2)).toEqual([
      "files: data/test.jsonl (file list, split test)",
      `downloaded: ${target}`
    ])
    expect(fs.readFileSync(target, "utf8")).toBe(`${row}\n`)
    expect(unusable.code).toBe(1)
    expect(unusable.err).toBe(
      "error: hf:someone/unusable: found no file to read: the dataset card declares no files and the file list has no " +
        ".parquet, .jsonl or .json file. Expected the test split (or the only split) of the default config in the dataset " +
        "card's configs, or else, in the file list, .parquet, .jsonl or .json files whose paths name the test split " +
        "(like test.parquet or data/test-00000-of-00001.parquet) or that are its only data files. someone/unusable has 4 files: " +
        "README.md, .gitattributes, data.csv, notes.txt. Name the file to read as hf:someone/unusable/<path in repo>."
    )
    expect(fs.existsSync(path.join(cacheDir, "hf", "someone", "unusable"))).toBe(false)
  })

  it("CUPID-Unverified's layout: the card's only split in two shards, downloaded in order and inspected as one dataset offline", async () => {
    const rows = [...Synthetic.generate({ ...Synthetic.defaults, personas: 2, seed: 9 })]
    await CupidParquet.write(path.join(dir, "shard-0.parquet"), rows.slice(0, 4))
    await CupidParquet.write(path.join(dir, "shard-1.parquet"), rows.slice(4))
    const hub = await startHub({
      "kixlab/CUPID-Unverified": {
        card: [
          "---",
          "configs:",
          "- config_name: default",
          "  data_files:",
          "  - split: train",
          "    path: data/train-*",
          "---",
          ""
        ].join("\n"),
        files: {
          "data/train-00001-of-00002.parquet": fs.readFileSync(path.join(dir, "shard-1.parquet")),
          "data/train-00000-of-00002.parquet": fs.readFileSync(path.join(dir, "shard-0.parquet"))
        }
      }
    })
    const cacheDir = path.join(dir, "cache-unverified")
    const r = await cli(
      "download",
      "--data",
      "hf:kixlab/CUPID-Unverified",
      "--cache-dir",
      cacheDir,
      "--hf-endpoint",
      hub.endpoint
    ).finally(hub.close)
    const repoDir = path.join(cacheDir, "hf", "kixlab", "CUPID-Unverified", "data")
    expect(r.code).toBe(0)
    expect(r.out.split("\n").filter((l) => !l.startsWith("sha256: "))).toEqual([
      "files: data/train-00000-of-00002.parquet, data/train-00001-of-00002.parquet (dataset card, config default, split train)",
      `downloaded: ${path.join(repoDir, "train-00000-of-00002.parquet")}`,
      `downloaded: ${path.join(repoDir, "train-00001-of-00002.parquet")}`
    ])
    const inspected = await cli(
      "inspect",
      "--data",
      "hf:kixlab/CUPID-Unverified",
      "--cache-dir",
      cacheDir,
      "--hf-endpoint",
      hub.endpoint
    )
    expect(inspected.code).toBe(0)
    expect(inspected.out.split("\n")).toContain("instances: 6 (consistent 2, contrastive 2, changing 2)")
  })
})
