#!/usr/bin/env python3
"""Judges scripted responses with the PrefEval authors' own error-type evaluation code.

Their code is run from a checkout of amazon-science/PrefEval (--reference-dir, or the environment
variable PREFEVAL_REFERENCE_DIR) at the commit the TypeScript side pins; nothing of it is copied
here. It needs Python 3.9 or later with beautifulsoup4 and PyYAML (their parser and their config
reader). Their scripts import boto3 and botocore (the judge calls), and their utils module imports
tiktoken, openai and google.genai: stubs stand in for all of them, and the stub Bedrock client
answers each call with the next scripted reply and records the request body. tqdm is used when
installed, else a pass-through stub.

Their generation_task/llm_based_evaluation_errortypes.py runs as `--pref_form explicit` on a
generation file written here (one entry per item: preference, question, response_to_q), in a work
folder laid out as their config expects (its error_type folder is the checkout's); then their
get_preference_following_accuracy_generation_task.py runs on the file it wrote, and their
analyze_errors is called on each entry alone for the per-response flags.

Input on stdin (JSON):
  {"items": [{"preference", "question", "response",
              "replies": [acknow, violate, hallucinate, helpful judge replies, in their call order]}]}
Output on stdout (JSON):
  {"requests": [each invoke_model call: {"modelId", "body": the decoded JSON body}],
   "analyses": [each entry's evaluation_error_analysis],
   "flags": [analyze_errors([entry])[0] for each entry],
   "printed": [the result lines their accuracy script prints]}
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

TOPIC = "harness_topic"
MODEL = "harness"
ARGS = ["--model", MODEL, "--inter_turn", "0", "--topic", TOPIC, "--task", "zero-shot", "--pref_form", "explicit"]


def module(name, **attrs):
    m = types.ModuleType(name)
    for key, value in attrs.items():
        setattr(m, key, value)
    sys.modules[name] = m
    return m


def stub_modules(replies, requests):
    class ClientError(Exception):
        pass

    class Body:
        def __init__(self, text):
            self.text = text

        def read(self):
            return self.text

    class Bedrock:
        def invoke_model(self, body, modelId):
            requests.append({"modelId": modelId, "body": json.loads(body)})
            reply = replies[len(requests) - 1]
            return {"body": Body(json.dumps({"content": [{"type": "text", "text": reply}]}))}

    module("boto3", client=lambda **kwargs: Bedrock())
    module("botocore")
    module("botocore.exceptions", ClientError=ClientError)
    module("tiktoken")
    module("openai", OpenAI=object)
    google = module("google")
    google.genai = module("google.genai", types=module("google.genai.types"))
    try:
        import tqdm  # noqa: F401
    except ImportError:
        module("tqdm", tqdm=lambda iterable, *args, **kwargs: iterable)


def run_script(path, cwd):
    """Their script as `cd <cwd> && python3 <path> <ARGS...>`; returns what it printed."""
    saved = (sys.argv, os.getcwd())
    out = io.StringIO()
    sys.argv = [path] + ARGS
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out):
            runpy.run_path(path, run_name="__main__")
    finally:
        sys.argv = saved[0]
        os.chdir(saved[1])
    return out.getvalue().splitlines()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reference-dir", default=os.environ.get("PREFEVAL_REFERENCE_DIR"))
    args = parser.parse_args()
    if not args.reference_dir:
        print("no checkout: pass --reference-dir or set PREFEVAL_REFERENCE_DIR", file=sys.stderr)
        return 2
    reference = os.path.abspath(args.reference_dir)
    items = json.load(sys.stdin)["items"]
    requests = []
    stub_modules([reply for item in items for reply in item["replies"]], requests)
    entries = [
        {"preference": item["preference"], "question": item["question"], "response_to_q": item["response"]}
        for item in items
    ]
    with tempfile.TemporaryDirectory() as work:
        # Their load_config takes the parent of the working directory as dir_path.
        cwd = os.path.join(work, "generation_task")
        results = os.path.join(work, "benchmark_results", "explicit", "generation_results", "zero-shot", TOPIC)
        dataset = os.path.join(work, "benchmark_dataset", "explicit_preference")
        for folder in (cwd, results, dataset):
            os.makedirs(folder)
        os.symlink(os.path.join(reference, "error_type"), os.path.join(work, "error_type"))
        with open(os.path.join(work, "config.yaml"), "w") as f:
            f.write("max_gen_tokens: 300\n")
        with open(os.path.join(dataset, TOPIC + ".json"), "w") as f:
            json.dump(entries, f)
        with open(os.path.join(results, f"{MODEL}_{TOPIC}_0interturn.json"), "w") as f:
            json.dump(entries, f)
        tasks = os.path.join(reference, "generation_task")
        run_script(os.path.join(tasks, "llm_based_evaluation_errortypes.py"), cwd)
        with open(os.path.join(results, f"error_{MODEL}_{TOPIC}_0interturn.json")) as f:
            evaluated = json.load(f)
        printed = run_script(os.path.join(tasks, "get_preference_following_accuracy_generation_task.py"), cwd)
        accuracy = runpy.run_path(os.path.join(tasks, "get_preference_following_accuracy_generation_task.py"))
        flags = [accuracy["analyze_errors"]([entry])[0] for entry in evaluated]
    json.dump(
        {
            "requests": requests,
            "analyses": [entry["evaluation_error_analysis"] for entry in evaluated],
            "flags": flags,
            "printed": [line for line in printed if line.startswith(("Total", "  ", "Preference Following"))],
        },
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
