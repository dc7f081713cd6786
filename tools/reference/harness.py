#!/usr/bin/env python3
"""Runs the CUPID authors' evaluation code with a scripted transport instead of the network.

Their code is imported from a checkout of their repository (--reference-dir, or the environment
variable CUPID_REFERENCE_DIR); nothing of it is copied here. Every chat-completions call their code
makes is recorded (transport, model, messages, keyword arguments) and answered from a script, so
the TypeScript tests can compare what the project sends and scores with what the authors' code does.

Commands (JSON on stdin, JSON on stdout, errors on stderr with a non-zero exit):

  render    {"subject", "evaluator", "calls": [{"stage", "args"}]}
            -> {"calls": [call]}: the first transport call each stage makes (the stage is stopped
            right after it). Stages and args:
              inference, generation   {curr_request, prior_interactions}
              decompose               {preference}
              match, match-prefmatcher {checklist, preference}
              judge                   {user_request, ai_response, preference, checklist}
  evaluate  {"subject", "evaluator", "use_matcher", "task", "instances": [{"name", "data"}],
             "answers": {key: answer}}
            -> {"aggregate", "per_instance", "files", "calls", "missing", "errors"}
            Runs their evaluate() for each instance (the n_workers = 1 path) in a fresh results
            directory, then their process_results() and aggregate_results(). An answer is the
            reply text, or {"error": "<message>"} to make the call raise with that message (e.g.
            to reach their "context_length_exceeded" branch). A call with no answer prints its
            messages to stderr, raises like a connection error and its key is listed in
            "missing". "errors" maps "per_instance" / "aggregate" to "<Type>: <message>" when
            their processing raised (the value is then null).
  parse     {"kind": "inference" | "judge" | "json", "output"}
            -> {"ok": true, "value"} or {"ok": false, "error": "<Type>: <message>"}

A call is {"transport": "openai" | "together" | "vllm" | "subject", "model", "messages":
[{"role", "content"}], "params": {the other keyword arguments of the create call}, "key"}.

Key of a call: lowercase hex SHA-256 of the UTF-8 bytes of
json.dumps(messages, ensure_ascii=False, separators=(",", ":")), the messages being
{"role", "content"} objects in that key order. For strings without lone surrogates this is exactly
JavaScript's JSON.stringify(messages) (both escape only '"', '\\' and U+0000..U+001F, the latter
as \\b \\t \\n \\f \\r or lowercase \\u00xx, and leave everything else, U+2028/U+2029 included,
as is).
"""

import argparse
import contextlib
import hashlib
import inspect
import json
import logging
import os
import shutil
import sys
import tempfile
import traceback
import types


def message_key(messages):
    text = json.dumps(messages, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class HarnessError(Exception):
    """A problem with the harness's input or setup (reported on stderr, exit 2)."""


class Captured(BaseException):
    """Stops a stage once its first call is recorded. A BaseException, so that their
    `except Exception` handlers neither log it nor turn it into a result."""


# --- Stubs for the packages their modules import --------------------------------------------------
# Their utils/generation.py imports openai, anthropic and google.genai and builds clients at import
# time; evaluation/pipeline/evaluate.py and the synthesis package import datasets.load_dataset.
# None of these is installed here and none may be reached: the stubs provide just the names those
# imports and module-level statements touch. The clients the evaluation uses are then replaced by
# the scripted ones (see wire()).

class ConnectionFailure(Exception):
    """Stands for openai.APIConnectionError: what a call raises when the network fails."""

    def __init__(self, message="Connection error."):
        super().__init__(message)


class _UnusedClient:
    """A client built at import time that the harness replaces before any use."""

    def __init__(self, *args, **kwargs):
        pass

    def __getattr__(self, name):
        raise RuntimeError(f"the harness does not script this client (attribute {name!r})")


def install_stubs():
    def stub(name, **attrs):
        module = types.ModuleType(name)
        module.__dict__.update(attrs)
        sys.modules[name] = module
        return module

    stub("openai", Client=_UnusedClient, OpenAI=_UnusedClient, APIConnectionError=ConnectionFailure)
    stub("anthropic", Anthropic=_UnusedClient, AnthropicBedrock=_UnusedClient)
    genai_types = stub("google.genai.types", GenerateContentConfig=_UnusedClient)
    genai = stub("google.genai", Client=_UnusedClient, types=genai_types)
    stub("google", genai=genai).__path__ = []

    def load_dataset(*args, **kwargs):
        raise RuntimeError("the harness passes instances explicitly; datasets is not available")

    stub("datasets", load_dataset=load_dataset)


# --- Their code -----------------------------------------------------------------------------------

# Keys that make their utils/generation.py build real clients (and list the OpenAI account's models)
# at import time. Removed from this process only, so the import takes the same path everywhere.
PROVIDER_KEYS = ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "TOGETHER_API_KEY", "GEMINI_PROJECT_ID",
                 "AWS_ACCESS_KEY", "AWS_SECRET_KEY")


def load_reference(directory):
    if not directory:
        raise HarnessError("no reference checkout: pass --reference-dir or set CUPID_REFERENCE_DIR")
    directory = os.path.abspath(directory)
    if not os.path.isfile(os.path.join(directory, "evaluation", "pipeline", "evaluate.py")):
        raise HarnessError(f"{directory} is not a checkout of the CUPID repository "
                           "(evaluation/pipeline/evaluate.py is missing)")
    for key in PROVIDER_KEYS:
        os.environ.pop(key, None)
    # The checkout may be shared or read-only: leave no __pycache__ in it.
    sys.dont_write_bytecode = True
    sys.path.insert(0, directory)
    install_stubs()

    import config
    import utils.generation
    import utils.parsing
    import evaluation.models.model
    import evaluation.modules
    import evaluation.pipeline.evaluate
    import evaluation.pipeline.result
    import synthesis.modules

    return types.SimpleNamespace(
        config=config,
        generation=utils.generation,
        parsing=utils.parsing,
        models=evaluation.models.model,
        modules=evaluation.modules,
        pipeline=evaluation.pipeline.evaluate,
        result=evaluation.pipeline.result,
        decomposer=synthesis.modules.PreferenceDecomposer,
    )


# --- The scripted transport -----------------------------------------------------------------------

def reply(text):
    """The part of a chat-completions response their code reads: choices[0].message.content."""
    message = types.SimpleNamespace(content=text)
    return types.SimpleNamespace(choices=[types.SimpleNamespace(message=message)])


class Transport:
    def __init__(self, answers=None, capture=False):
        self.answers = answers or {}
        self.capture = capture
        self.calls = []
        self.missing = []

    def client(self, name):
        """A client object whose chat.completions.create records the call under `name`."""
        def create(model, messages, **params):
            return reply(self.complete(name, model, messages, params))
        completions = types.SimpleNamespace(create=create)
        return types.SimpleNamespace(chat=types.SimpleNamespace(completions=completions))

    def complete(self, transport, model, messages, params):
        messages = [{"role": m["role"], "content": m["content"]} for m in messages]
        key = message_key(messages)
        self.calls.append({"transport": transport, "model": model, "messages": messages,
                           "params": dict(params), "key": key})
        if self.capture:
            raise Captured()
        answer = self.answers.get(key)
        if answer is None:
            if key not in self.missing:
                self.missing.append(key)
            print(f"no scripted answer for {transport} call to {model} (key {key}); messages:\n"
                  + json.dumps(messages, ensure_ascii=False, indent=2), file=sys.stderr)
            raise ConnectionFailure()
        if isinstance(answer, dict):
            raise ConnectionFailure(answer["error"])
        return answer


def wire(ref, transport, subject, evaluator):
    """Routes their code's calls through `transport` and registers the subject model."""
    generation = ref.generation
    generation.openai_client = transport.client("openai")
    generation.together_client = transport.client("together")
    generation.vllm_client = transport.client("vllm")

    # Their MODEL_DICTIONARY["openai"] is the OpenAI account's model list. Such a list holds the
    # evaluator and the decomposer's model (PreferenceDecomposer's default, which their inferrer
    # uses whatever the evaluator): add them unless their tables already route them elsewhere.
    decomposer_model = inspect.signature(ref.decomposer.__init__).parameters["model_name"].default
    for name in (evaluator, decomposer_model):
        if not any(name in names for names in generation.MODEL_DICTIONARY.values()):
            generation.MODEL_DICTIONARY["openai"].append(name)

    registry = ref.models.MODEL_REGISTRY
    if subject in registry:
        # A wrapper they ship (evaluation/models/): run it, its module's client replaced.
        sys.modules[registry[subject].__module__].openai_client = transport.client("subject")
        return

    class ScriptedSubject(ref.models.Model):
        """Same shape as their shipped wrapper (evaluation/models/gpt_41_nano.py): system and user
        messages, temperature 0, max_tokens 8192, the reply stripped."""
        model_name = subject

        def __call__(self, system_prompt, user_prompt):
            messages = [{"role": "system", "content": system_prompt},
                        {"role": "user", "content": user_prompt}]
            params = {"temperature": 0, "max_tokens": 8192}
            return transport.complete("subject", self.model_name, messages, params).strip()

    ref.models.register_model(ScriptedSubject)


# --- Commands -------------------------------------------------------------------------------------

def run_stage(ref, subject, evaluator, stage, args):
    """Calls their module for `stage` the way their evaluate() constructs and calls it."""
    modules = ref.modules
    if stage in ("inference", "generation", "decompose"):
        model = ref.models.get_model_class(subject)()
        if stage == "inference":
            return modules.PreferenceInferrer(model)(args["curr_request"], args["prior_interactions"])
        if stage == "generation":
            return modules.ResponseGenerator(model)(args["curr_request"], args["prior_interactions"])
        return modules.PreferenceInferrer(model).decomposer(args["preference"])
    if stage in ("match", "match-prefmatcher"):
        matcher_model = evaluator if stage == "match" else ref.config.PREFMATCHER_MODEL_NAME
        return modules.PreferenceMatcher(model_name=matcher_model)(args["checklist"], args["preference"])
    if stage == "judge":
        return modules.ResponseJudger(model_name=evaluator)(
            user_request=args["user_request"], ai_response=args["ai_response"],
            preference=args["preference"], checklist=args["checklist"])
    raise HarnessError(f"unknown stage {stage!r}")


def render(ref, request):
    transport = Transport(capture=True)
    wire(ref, transport, request["subject"], request["evaluator"])
    calls = []
    for index, entry in enumerate(request["calls"]):
        before = len(transport.calls)
        try:
            run_stage(ref, request["subject"], request["evaluator"], entry["stage"], entry.get("args", {}))
        except Captured:
            pass
        if len(transport.calls) != before + 1:
            raise HarnessError(f"calls[{index}] ({entry['stage']}) made no transport call")
        calls.append(transport.calls[-1])
    return {"calls": calls}


def attempt(errors, name, action):
    try:
        return action()
    except Exception as error:
        errors[name] = f"{type(error).__name__}: {error}"
        return None


def evaluate(ref, request):
    subject, evaluator, task = request["subject"], request["evaluator"], request["task"]
    names = [instance["name"] for instance in request["instances"]]
    if len(set(names)) != len(names):
        raise HarnessError("instance names must be distinct (their evaluate() would reuse results)")
    answers = request.get("answers", {})
    for key, answer in answers.items():
        if not (isinstance(answer, str) or (isinstance(answer, dict) and isinstance(answer.get("error"), str))):
            raise HarnessError(f"answers[{key!r}] must be a string or {{\"error\": <string>}}")
    transport = Transport(answers=answers)
    wire(ref, transport, subject, evaluator)
    results_dir = tempfile.mkdtemp(prefix="cupid-reference-")
    try:
        for instance in request["instances"]:
            ref.pipeline.evaluate(subject, evaluator, instance["name"], instance["data"], results_dir,
                                  use_matcher=bool(request.get("use_matcher", False)), task=task)
        errors = {}
        per_instance = attempt(errors, "per_instance", lambda: ref.result.process_results(results_dir, subject, task))
        aggregate = attempt(errors, "aggregate", lambda: ref.result.aggregate_results(results_dir, subject, task))
        files = {}
        for name in names:
            path = os.path.join(results_dir, subject, f"{name}.json")
            if os.path.exists(path):
                with open(path, encoding="utf-8") as file:
                    files[name] = json.load(file)
    finally:
        shutil.rmtree(results_dir, ignore_errors=True)
    return {"aggregate": aggregate, "per_instance": per_instance, "files": files,
            "calls": transport.calls, "missing": transport.missing, "errors": errors}


def parse(ref, request):
    kind, output = request["kind"], request["output"]
    try:
        if kind == "inference":
            value = ref.modules.PreferenceInferrer(None).process_output(output)
        elif kind == "judge":
            _, score = ref.modules.ResponseJudger().process_output(output)
            value = ref.result.process_generation_result({"alignment": {"score": score}})["score"]
        elif kind == "json":
            value = ref.parsing.parse_json(output)
        else:
            raise HarnessError(f"unknown parse kind {kind!r}")
    except HarnessError:
        raise
    except Exception as error:
        return {"ok": False, "error": f"{type(error).__name__}: {error}"}
    return {"ok": True, "value": value}


COMMANDS = {"render": render, "evaluate": evaluate, "parse": parse}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=sorted(COMMANDS))
    parser.add_argument("--reference-dir", default=os.environ.get("CUPID_REFERENCE_DIR"),
                        help="checkout of the CUPID repository (default: $CUPID_REFERENCE_DIR)")
    parser.add_argument("--log-level", default="CRITICAL",
                        help="level of their code's log messages, written to stderr (default: CRITICAL)")
    options = parser.parse_args()
    logging.basicConfig(stream=sys.stderr, level=options.log_level.upper(),
                        format="%(levelname)s %(name)s: %(message)s")
    try:
        request = json.load(sys.stdin)
        # Their code must not write to stdout, which carries the answer only.
        with contextlib.redirect_stdout(sys.stderr):
            ref = load_reference(options.reference_dir)
            response = COMMANDS[options.command](ref, request)
    except HarnessError as error:
        print(f"harness: {error}", file=sys.stderr)
        return 2
    except Exception:
        traceback.print_exc(file=sys.stderr)
        return 1
    json.dump(response, sys.stdout, ensure_ascii=False)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
