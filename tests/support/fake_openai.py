"""An OpenAI-compatible server on 127.0.0.1 for tests and benchmarks, for the real client over real HTTP.

- chat completions: scripted replies, latency, a cap on requests in flight (429 + Retry-After beyond it), errors,
  hangs and malformed bodies;
- the Batch API: `/v1/files` (upload, content) and `/v1/batches` (create, retrieve, list, cancel). A batch moves one
  state per retrieve (validating -> in_progress -> finalizing -> completed); `batch_outcome(index, batch)` scripts
  another end (failed, expired: the requests not yet done go to the error file as batch_expired). Each request is
  answered by the same responder as a live call; a non-200 reply goes to the error file. Batch requests are counted
  in `batch_requests`, not in `calls`;
- embeddings: `/v1/embeddings` with deterministic vectors (`embedder(text)`), counted in `embedding_requests`;
- Anthropic's Message Batches: `/v1/messages/batches` (create with the requests in the body, retrieve, list, cancel,
  `results_url`). A batch ends at the retrieve after its creation (unless `hold`); each request is answered by the
  same responder, given the chat body the request stands for (its `system` as the first message), and counted in
  `message_batch_requests`; the `x-api-key` header of each call is kept in `anthropic_keys`.
"""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    content: str | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    raw_body: bytes | None = None          # send exactly these bytes (malformed bodies)
    error: dict[str, Any] | None = None    # OpenAI-style {"message", "type", "code"}
    response_id: str | None = None         # the completion's "id" (default chatcmpl-N)
    # sent when the request asks for them: [token, logprob, [[alternative, logprob], ...]] per token (default: each
    # word of the content, certain, with no alternatives)
    logprobs: list | None = None


def default_content(prompt: str) -> str:
    """A well-formed reply for whichever output format the prompt asks for."""
    if "[RESULT]" in prompt:
        return "Feedback: The response matches the reference on the main point. [RESULT] 4"
    if "Total rating" in prompt:
        return "Evaluation: clear and answerable.\nTotal rating: 5"
    if "is_correct" in prompt:
        return '{"is_correct": true, "reasoning": "It agrees with the ground truth."}'
    if "Score: N" in prompt:
        return "The passage is related.\nScore: 2"
    if "an attempt to answer" in prompt:
        return "yes"
    if "Reply 1, 2 or TIE" in prompt:          # a pairwise judge (core.review.pairwise): the first answer
        return "1"
    if '"verdict"' in prompt:       # ragas' AspectCritic (bench/bench_judge_floor.py's ragas side)
        return '{"reason": "The answer agrees with the reference.", "verdict": 1}'
    return "OK"


Responder = Callable[[dict, int], Reply]


class FakeOpenAI:
    def __init__(self, responder: Responder | None = None, *, latency: float = 0.0,
                 max_in_flight: int | None = None, retry_after: str = "1",
                 tokens: Callable[[str], int] | None = None, rpm: float | None = None, burst: float | None = None,
                 limit_headers: bool = True, window: float | None = None) -> None:
        self.responder = responder or (lambda body, n: Reply(default_content(body["messages"][-1]["content"])))
        self.latency, self.max_in_flight, self.retry_after = latency, max_in_flight, retry_after
        # a requests-per-minute limit as providers keep it: a bucket of `burst` requests (a second's worth by
        # default) refilled at rpm / 60 a second; a request finding it empty gets 429. With `limit_headers` every
        # reply says the limit as OpenAI's API does (x-ratelimit-limit-requests, -remaining-requests,
        # -reset-requests) and a 429 says when to come back (retry-after-ms); without, a 429 says nothing more
        self.rpm, self.limit_headers = rpm, limit_headers
        # or, with `window` (seconds), a fixed window: rpm * window / 60 requests in each, the count starting again
        # at each window's start (as many gateways keep a limit); a 429's retry-after-ms says when it starts again
        self.window = window
        self._window_start: float | None = None      # the first window starts with the first request
        self._window_count = 0
        self.burst = burst if burst is not None else (rpm / 60 if rpm else 0.0)
        self._bucket, self._filled = self.burst, time.monotonic()
        self.tokens = tokens      # the server's tokenizer (default: 4 characters per token)
        self.usage = {"prompt_tokens": 0, "completion_tokens": 0}
        self.lock = threading.Lock()
        self.requests: list[dict] = []
        self.auth_headers: list[str] = []
        self.in_flight = 0
        self.peak_in_flight = 0
        self.rejected = 0
        self.logprob_requests = 0                   # completions that asked for token log-probabilities
        self._server: ThreadingHTTPServer | None = None
        # the Batch API
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.batch_requests: list[dict] = []        # request lines answered inside batches
        self.batch_outcome: Callable[[int, dict], str] = lambda index, batch: "completed"
        self.expired_share = 0.5                    # of an expired batch's requests, the share that was done
        self.retrieves = 0
        self.hold = False                           # while True, batches stay in_progress (kill a poller meanwhile)
        self.cancels: list[str] = []
        # Anthropic's Message Batches
        self.message_batches: dict[str, dict[str, Any]] = {}
        self.message_batch_bodies: dict[str, list[dict]] = {}
        self.message_batch_requests: list[dict] = []
        self.anthropic_keys: list[str] = []
        # embeddings
        self.embedder: Callable[[str], list[float]] | None = None
        self.embedding_requests: list[dict] = []

    def take_request(self) -> dict[str, str] | None:
        """Under the lock: take a request from the rate limit's bucket; None when it had one, else the 429's headers."""
        if not self.rpm:
            return None
        now = time.monotonic()
        if self.window:
            if self._window_start is None:
                self._window_start = now
            passed = (now - self._window_start) // self.window
            if passed:
                self._window_start += passed * self.window
                self._window_count = 0
            if self._window_count < self.rpm * self.window / 60:
                self._window_count += 1
                return None
            wait = self._window_start + self.window - now
            return {"retry-after-ms": f"{wait * 1000:.0f}", "x-ratelimit-limit-requests": f"{self.rpm:g}",
                    "x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": f"{wait:.3f}s"} \
                if self.limit_headers else {}
        self._bucket = min(self.burst, self._bucket + (now - self._filled) * self.rpm / 60)
        self._filled = now
        if self._bucket >= 1 - 1e-6:      # (a client pacing exactly at the limit is not refused by rounding)
            self._bucket -= 1
            return None
        if not self.limit_headers:
            return {}
        return {**self.limit_said(), "retry-after-ms": f"{(1 - self._bucket) * 60 / self.rpm * 1000:.0f}"}

    def limit_said(self) -> dict[str, str]:
        """The rate limit's headers as OpenAI's API sends them (the reset: until the bucket is full again)."""
        assert self.rpm
        if self.window:
            assert self._window_start is not None
            left = int(self.rpm * self.window / 60 - self._window_count)
            return {"x-ratelimit-limit-requests": f"{self.rpm:g}", "x-ratelimit-remaining-requests": str(left),
                    "x-ratelimit-reset-requests": f"{self._window_start + self.window - time.monotonic():.3f}s"}
        full = (self.burst - self._bucket) * 60 / self.rpm
        return {"x-ratelimit-limit-requests": f"{self.rpm:g}", "x-ratelimit-remaining-requests": str(int(self._bucket)),
                "x-ratelimit-reset-requests": f"{full:.3f}s"}

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def calls(self) -> int:
        return len(self.requests)

    def __enter__(self) -> FakeOpenAI:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            disable_nagle_algorithm = True  # headers and body go out in two writes: no 40 ms delayed-ACK stall

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802
                path = self.path.split("?")[0]
                if path.startswith("/v1/messages/batches"):
                    return self.message_batches("GET", path, b"")
                with fake.lock:
                    if path.startswith("/v1/files/") and path.endswith("/content"):
                        data = fake.files.get(path.split("/")[3])
                        if data is None:
                            return self.send_json(404, {"error": {"message": "no such file"}}, {})
                        return self.send_bytes(200, data, {"Content-Type": "application/octet-stream"})
                    if path == "/v1/batches":
                        return self.send_json(200, {"object": "list", "data": list(fake.batches.values())[::-1],
                                                    "has_more": False}, {})
                    if path.startswith("/v1/batches/"):
                        batch = fake.batches.get(path.split("/")[3])
                        if batch is None:
                            return self.send_json(404, {"error": {"message": "no such batch"}}, {})
                        fake.retrieves += 1
                        fake.advance(batch)
                        return self.send_json(200, batch, {})
                self.send_json(404, {"error": {"message": f"no route {path}"}}, {})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                path = self.path.split("?")[0]
                if path.startswith("/v1/messages/batches"):
                    return self.message_batches("POST", path, raw)
                if path == "/v1/files":
                    return self.send_json(200, fake.upload(self.headers.get("Content-Type", ""), raw), {})
                if path == "/v1/batches":
                    return self.send_json(200, fake.create_batch(json.loads(raw)), {})
                if path.startswith("/v1/batches/") and path.endswith("/cancel"):
                    with fake.lock:
                        batch = fake.batches[path.split("/")[3]]
                        fake.cancels.append(batch["id"])
                        if batch["status"] not in ("completed", "failed", "expired", "cancelled"):
                            batch["status"] = "cancelling"
                        return self.send_json(200, batch, {})
                if path == "/v1/embeddings":
                    return self.embeddings(json.loads(raw))
                body = json.loads(raw or b"{}")
                with fake.lock:
                    limited = fake.take_request()
                    full = fake.max_in_flight is not None and fake.in_flight >= fake.max_in_flight
                    if limited is not None or full:
                        fake.rejected += 1
                        reject = True
                    else:
                        reject = False
                        fake.in_flight += 1
                        fake.peak_in_flight = max(fake.peak_in_flight, fake.in_flight)
                        fake.requests.append(body)
                        fake.auth_headers.append(self.headers.get("Authorization", ""))
                        n = len(fake.requests)
                if reject and limited is not None:
                    self.send_json(429, {"error": {"message": "rate limit reached for requests", "type": "requests",
                                                   "code": "rate_limit_exceeded"}}, limited)
                    return
                if reject:
                    self.send_json(429, {"error": {"message": "too many requests in flight", "type": "rate_limit",
                                                   "code": "rate_limit_exceeded"}}, {"Retry-After": fake.retry_after})
                    return
                try:
                    reply = fake.responder(body, n)
                    time.sleep(fake.latency + reply.delay)
                    self.answer(body, reply, n)
                except (BrokenPipeError, ConnectionResetError):
                    pass
                finally:
                    with fake.lock:
                        fake.in_flight -= 1

            def answer(self, body: dict, reply: Reply, n: int) -> None:
                if reply.raw_body is not None:
                    self.send_bytes(reply.status, reply.raw_body, reply.headers)
                elif reply.status != 200:
                    error = reply.error or {"message": f"scripted {reply.status}", "type": "error", "code": None}
                    self.send_json(reply.status, {"error": error}, reply.headers)
                else:
                    with fake.lock:
                        said = fake.limit_said() if fake.rpm and fake.limit_headers else {}
                    self.send_json(200, fake.completion(body, reply, n),
                                   {"x-request-id": f"req-{n}", **said, **reply.headers})

            def message_batches(self, method: str, path: str, raw: bytes) -> None:
                parts = path.split("/")[4:]          # after /v1/messages/batches
                with fake.lock:
                    fake.anthropic_keys.append(self.headers.get("x-api-key", ""))
                if method == "POST" and not parts:
                    return self.send_json(200, fake.create_message_batch(json.loads(raw)), {})
                if method == "GET" and not parts:
                    with fake.lock:
                        found = list(fake.message_batches.values())[::-1]
                    return self.send_json(200, {"data": found, "has_more": False}, {})
                batch = fake.message_batches.get(parts[0])
                if batch is None:
                    return self.send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                                           "message": "no such batch"}}, {})
                if method == "POST" and parts[1:] == ["cancel"]:
                    with fake.lock:
                        fake.cancels.append(batch["id"])
                        if batch["processing_status"] == "in_progress":
                            batch["processing_status"] = "canceling"
                            batch["cancel_initiated_at"] = "2026-01-01T00:00:00Z"
                    return self.send_json(200, batch, {})
                if method == "GET" and parts[1:] == ["results"]:
                    with fake.lock:
                        data = fake.files.get(f"results-{batch['id']}", b"")
                    return self.send_bytes(200, data, {"Content-Type": "application/binary"})
                if method == "GET" and len(parts) == 1:
                    with fake.lock:
                        fake.retrieves += 1
                        fake.advance_message_batch(batch)
                    return self.send_json(200, batch, {})
                self.send_json(404, {"type": "error", "error": {"type": "not_found_error", "message": path}}, {})

            def embeddings(self, body: dict) -> None:
                if fake.embedder is None:
                    return self.send_json(404, {"error": {"message": "no embeddings here"}}, {})
                texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
                with fake.lock:
                    fake.embedding_requests.append(body)
                data = [{"object": "embedding", "index": i, "embedding": fake.embedder(t)} for i, t in enumerate(texts)]
                self.send_json(200, {"object": "list", "data": data, "model": body.get("model"),
                                     "usage": {"prompt_tokens": 1, "total_tokens": 1}}, {})

            def send_json(self, status: int, obj: dict, headers: dict[str, str]) -> None:
                self.send_bytes(status, json.dumps(obj).encode(), {"Content-Type": "application/json", **headers})

            def send_bytes(self, status: int, data: bytes, headers: dict[str, str]) -> None:
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        class Server(ThreadingHTTPServer):
            request_queue_size = 256  # the default backlog of 5 refuses bursts of new connections

            def handle_error(self, request: Any, client_address: Any) -> None:
                pass  # a client that was killed or cancelled mid-request resets its connection: not news

        self._server = Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def completion(self, body: dict, reply: Reply, n: int) -> dict:
        """A chat completion body for `reply` (usage counted by the server's tokenizer)."""
        messages = body.get("messages", [])
        if self.tokens is not None:   # a chat template: each message's text and a few tokens around it
            usage = {"prompt_tokens": sum(self.tokens(m.get("content") or "") + 4 for m in messages),
                     "completion_tokens": self.tokens(reply.content or "")}
        else:
            prompt = " ".join(m.get("content") or "" for m in messages)
            usage = {"prompt_tokens": max(1, len(prompt) // 4),
                     "completion_tokens": max(1, len(reply.content or "") // 4)}
        with self.lock:
            for k in self.usage:
                self.usage[k] += usage[k]
        usage["total_tokens"] = usage["prompt_tokens"] + usage["completion_tokens"]
        choice: dict[str, Any] = {"index": 0, "finish_reason": "stop",
                                  "message": {"role": "assistant", "content": reply.content}}
        if body.get("logprobs"):
            with self.lock:
                self.logprob_requests += 1
            tokens = reply.logprobs if reply.logprobs is not None else [
                [w, 0.0, []] for w in (reply.content or "").split()]
            choice["logprobs"] = {"content": [
                {"token": t, "logprob": lp, "bytes": None,
                 "top_logprobs": [{"token": a, "logprob": alp, "bytes": None} for a, alp in alts]}
                for t, lp, alts in tokens]}
        return {"id": reply.response_id or f"chatcmpl-{n}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model"), "usage": usage, "choices": [choice]}

    # --- the Batch API ---------------------------------------------------------------------------------------
    def upload(self, content_type: str, raw: bytes) -> dict:
        from email.parser import BytesParser
        from email.policy import HTTP

        message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
        fields = {part.get_param("name", header="content-disposition"): part for part in message.iter_parts()}
        data = fields["file"].get_payload(decode=True)
        with self.lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = data
        return {"id": file_id, "object": "file", "bytes": len(data), "created_at": int(time.time()),
                "filename": fields["file"].get_filename(), "purpose": fields["purpose"].get_content().strip(),
                "status": "processed"}

    def create_batch(self, body: dict) -> dict:
        with self.lock:
            batch_id = f"batch_{len(self.batches) + 1}"
            lines = self.files[body["input_file_id"]].decode().splitlines()
            batch = {"id": batch_id, "object": "batch", "endpoint": body["endpoint"], "errors": None,
                     "input_file_id": body["input_file_id"], "completion_window": body["completion_window"],
                     "status": "validating", "output_file_id": None, "error_file_id": None,
                     "created_at": int(time.time()), "metadata": body.get("metadata"),
                     "request_counts": {"total": len(lines), "completed": 0, "failed": 0}}
            self.batches[batch_id] = batch
        return batch

    def advance(self, batch: dict) -> None:
        """One step along validating -> in_progress -> finalizing -> an end (called with the lock held)."""
        status = batch["status"]
        index = list(self.batches).index(batch["id"])
        if status == "validating":
            if self.batch_outcome(index, batch) == "failed":
                batch["status"] = "failed"
                batch["errors"] = {"object": "list", "data": [{"code": "invalid_request", "line": 1,
                                                                "message": "scripted validation failure"}]}
            else:
                batch["status"] = "in_progress"
        elif status == "in_progress" and self.hold:
            pass
        elif status == "in_progress":
            batch["status"] = "expired" if self.batch_outcome(index, batch) == "expired" else "finalizing"
            if batch["status"] == "expired":
                self.finish(batch, self.expired_share, "batch_expired")
        elif status == "finalizing":
            batch["status"] = "completed"
            self.finish(batch, 1.0, None)
        elif status == "cancelling":
            batch["status"] = "cancelled"
            self.finish(batch, 0.5, "batch_cancelled")

    def finish(self, batch: dict, share: float, left_code: str | None) -> None:
        """Answer the first `share` of the requests; the rest (if any) fail with `left_code`."""
        lines = [json.loads(x) for x in self.files[batch["input_file_id"]].decode().splitlines()]
        done = int(len(lines) * share)
        out, errors = [], []
        for k, line in enumerate(lines):
            if k >= done:
                errors.append({"id": f"batch_req_{k}", "custom_id": line["custom_id"], "response": None,
                               "error": {"code": left_code, "message": f"{left_code}: not processed"}})
                continue
            self.batch_requests.append(line)
            n = len(self.batch_requests)
            self.lock.release()   # the responder may take the lock (counters)
            try:
                reply = self.responder(line["body"], n)
                body = None if reply.status != 200 else self.completion(line["body"], reply, n)
            finally:
                self.lock.acquire()
            if reply.status != 200:
                error = reply.error or {"message": f"scripted {reply.status}", "type": "error", "code": None}
                errors.append({"id": f"batch_req_{k}", "custom_id": line["custom_id"], "error": None,
                               "response": {"status_code": reply.status, "request_id": f"req-b{n}",
                                            "body": {"error": error}}})
            else:
                out.append({"id": f"batch_req_{k}", "custom_id": line["custom_id"], "error": None,
                            "response": {"status_code": 200, "request_id": f"req-b{n}", "body": body}})
        for name, rows in (("output_file_id", out), ("error_file_id", errors)):
            if rows:
                file_id = f"file-{len(self.files) + 1}"
                self.files[file_id] = "".join(json.dumps(r) + "\n" for r in rows).encode()
                batch[name] = file_id
        batch["request_counts"] = {"total": len(lines), "completed": len(out), "failed": len(errors)}

    # --- Anthropic's Message Batches ----------------------------------------------------------------------------
    def create_message_batch(self, body: dict) -> dict:
        from datetime import UTC, datetime

        with self.lock:
            batch_id = f"msgbatch_{len(self.message_batches) + 1:04d}"
            requests = body["requests"]
            batch = {"id": batch_id, "type": "message_batch", "processing_status": "in_progress",
                     "request_counts": {"processing": len(requests), "succeeded": 0, "errored": 0, "canceled": 0,
                                        "expired": 0},
                     "ended_at": None, "created_at": datetime.now(UTC).isoformat().replace("+00:00", "Z"),
                     "expires_at": None, "cancel_initiated_at": None, "results_url": None}
            self.message_batches[batch_id] = batch
            self.message_batch_bodies[batch_id] = requests
        return batch

    def advance_message_batch(self, batch: dict) -> None:
        """in_progress -> ended (all answered), canceling -> ended (none answered); with the lock held."""
        state = batch["processing_status"]
        if state == "ended" or (state == "in_progress" and self.hold):
            return
        requests = self.message_batch_bodies[batch["id"]]
        lines, counts = [], {"processing": 0, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        for request in requests:
            if state == "canceling":
                lines.append({"custom_id": request["custom_id"], "result": {"type": "canceled"}})
                counts["canceled"] += 1
                continue
            params = request["params"]
            body = {"model": params["model"], "max_tokens": params["max_tokens"],
                    "messages": ([{"role": "system", "content": params["system"]}] if "system" in params else [])
                    + params["messages"]}
            self.message_batch_requests.append(request)
            n = len(self.message_batch_requests)
            self.lock.release()   # the responder may take the lock (counters)
            try:
                reply = self.responder(body, n)
            finally:
                self.lock.acquire()
            if reply.status != 200:
                lines.append({"custom_id": request["custom_id"], "result": {"type": "errored", "error": {
                    "type": "error", "error": {"type": "api_error", "message": f"scripted {reply.status}"}}}})
                counts["errored"] += 1
                continue
            text = reply.content or ""
            lines.append({"custom_id": request["custom_id"], "result": {"type": "succeeded", "message": {
                "id": f"msg_{n}", "type": "message", "role": "assistant", "model": params["model"],
                "content": [{"type": "text", "text": text}], "stop_reason": "end_turn",
                "usage": {"input_tokens": max(1, len(json.dumps(body)) // 4),
                          "output_tokens": max(1, len(text) // 4)}}}})
            counts["succeeded"] += 1
        self.files[f"results-{batch['id']}"] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        batch.update({"processing_status": "ended", "request_counts": counts, "ended_at": batch["created_at"],
                      "results_url": f"{self.url}/messages/batches/{batch['id']}/results"})

    def __exit__(self, *exc: object) -> None:
        assert self._server is not None
        self._server.shutdown()
        self._server.server_close()


def question_of(body: dict) -> str:
    """The question a judge prompt carries (inside <instruction>/<question>/<query> tags)."""
    text = "\n".join(m.get("content") or "" for m in body.get("messages", []) if m.get("role") == "user")
    m = re.search(r"<(instruction|question|query)>((?:(?!<\1>).)*?)</\1>", text, re.S)
    return m.group(2).strip() if m else ""


def main() -> None:
    """Serve from a process of its own (benchmarks: the server must not share the client's GIL)."""
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--latency", type=float, default=0.0)
    parser.add_argument("--max-in-flight", type=int)
    parser.add_argument("--retry-after", default="1")
    parser.add_argument("--rate-429", type=float, default=0.0, help="share of requests refused with 429 at random")
    parser.add_argument("--hang-rate", type=float, default=0.0, help="share of requests that hang")
    parser.add_argument("--hang-seconds", type=float, default=30.0)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--rpm", type=float, help="a requests-per-minute limit (429 beyond it)")
    parser.add_argument("--burst", type=float, help="requests the limit lets through at once (default: rpm / 60)")
    parser.add_argument("--window", type=float, help="a fixed window of this many seconds instead of a bucket")
    parser.add_argument("--no-limit-headers", action="store_true",
                        help="the limit's 429s and replies say nothing of it")
    args = parser.parse_args()
    responder = None
    if args.rate_429 or args.hang_rate:
        import random

        rng, rng_lock = random.Random(args.seed), threading.Lock()

        def responder(body: dict, n: int) -> Reply:
            with rng_lock:
                roll = rng.random()
            if roll < args.rate_429:
                return Reply(status=429, headers={"Retry-After": args.retry_after},
                             error={"message": "rate limited", "type": "rate_limit", "code": "rate_limit_exceeded"})
            content = default_content(body["messages"][-1]["content"])
            if roll < args.rate_429 + args.hang_rate:
                return Reply(content, delay=args.hang_seconds)
            return Reply(content)
    with FakeOpenAI(responder, latency=args.latency, max_in_flight=args.max_in_flight, retry_after=args.retry_after,
                    rpm=args.rpm, burst=args.burst, limit_headers=not args.no_limit_headers,
                    window=args.window) as server:
        print(server.url, flush=True)
        try:
            while True:
                time.sleep(1)
                print(json.dumps({"calls": server.calls, "rejected": server.rejected,
                                  "peak_in_flight": server.peak_in_flight}), flush=True)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
