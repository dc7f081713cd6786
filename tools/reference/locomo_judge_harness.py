#!/usr/bin/env python3
"""Judges scripted LoCoMo answers with the Mem0 evaluation's own LLM-judge code.

Their code is imported from a checkout of mem0ai/mem0 (--reference-dir, or the environment
variable MEM0_REFERENCE_DIR) at the commit the TypeScript side pins; nothing of it is copied here:
evaluation/metrics/llm_judge.py (the judge), mem0/memory/utils.py (its extract_json) and
evaluation/evals.py (the script that calls the judge per question). It needs Python 3.9 or later
with numpy. What they import for other work is stubbed: openai (the stub client answers each call
with the scripted reply of the question its prompt names and records the keyword arguments),
mem0's package __init__ files and mem0.configs.prompts (the import of utils.py needs the name
FACT_RETRIEVAL_PROMPT only), metrics.utils (evals.py's BLEU and F1, which import nltk, bert_score,
rouge_score and sentence_transformers; the stubs return None) and tqdm when it is not installed.

Input on stdin (JSON):
  {"items": [{"conversation", "question", "answer", "response", "category", "reply"}]}
  (questions unique: the stub finds a call's reply by the question in its prompt)
Output on stdout (JSON):
  {"judged": [per item, evaluate_llm_judge(question, answer, response): {"request": the keyword
              arguments of its call, "score": 0 or 1} or {"request", "error": what it raised}],
   "main": {"asked": [the questions their llm_judge.py main asked the judge about, in turn],
            "labels": {question: llm_label} from the results file it writes,
            "printed": [the final "<category> <mean>" lines it prints],
            "means": {category: float of the printed mean}},
   "mainError": what their main raises on all items ("" when it does not), the items whose replies
            cannot be read making it stop,
   "evals": [per question evals.py's process_item keeps: {"question", "category", "llm_score"}]}
  "main" and "evals" run on the items whose replies their judge reads (their scripts stop at the
  first it cannot read).
Errors go to stderr with a non-zero exit.
"""

import argparse
import contextlib
import importlib.util
import io
import json
import os
import runpy
import sys
import tempfile
import types
from types import SimpleNamespace


def module(name, **attrs):
    m = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(m, key, value)
    sys.modules[name] = m
    return m


def stub_modules(reference_dir, reply_for, requests):
    class Completions:
        def create(self, **kwargs):
            requests.append(kwargs)
            content = kwargs["messages"][-1]["content"]
            return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=reply_for(content)))])

    class OpenAI:
        def __init__(self, **kwargs):
            self.chat = SimpleNamespace(completions=Completions())

    module("openai", OpenAI=OpenAI)
    # Their utils.py from the checkout, without mem0/__init__.py (which imports the whole library).
    module("mem0", __path__=[os.path.join(reference_dir, "mem0")])
    module("mem0.memory", __path__=[os.path.join(reference_dir, "mem0", "memory")])
    module("mem0.configs", __path__=[])
    module("mem0.configs.prompts", FACT_RETRIEVAL_PROMPT="")
    path = os.path.join(reference_dir, "mem0", "memory", "utils.py")
    spec = importlib.util.spec_from_file_location("mem0.memory.utils", path)
    utils = importlib.util.module_from_spec(spec)
    sys.modules["mem0.memory.utils"] = utils
    spec.loader.exec_module(utils)
    module(
        "metrics.utils",
        calculate_metrics=lambda prediction, reference: {"f1": None},
        calculate_bleu_scores=lambda prediction, reference: {"bleu1": None},
    )
    try:
        import tqdm  # noqa: F401
    except ImportError:
        module("tqdm", tqdm=lambda iterable, *args, **kwargs: iterable)


def raised(e):
    return "%s: %s" % (type(e).__name__, e)


def run_main(llm_judge_path, items, work):
    """Their llm_judge.py as `python3 llm_judge.py --input_file <file>` in `work`; returns what it printed."""
    data = {}
    for item in items:
        data.setdefault(item["conversation"], []).append(
            {k: item[k] for k in ("question", "answer", "response", "category")}
        )
    infile = os.path.join(work, "run.json")
    with open(infile, "w") as f:
        json.dump(data, f)
    os.makedirs(os.path.join(work, "results"), exist_ok=True)
    saved, cwd, out = sys.argv, os.getcwd(), io.StringIO()
    sys.argv = [llm_judge_path, "--input_file", infile]
    os.chdir(work)
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(llm_judge_path, run_name="__main__")
    finally:
        sys.argv = saved
        os.chdir(cwd)
    with open(os.path.join(work, "results", "llm_judge_run.json")) as f:
        results = json.load(f)
    return out.getvalue().splitlines(), results


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reference-dir", default=os.environ.get("MEM0_REFERENCE_DIR"))
    args = parser.parse_args()
    if not args.reference_dir:
        print("no checkout: pass --reference-dir or set MEM0_REFERENCE_DIR", file=sys.stderr)
        return 2
    reference_dir = os.path.abspath(args.reference_dir)
    items = json.load(sys.stdin)["items"]
    replies = {item["question"]: item["reply"] for item in items}
    if len(replies) != len(items):
        print("questions must be unique", file=sys.stderr)
        return 2

    def reply_for(content):
        named = [q for q in replies if "Question: %s\n" % q in content]
        if len(named) != 1:
            raise RuntimeError("no single scripted question in the prompt: %r" % content[-300:])
        return replies[named[0]]

    requests = []
    stub_modules(reference_dir, reply_for, requests)
    evaluation = os.path.join(reference_dir, "evaluation")
    sys.path.insert(0, evaluation)
    with contextlib.redirect_stdout(sys.stderr):
        from metrics import llm_judge

        judged = []
        for item in items:
            before = len(requests)
            try:
                score = llm_judge.evaluate_llm_judge(item["question"], item["answer"], item["response"])
                outcome = {"score": score}
            except Exception as e:  # what their scripts would stop on
                outcome = {"error": raised(e)}
            judged.append({"request": requests[before] if len(requests) > before else None, **outcome})
        readable = [item for item, j in zip(items, judged) if "error" not in j or item["category"] in (5, "5")]

        llm_judge_path = os.path.join(evaluation, "metrics", "llm_judge.py")
        with tempfile.TemporaryDirectory() as work:
            try:
                run_main(llm_judge_path, items, work)
                main_error = ""
            except Exception as e:
                main_error = raised(e)
        del requests[:]
        with tempfile.TemporaryDirectory() as work:
            printed, results = run_main(llm_judge_path, readable, work)
        asked = [r["messages"][-1]["content"] for r in requests]
        asked = [q for content in asked for q in replies if "Question: %s\n" % q in content]
        labels = {e["question"]: e["llm_label"] for entries in results.values() for e in entries}
        # After its last rule: one "<category> <np.mean of the labels>" line per category judged.
        rules = [i for i, line in enumerate(printed) if line == "-" * 42]
        final = printed[rules[-1] + 1 :]
        means = {line.split(" ")[0]: float(line.split(" ")[1]) for line in final}

        import evals

        kept = []
        conversations = {}
        for item in readable:
            conversations.setdefault(item["conversation"], []).append(item)
        for key, entries in conversations.items():
            for entries_kept in evals.process_item((key, entries)).values():
                kept.extend(
                    {"question": e["question"], "category": e["category"], "llm_score": e["llm_score"]}
                    for e in entries_kept
                )

    json.dump(
        {
            "judged": judged,
            "main": {"asked": asked, "labels": labels, "printed": final, "means": means},
            "mainError": main_error,
            "evals": kept,
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
