#!/usr/bin/env python3
"""Builds LongMemEval judge prompts and verdicts with the LongMemEval authors' own evaluation code.

Their code is imported from a checkout of xiaowu0162/LongMemEval (--reference-dir, or the
environment variable LONGMEMEVAL_REFERENCE_DIR) at the commit the TypeScript side pins; nothing of
it is copied here. It needs Python 3.9 or later with numpy. Their module imports openai and backoff
at the top, for the judge calls only: stubs stand in for both, and the stub client answers each
call with the scripted reply of its row and records what was sent. tqdm is used when installed,
else a pass-through stub.

Input on stdin (JSON):
  {"items": [{"question_id", "question_type", "question", "answer", "hypothesis", "abstention",
              "reply"}]}
Output on stdout (JSON):
  {"prompts": [get_anscheck_prompt(question_type, question, answer, hypothesis, abstention)],
   "requests": [the keyword arguments of each judge call their evaluate_qa.py main makes],
   "labels": {question_id: the autoeval_label.label their main writes},
   "printed": [the accuracy lines their main prints],
   "metrics": [the lines their print_qa_metrics.py prints on that result file]}
Errors go to stderr with a non-zero exit.
"""

import argparse
import contextlib
import io
import json
import os
import runpy
import sys
import tempfile
import types
from types import SimpleNamespace


def stub_modules(replies, requests):
    backoff = types.ModuleType("backoff")
    backoff.expo = object()
    backoff.on_exception = lambda *args, **kwargs: (lambda f: f)
    sys.modules["backoff"] = backoff

    openai = types.ModuleType("openai")

    class APIError(Exception):
        pass

    class RateLimitError(APIError):
        pass

    class Completions:
        def create(self, **kwargs):
            requests.append(kwargs)
            reply = replies[len(requests) - 1]
            return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=reply))])

    class OpenAI:
        def __init__(self, **kwargs):
            self.chat = SimpleNamespace(completions=Completions())

    openai.APIError = APIError
    openai.RateLimitError = RateLimitError
    openai.OpenAI = OpenAI
    sys.modules["openai"] = openai

    try:
        import tqdm  # noqa: F401
    except ImportError:
        tqdm = types.ModuleType("tqdm")
        tqdm.tqdm = lambda iterable, *args, **kwargs: iterable
        sys.modules["tqdm"] = tqdm


def run_script(path, argv):
    """Their script as `python3 <path> <argv...>`; returns what it printed."""
    saved = sys.argv
    out = io.StringIO()
    sys.argv = [path] + argv
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved
    return out.getvalue().splitlines()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reference-dir", default=os.environ.get("LONGMEMEVAL_REFERENCE_DIR"))
    args = parser.parse_args()
    if not args.reference_dir:
        print("no checkout: pass --reference-dir or set LONGMEMEVAL_REFERENCE_DIR", file=sys.stderr)
        return 2
    items = json.load(sys.stdin)["items"]
    evaluation = os.path.join(os.path.abspath(args.reference_dir), "src", "evaluation")
    requests = []
    stub_modules([item["reply"] for item in items], requests)
    sys.path.insert(0, evaluation)
    import evaluate_qa

    prompts = [
        evaluate_qa.get_anscheck_prompt(
            item["question_type"], item["question"], item["answer"], item["hypothesis"], abstention=item["abstention"]
        )
        for item in items
    ]
    with tempfile.TemporaryDirectory() as work:
        hyp_file = os.path.join(work, "hypotheses.jsonl")
        ref_file = os.path.join(work, "references.json")
        with open(hyp_file, "w") as f:
            for item in items:
                print(json.dumps({"question_id": item["question_id"], "hypothesis": item["hypothesis"]}), file=f)
        with open(ref_file, "w") as f:
            keys = ["question_id", "question_type", "question", "answer"]
            json.dump([{k: item[k] for k in keys} for item in items], f)
        printed = run_script(os.path.join(evaluation, "evaluate_qa.py"), ["gpt-4o", hyp_file, ref_file])
        result_file = hyp_file + ".eval-results-gpt-4o"
        with open(result_file) as f:
            labels = {e["question_id"]: e["autoeval_label"]["label"] for e in map(json.loads, f)}
        metrics = run_script(os.path.join(evaluation, "print_qa_metrics.py"), [result_file, ref_file])
    json.dump(
        {
            "prompts": prompts,
            "requests": requests,
            "labels": labels,
            "printed": [line for line in printed if line.startswith(("Accuracy:", "\t"))],
            "metrics": [line for line in metrics if line.strip() != ""],
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
