#!/usr/bin/env python3
"""Scores scripted LoCoMo answers with the LoCoMo authors' own evaluation code.

Their code is imported from a checkout of snap-research/locomo (--reference-dir, or the environment
variable LOCOMO_REFERENCE_DIR) at the commit the TypeScript side pins; nothing of it is copied
here. It needs Python 3.9 or later with nltk (their Porter stemmer), regex and numpy. Their module
also imports bert_score at the top, which only their BERTScore branch uses: a stub stands in for it
and raises if it is ever called.

Input on stdin (JSON):
  {"items": [{"prediction", "answer", "category"}], "words": [word, ...]}
Output on stdout (JSON):
  {"scores": [per item, from their eval_question_answering()],
   "categories": {category: {"count", "sum", "mean"}} from their analyze_acc() (mean = sum / count,
   the value their report prints rounded to 3 places),
   "overall": the sum over categories / the count, as their analyze_aggr_acc() computes it,
   "stems": [nltk.stem.PorterStemmer().stem(word) for each word]}
Errors go to stderr with a non-zero exit.
"""

import argparse
import contextlib
import json
import os
import sys
import tempfile
import types


def stub_bert_score():
    module = types.ModuleType("bert_score")

    def score(*args, **kwargs):
        raise RuntimeError("bert_score is stubbed by the harness: the BERTScore branch is not reproduced")

    module.score = score
    sys.modules["bert_score"] = module


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--reference-dir", default=os.environ.get("LOCOMO_REFERENCE_DIR"))
    args = parser.parse_args()
    if not args.reference_dir:
        print("no checkout: pass --reference-dir or set LOCOMO_REFERENCE_DIR", file=sys.stderr)
        return 2
    request = json.load(sys.stdin)
    sys.path.insert(0, os.path.abspath(args.reference_dir))
    stub_bert_score()
    # Their functions print progress; stdout carries only the answer.
    with contextlib.redirect_stdout(sys.stderr):
        from task_eval import evaluation, evaluation_stats
        from nltk.stem import PorterStemmer

        items = request.get("items", [])
        with tempfile.TemporaryDirectory() as work:
            qa = [
                {
                    "question": "q%d" % i,
                    "answer": item["answer"],
                    "category": item["category"],
                    "evidence": [],
                    "prediction": item["prediction"],
                }
                for i, item in enumerate(items)
            ]
            infile = os.path.join(work, "predictions.json")
            with open(infile, "w") as f:
                json.dump({"qa": qa}, f)
            scores = []
            if qa:
                scores, _, _ = evaluation.eval_question_answering(infile, "prediction")
            # The per-question scores as their save_eval() stores them, then their per-category sums.
            for line, value in zip(qa, scores):
                line["harness_f1"] = value
            scored = os.path.join(work, "predictions_scores.json")
            with open(scored, "w") as f:
                json.dump({"qa": qa}, f)
            stats = os.path.join(work, "stats.json")
            evaluation_stats.analyze_acc(scored, stats, "harness", "harness_f1")
            with open(stats) as f:
                result = json.load(f)["harness"]
        counts = result["category_counts"]
        sums = result["cum_accuracy_by_category"]
        categories = {k: {"count": counts[k], "sum": sums[k], "mean": float(sums[k]) / counts[k]} for k in counts}
        total_v = 0
        total_k = 0
        for k in ["4", "1", "2", "3", "5"]:
            if k in counts:
                total_v += sums[k]
                total_k += counts[k]
        overall = float(total_v) / total_k if total_k else None
        stemmer = PorterStemmer()
        stems = [stemmer.stem(w) for w in request.get("words", [])]
    json.dump(
        {"scores": [float(s) for s in scores], "categories": categories, "overall": overall, "stems": stems},
        sys.stdout,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
