#!/usr/bin/env python3
"""Runs the LongMemEval authors' own reader (src/generation/run_generation.py) on given questions.

Their script is run from a checkout of xiaowu0162/LongMemEval (--reference-dir, or the environment
variable LONGMEMEVAL_REFERENCE_DIR) at the commit the TypeScript side pins; nothing of it is copied
here. It needs Python 3.9 or later with numpy. Their module imports openai, backoff, transformers
and tiktoken at the top: stubs stand in for each that is not installed (and tqdm), and always for
openai's client, which answers each call with the scripted answer of its question and records what
was sent. tiktoken's o200k_base needs a download, so the harness always stubs the tokenizer their
main builds for GPT models: it counts UTF-8 bytes, which are at least as many as o200k tokens, so a
history it leaves whole is one that o200k leaves whole too; "truncated" lists the settings in which
it would have cut (the test keeps every history below the limit, where no cut happens).

Input on stdin (JSON):
  {"entries": [questions as in the published files, plus "reply": the scripted answer],
   "settings": [{"retriever_type", "history_format", "cot", "topk_context", "model_name"}]}
Output on stdout (JSON):
  {"runs": [one per setting: {"requests": [the keyword arguments of each chat call their main makes],
                              "hypotheses": {question_id: the hypothesis their main writes},
                              "truncated": [the "Truncating ..." lines it printed]}]}
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


class ByteTokenizer:
    """Stands in for tiktoken's o200k_base: one token per UTF-8 byte (an upper bound of its count)."""

    def encode(self, text, allowed_special=()):
        return list(text.encode("utf-8"))

    def decode(self, tokens):
        return bytes(tokens).decode("utf-8", errors="replace")


def stub_modules(replies, requests):
    try:
        import backoff  # noqa: F401
    except ImportError:
        backoff = types.ModuleType("backoff")
        backoff.constant = object()
        backoff.expo = object()
        backoff.on_exception = lambda *args, **kwargs: (lambda f: f)
        sys.modules["backoff"] = backoff

    openai = types.ModuleType("openai")

    class RateLimitError(Exception):
        pass

    class Completions:
        def create(self, **kwargs):
            requests.append(kwargs)
            content = kwargs["messages"][-1]["content"]
            reply = next(r for question, r in replies if question in content)
            usage = SimpleNamespace(prompt_tokens=0, completion_tokens=0)
            return SimpleNamespace(choices=[SimpleNamespace(message=SimpleNamespace(content=reply))], usage=usage)

    class OpenAI:
        def __init__(self, **kwargs):
            self.chat = SimpleNamespace(completions=Completions())

    openai.RateLimitError = RateLimitError
    openai.OpenAI = OpenAI
    openai.organization = None
    sys.modules["openai"] = openai

    tiktoken = types.ModuleType("tiktoken")
    tiktoken.get_encoding = lambda name: ByteTokenizer()
    sys.modules["tiktoken"] = tiktoken

    try:
        import transformers  # noqa: F401
    except ImportError:
        transformers = types.ModuleType("transformers")
        transformers.AutoTokenizer = SimpleNamespace(from_pretrained=lambda name: None)
        sys.modules["transformers"] = transformers

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
    given = json.load(sys.stdin)
    entries = [{k: v for k, v in e.items() if k != "reply"} for e in given["entries"]]
    replies = [(e["question"], e["reply"]) for e in given["entries"]]
    script = os.path.join(os.path.abspath(args.reference_dir), "src", "generation", "run_generation.py")
    runs = []
    for setting in given["settings"]:
        requests = []
        stub_modules(replies, requests)
        with tempfile.TemporaryDirectory() as work:
            in_file = os.path.join(work, "questions.json")
            out_dir = os.path.join(work, "out")
            os.mkdir(out_dir)
            with open(in_file, "w") as f:
                json.dump(entries, f)
            printed = run_script(
                script,
                [
                    "--in_file", in_file,
                    "--out_dir", out_dir,
                    "--model_name", setting["model_name"],
                    "--model_alias", "gpt-4o",
                    "--openai_key", "unused",
                    "--retriever_type", setting["retriever_type"],
                    "--topk_context", str(setting["topk_context"]),
                    "--history_format", setting["history_format"],
                    "--useronly", "false",
                    "--cot", "true" if setting["cot"] else "false",
                ],
            )
            [log] = os.listdir(out_dir)
            with open(os.path.join(out_dir, log)) as f:
                hypotheses = {e["question_id"]: e["hypothesis"] for e in map(json.loads, f)}
        runs.append(
            {
                "requests": requests,
                "hypotheses": hypotheses,
                "truncated": [line for line in printed if line.startswith("Truncating")],
            }
        )
    json.dump({"runs": runs}, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
