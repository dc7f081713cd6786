import { writeTinyBert } from "../src/testing/TinyBert.js"
import * as os from "node:os"
import * as fs from "node:fs"
import * as path from "node:path"
const t0 = Date.now()
const { env, pipeline, AutoTokenizer, AutoModelForSequenceClassification } = await import("@huggingface/transformers")
console.log("import ms", Date.now() - t0)
env.allowRemoteModels = false
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tb-"))
const enc = writeTinyBert(path.join(dir, "enc"), { kind: "encoder" })
const ce = writeTinyBert(path.join(dir, "ce"), { kind: "cross-encoder" })
const fe = await pipeline("feature-extraction", enc.dir, { dtype: "fp32", device: "cpu" })
const out = await fe(["hello world", "the user prefers playing music"], { pooling: "mean", normalize: true })
console.log(out.dims, Array.from(out.data).slice(0, 8))
const tok = await AutoTokenizer.from_pretrained(ce.dir)
const enc2 = tok(["hello", "hello"], { text_pair: ["world", "the user prefers playing"], padding: true, truncation: true })
console.log(enc2.input_ids.tolist(), enc2.token_type_ids.tolist(), enc2.attention_mask.tolist())
const m = await AutoModelForSequenceClassification.from_pretrained(ce.dir, { dtype: "fp32", device: "cpu" })
const r = await m(enc2)
console.log(r.logits.dims, Array.from(r.logits.data))
