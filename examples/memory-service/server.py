#!/usr/bin/env python3
"""A small memory service that speaks cupid-lab's http protocol (docs/http-systems.md).

Standard library only. It answers three stages and keeps what it is given to ingest:

  POST /rank            {"instance", "history", "request", "sessions": [...]}  ->  {"ranking": [{"id", "score"}]}
  POST /infer           the same body (the sessions passed on to the inferrer)  ->  {"preference": "..."}
  POST /generate        the same body, with "preference" when configured        ->  {"response": "..."}
  POST <any url>/ingest {"history", "sessions": [...]}                          ->  {"ok": true}
  GET  /stats           how often each history was ingested, how many queries were answered

Run it, then point a config at it:

  python3 examples/memory-service/server.py --port 8000
  # retriever: { use: http, url: "http://127.0.0.1:8000/rank", k: 2, ingest: true }

`--port 0` takes a free port; the first line printed says which. To wrap your own system, replace
the bodies of `rank`, `infer`, `generate` and `ingest` below (see README.md).
"""

import argparse
import json
import math
import os
import re
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

STOPWORDS = set(
    "a an and are as at be but by can could do for from had has have her his how i if in into is it its"
    " me my of on or our so than that the their them then there these they this to too us was we were"
    " what when which who will with would you your".split()
)

CUES = ("prefer", "next time", "always", "please", "make sure", "don't", "do not", "instead", "i need", "i want", "i'd like")


def words(text):
    return [w for w in re.findall(r"[a-z0-9]+", text.lower()) if w not in STOPWORDS]


def session_text(session):
    """The text a session is ranked by: its messages (or its summary, when the stage ranks summaries)."""
    if "summary" in session and not session["dialogue"]:
        summary = session["summary"]
        return " ".join(summary["context"] + summary["preferences"])
    return " ".join(m["content"] for m in session["dialogue"])


def bm25(request, sessions, k1=1.2, b=0.75):
    """BM25 of each session against the request, with statistics from the sessions themselves."""
    docs = [words(session_text(s)) for s in sessions]
    n = len(docs)
    average = sum(len(d) for d in docs) / n if n else 0.0
    frequency = {}
    for d in docs:
        for w in set(d):
            frequency[w] = frequency.get(w, 0) + 1
    scores = []
    for d in docs:
        counts = {}
        for w in d:
            counts[w] = counts.get(w, 0) + 1
        score = 0.0
        for w in set(words(request)):
            f = counts.get(w, 0)
            if f == 0:
                continue
            idf = math.log(1 + (n - frequency[w] + 0.5) / (frequency[w] + 0.5))
            score += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(d) / (average or 1)))
        scores.append(score)
    return scores


class Memory:
    """What the service remembers: ingested histories, and counters /stats reports."""

    def __init__(self, ranking):
        self.ranking = ranking
        self.lock = threading.Lock()
        self.histories = {}
        self.ingested = {}
        self.queries = 0

    def ingest(self, body):
        with self.lock:
            self.histories[body["history"]] = body["sessions"]
            self.ingested[body["history"]] = self.ingested.get(body["history"], 0) + 1
        return {"ok": True}

    def sessions_of(self, body):
        """The sessions of the query: the ingested copy when the history was ingested, else those sent."""
        with self.lock:
            self.queries += 1
            return self.histories.get(body["history"], body["sessions"])

    def rank(self, body):
        sessions = self.sessions_of(body)
        if self.ranking == "recency":
            scores = [float(s["position"]) for s in sessions]
        else:
            scores = bm25(body["request"], sessions)
        return {"ranking": [{"id": s["id"], "score": score} for s, score in zip(sessions, scores)]}

    def infer(self, body):
        """One sentence of the user's feedback: from the sessions most like the request, the latest with a cue."""
        sessions = self.sessions_of(body)
        scores = bm25(body["request"], sessions) if sessions else []
        best = sorted(zip(scores, sessions), key=lambda x: (x[0], x[1]["position"]), reverse=True)[:2]
        found = []
        for _, s in sorted(best, key=lambda x: x[1]["position"]):
            feedback = [m["content"] for m in s["dialogue"] if m["role"] == "user"][1:]
            for turn in feedback:
                for sentence in re.split(r"(?<=[.!?])\s+", turn):
                    if any(c in sentence.lower() for c in CUES):
                        found.append(sentence.strip())
        preference = found[-1] if found else "No stated preference was found in the sessions."
        return {"preference": preference, "analysis": f"read {len(best)} of {len(sessions)} sessions"}

    def generate(self, body):
        preference = body.get("preference")
        tail = f" It follows what you asked for before: {preference}" if preference else ""
        return {"response": f"Here is a draft for your request: {body['request']}{tail}"}

    def stats(self):
        with self.lock:
            return {"ingested": dict(self.ingested), "queries": self.queries}


def handler(memory, token):
    routes = {"/rank": memory.rank, "/infer": memory.infer, "/generate": memory.generate}

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def reply(self, status, payload):
            data = json.dumps(payload).encode("utf-8")
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self):
            if self.path == "/stats":
                return self.reply(200, memory.stats())
            if self.path == "/health":
                return self.reply(200, {"ok": True})
            return self.reply(404, {"error": f"no route GET {self.path}"})

        def do_POST(self):
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            if token is not None and self.headers.get("authorization") != f"Bearer {token}":
                return self.reply(401, {"error": "missing or wrong Authorization header"})
            try:
                body = json.loads(raw)
            except ValueError as e:
                return self.reply(400, {"error": f"the body is not JSON: {e}"})
            path = self.path.split("?")[0]
            try:
                if path.endswith("/ingest"):
                    return self.reply(200, memory.ingest(body))
                if path in routes:
                    return self.reply(200, routes[path](body))
            except (KeyError, TypeError) as e:
                return self.reply(400, {"error": f"the body lacks a field the protocol has: {e}"})
            return self.reply(404, {"error": f"no route POST {path}"})

        def log_message(self, format, *args):
            pass

    return Handler


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000, help="0 takes a free port")
    parser.add_argument(
        "--ranking",
        choices=["bm25", "recency"],
        default="bm25",
        help="bm25 (default), or recency: the most recent sessions first, as the built-in recency retriever ranks",
    )
    parser.add_argument(
        "--token-env",
        help="require 'Authorization: Bearer <value of this environment variable>' on every POST",
    )
    args = parser.parse_args()
    token = os.environ.get(args.token_env) if args.token_env else None
    if args.token_env and not token:
        sys.exit(f"environment variable {args.token_env} is not set")
    server = ThreadingHTTPServer((args.host, args.port), handler(Memory(args.ranking), token))
    host, port = server.server_address[:2]
    print(f"listening on http://{host}:{port}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
