/**
 * A tiny BERT-shaped model folder written on the spot, so the transformers.js provider can be
 * exercised by the real ONNX runtime without downloading weights. The folder has the layout of a
 * Hugging Face export (`config.json`, `tokenizer.json`, `tokenizer_config.json`,
 * `onnx/model.onnx`); the graph takes `input_ids`, `attention_mask` and `token_type_ids` like BERT.
 *
 * The encoder computes, per token, `tanh((word[id] + type[typeId]) · dense + denseBias)` and
 * returns it as `last_hidden_state` (no attention, no positions: enough to check tokenization,
 * padding, pooling and normalization end to end). The cross-encoder adds a masked mean over the
 * tokens and a linear head, returning `logits` of shape [batch, 1]. Weights are seeded random
 * numbers and are returned, so a test can compute the expected outputs by hand.
 *
 * @example
 * import { TinyBert } from "@cupid-lab/providers/testing"
 * const { writeTinyBert } = TinyBert
 * const model = writeTinyBert("/tmp/models/tiny-encoder", { kind: "encoder" })
 * model.vocab.indexOf("recipe") // the token id the tokenizer gives "recipe"
 */
import * as fs from "node:fs"
import * as path from "node:path"
import { Random } from "@cupid-lab/core"
import protobuf from "protobufjs"

export interface TinyBertOptions {
  /** `encoder` for feature extraction, `cross-encoder` for (query, document) relevance logits. */
  readonly kind: "encoder" | "cross-encoder"
  /** Hidden size; 8 unless given. */
  readonly hidden?: number
  /** Seed of the weights; 1 unless given. */
  readonly seed?: number
}

export interface TinyBertWeights {
  /** [vocab][hidden] */
  readonly word: ReadonlyArray<Float32Array>
  /** [2][hidden] */
  readonly type: ReadonlyArray<Float32Array>
  /** [hidden in][hidden out] */
  readonly dense: ReadonlyArray<Float32Array>
  readonly denseBias: Float32Array
  /** Cross-encoder head: [hidden] and a scalar. */
  readonly head?: { readonly weight: Float32Array; readonly bias: number }
}

export interface TinyBert {
  readonly dir: string
  readonly kind: TinyBertOptions["kind"]
  readonly hidden: number
  /** Token strings by id: what `tokenizer.json` declares. */
  readonly vocab: ReadonlyArray<string>
  readonly weights: TinyBertWeights
}

/** Special tokens first (ids 0–4), then whole words, then one continuation piece. */
export const defaultVocab: ReadonlyArray<string> = [
  "[PAD]",
  "[UNK]",
  "[CLS]",
  "[SEP]",
  "[MASK]",
  "the",
  "user",
  "prefers",
  "short",
  "answers",
  "numbered",
  "steps",
  "recipe",
  "code",
  "review",
  "travel",
  "plan",
  "budget",
  "hello",
  "world",
  "play",
  "music",
  "with",
  "a",
  "for",
  "my",
  ",",
  ".",
  "##ing"
]

// The subset of onnx.proto (field numbers as in the ONNX IR spec) needed to write an inference graph.
const onnxProto = `
syntax = "proto3";
package onnx;
message AttributeProto {
  string name = 1; float f = 2; int64 i = 3; bytes s = 4; TensorProto t = 5;
  repeated float floats = 7; repeated int64 ints = 8; int32 type = 20;
}
message NodeProto {
  repeated string input = 1; repeated string output = 2; string name = 3; string op_type = 4;
  repeated AttributeProto attribute = 5; string domain = 7;
}
message TensorProto {
  repeated int64 dims = 1; int32 data_type = 2; repeated float float_data = 4;
  repeated int64 int64_data = 7; string name = 8; bytes raw_data = 9;
}
message TensorShapeProto {
  message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } }
  repeated Dimension dim = 1;
}
message TypeProto {
  message Tensor { int32 elem_type = 1; TensorShapeProto shape = 2; }
  oneof value { Tensor tensor_type = 1; }
}
message ValueInfoProto { string name = 1; TypeProto type = 2; }
message GraphProto {
  repeated NodeProto node = 1; string name = 2; repeated TensorProto initializer = 5;
  repeated ValueInfoProto input = 11; repeated ValueInfoProto output = 12;
}
message OperatorSetIdProto { string domain = 1; int64 version = 2; }
message ModelProto {
  int64 ir_version = 1; string producer_name = 2; GraphProto graph = 7;
  repeated OperatorSetIdProto opset_import = 8;
}
`

const FLOAT = 1
const INT64 = 7
const ATTR_INT = 2

const random = Random.mulberry32

const matrix = (rows: number, cols: number, next: () => number): Array<Float32Array> =>
  Array.from({ length: rows }, () => Float32Array.from({ length: cols }, () => next() * 2 - 1))

const floatTensor = (name: string, dims: ReadonlyArray<number>, rows: ReadonlyArray<Float32Array>) => ({
  name,
  dims,
  dataType: FLOAT,
  floatData: rows.flatMap((r) => Array.from(r))
})

const int64Tensor = (name: string, values: ReadonlyArray<number>) => ({
  name,
  dims: [values.length],
  dataType: INT64,
  int64Data: values
})

const tensorInfo = (name: string, elemType: number, dims: ReadonlyArray<string | number>) => ({
  name,
  type: {
    tensorType: {
      elemType,
      shape: { dim: dims.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) }
    }
  }
})

const node = (opType: string, input: ReadonlyArray<string>, output: string, attribute: ReadonlyArray<object> = []) => ({
  opType,
  input,
  output: [output],
  name: `${opType}_${output}`,
  attribute
})

const modelBytes = (
  kind: TinyBertOptions["kind"],
  hidden: number,
  w: TinyBertWeights,
  vocabSize: number
): Uint8Array => {
  const root = protobuf.parse(onnxProto, { keepCase: false }).root
  const Model = root.lookupType("onnx.ModelProto")
  const initializer: Array<object> = [
    floatTensor("word_embeddings", [vocabSize, hidden], w.word),
    floatTensor("token_type_embeddings", [2, hidden], w.type),
    floatTensor("dense_weight", [hidden, hidden], w.dense),
    floatTensor("dense_bias", [hidden], [w.denseBias])
  ]
  const nodes: Array<object> = [
    node("Gather", ["word_embeddings", "input_ids"], "words"),
    node("Gather", ["token_type_embeddings", "token_type_ids"], "types"),
    node("Add", ["words", "types"], "embedded"),
    node("MatMul", ["embedded", "dense_weight"], "projected"),
    node("Add", ["projected", "dense_bias"], "biased"),
    node("Tanh", ["biased"], "last_hidden_state")
  ]
  let output = tensorInfo("last_hidden_state", FLOAT, ["batch", "sequence", hidden])
  if (kind === "cross-encoder" && w.head !== undefined) {
    initializer.push(
      floatTensor(
        "head_weight",
        [hidden, 1],
        Array.from(w.head.weight, (x) => Float32Array.of(x))
      ),
      floatTensor("head_bias", [1], [Float32Array.of(w.head.bias)]),
      int64Tensor("axis_2", [2]),
      int64Tensor("axis_1", [1])
    )
    nodes.push(
      node("Cast", ["attention_mask"], "mask", [{ name: "to", type: ATTR_INT, i: FLOAT }]),
      node("Unsqueeze", ["mask", "axis_2"], "mask3"),
      node("Mul", ["last_hidden_state", "mask3"], "masked"),
      node("ReduceSum", ["masked", "axis_1"], "summed", [{ name: "keepdims", type: ATTR_INT, i: 0 }]),
      node("ReduceSum", ["mask", "axis_1"], "count", [{ name: "keepdims", type: ATTR_INT, i: 1 }]),
      node("Div", ["summed", "count"], "pooled"),
      node("MatMul", ["pooled", "head_weight"], "scored"),
      node("Add", ["scored", "head_bias"], "logits")
    )
    output = tensorInfo("logits", FLOAT, ["batch", 1])
  }
  const message = Model.fromObject({
    irVersion: 8,
    producerName: "cupid-lab-tiny-bert",
    opsetImport: [{ domain: "", version: 13 }],
    graph: {
      name: `tiny-bert-${kind}`,
      node: nodes,
      initializer,
      input: ["input_ids", "attention_mask", "token_type_ids"].map((n) => tensorInfo(n, INT64, ["batch", "sequence"])),
      output: [output]
    }
  })
  return Model.encode(message).finish()
}

const special = (content: string, id: number) => ({
  id,
  content,
  single_word: false,
  lstrip: false,
  rstrip: false,
  normalized: false,
  special: true
})

const tokenizerJson = (vocab: ReadonlyArray<string>) => ({
  version: "1.0",
  truncation: null,
  padding: null,
  added_tokens: vocab.slice(0, 5).map(special),
  normalizer: {
    type: "BertNormalizer",
    clean_text: true,
    handle_chinese_chars: true,
    strip_accents: null,
    lowercase: true
  },
  pre_tokenizer: { type: "BertPreTokenizer" },
  post_processor: {
    type: "TemplateProcessing",
    single: [
      { SpecialToken: { id: "[CLS]", type_id: 0 } },
      { Sequence: { id: "A", type_id: 0 } },
      { SpecialToken: { id: "[SEP]", type_id: 0 } }
    ],
    pair: [
      { SpecialToken: { id: "[CLS]", type_id: 0 } },
      { Sequence: { id: "A", type_id: 0 } },
      { SpecialToken: { id: "[SEP]", type_id: 0 } },
      { Sequence: { id: "B", type_id: 1 } },
      { SpecialToken: { id: "[SEP]", type_id: 1 } }
    ],
    special_tokens: {
      "[CLS]": { id: "[CLS]", ids: [2], tokens: ["[CLS]"] },
      "[SEP]": { id: "[SEP]", ids: [3], tokens: ["[SEP]"] }
    }
  },
  decoder: { type: "WordPiece", prefix: "##", cleanup: true },
  model: {
    type: "WordPiece",
    unk_token: "[UNK]",
    continuing_subword_prefix: "##",
    max_input_chars_per_word: 100,
    vocab: Object.fromEntries(vocab.map((t, i) => [t, i]))
  }
})

/** Write the model folder into `dir` (created if missing) and describe what was written. */
export const writeTinyBert = (dir: string, options: TinyBertOptions): TinyBert => {
  const hidden = options.hidden ?? 8
  const next = random(options.seed ?? 1)
  const vocab = defaultVocab
  const weights: TinyBertWeights = {
    word: matrix(vocab.length, hidden, next),
    type: matrix(2, hidden, next),
    dense: matrix(hidden, hidden, next),
    denseBias: matrix(1, hidden, next)[0]!,
    ...(options.kind === "cross-encoder"
      ? { head: { weight: matrix(1, hidden, next)[0]!, bias: Math.fround(next() - 0.5) } }
      : {})
  }
  fs.mkdirSync(path.join(dir, "onnx"), { recursive: true })
  fs.writeFileSync(path.join(dir, "onnx", "model.onnx"), modelBytes(options.kind, hidden, weights, vocab.length))
  fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(tokenizerJson(vocab)))
  fs.writeFileSync(
    path.join(dir, "tokenizer_config.json"),
    JSON.stringify({
      tokenizer_class: "BertTokenizer",
      do_lower_case: true,
      model_max_length: 64,
      pad_token: "[PAD]",
      unk_token: "[UNK]",
      cls_token: "[CLS]",
      sep_token: "[SEP]",
      mask_token: "[MASK]"
    })
  )
  const architecture = options.kind === "cross-encoder" ? "BertForSequenceClassification" : "BertModel"
  fs.writeFileSync(
    path.join(dir, "config.json"),
    JSON.stringify({
      model_type: "bert",
      architectures: [architecture],
      hidden_size: hidden,
      vocab_size: vocab.length,
      num_attention_heads: 1,
      num_hidden_layers: 1,
      max_position_embeddings: 64,
      type_vocab_size: 2,
      ...(options.kind === "cross-encoder" ? { id2label: { "0": "LABEL_0" }, label2id: { LABEL_0: 0 } } : {})
    })
  )
  return { dir, kind: options.kind, hidden, vocab, weights }
}
