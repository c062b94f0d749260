"""An outside engine's batch runner, as vLLM's `python -m vllm.entrypoints.openai.run_batch -i IN -o OUT` reads and
writes: each input line a request (`custom_id`, `method`, `url`, `body`), each output line
`{"id", "custom_id", "response": {"status_code", "request_id", "body"}, "error"}` — here the body is sent to an
OpenAI-compatible server (the tests' loopback one) instead of a model in this process.

    python -m tests.support.batch_runner -i shard-00001.jsonl -o results-00001.jsonl --url http://127.0.0.1:PORT/v1
        [--fail-every K]   # every K-th request gets an error line instead of a reply
"""

from __future__ import annotations

import argparse
import json
import urllib.error
import urllib.request


def run(source: str, target: str, url: str, fail_every: int = 0) -> int:
    written = 0
    with open(source, encoding="utf-8") as inp, open(target, "w", encoding="utf-8") as out:
        for n, line in enumerate(inp, start=1):
            if not line.strip():
                continue
            request = json.loads(line)
            assert request["method"] == "POST" and request["url"] == "/v1/chat/completions", request
            result: dict = {"id": f"vllm-{n}", "custom_id": request["custom_id"], "response": None, "error": None}
            if fail_every and n % fail_every == 0:
                result["error"] = {"code": "engine_error", "message": "the engine failed this request"}
            else:
                sent = urllib.request.Request(url.rstrip("/") + "/chat/completions",
                                              data=json.dumps(request["body"]).encode(),
                                              headers={"Content-Type": "application/json",
                                                       "Authorization": "Bearer unused"})
                try:
                    with urllib.request.urlopen(sent, timeout=30) as reply:
                        status, body = reply.status, json.loads(reply.read())
                except urllib.error.HTTPError as exc:
                    status, body = exc.code, json.loads(exc.read() or b"{}")
                result["response"] = {"status_code": status, "request_id": f"vllm-batch-{n}", "body": body}
            out.write(json.dumps(result) + "\n")
            written += 1
    return written


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("-i", dest="source", required=True)
    ap.add_argument("-o", dest="target", required=True)
    ap.add_argument("--url", required=True)
    ap.add_argument("--fail-every", type=int, default=0)
    args = ap.parse_args()
    run(args.source, args.target, args.url, args.fail_every)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
