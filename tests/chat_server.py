"""A scripted chat-completions server on loopback, so the real OpenAI SDK can
be tested without the internet.

`ChatServer` is a real HTTP server (stdlib, threaded) on 127.0.0.1 with an
ephemeral port. It answers POST /v1/chat/completions from a script: a list of
replies consumed in order, each a dict with any of
  content: str              the assistant's text
  tool_calls: [{name, arguments}]   arguments a dict (sent as JSON) or a raw str
  stall: seconds            wait before answering (for client timeouts)
  truncate: True            stop the stream (or body) half-way and close
  status: int, body: str    an HTTP error reply (headers: {name: value} beside it); without
                            body, `message` in the habit's error shape
  error: "context"          the server's own context-length error reply
  finish: str               the finish reason (e.g. "length")
  reasoning: str            reasoning text, sent in the habit's reasoning field
  habits: {...}             this reply's habits over the server's
  hang: seconds             stream a piece of text every `hang` seconds and never finish
                            (until the client lets go, or 60 s)
It speaks both plain JSON replies and streaming SSE (`stream: true`), records
every chat request (body and headers) in `requests` and every other one (the
context and model-list look-ups) in `lookups`, and replies 500 with a clear
message once the script is used up. Use it as a context manager.

Like a real server it bounds each reply by the request's `max_tokens` (four
characters a token, as its usage counts them): a longer scripted reply is cut
there with finish reason "length" (habit "max_tokens": "ignore" sends it
whole). With habit "context" (tokens), it answers the look-ups the way its
server does (llama.cpp's /props, vLLM's max_model_len in /v1/models,
Ollama's /api/show) and refuses a prompt longer than that context with its
server's error, counting three characters a token; vLLM counts the
`max_tokens` asked for too. `/v1/models` lists habit "models" (default the
one model "scripted").

`habits` (see HABITS) reproduce how real servers differ, one at a time: how
tool calls are split into stream chunks, ids, index, argument encoding, the
reasoning field, chunks without choices, the end of the stream, where usage
goes, whether `response_format`, `tools` and `stream_options` are taken, and error bodies.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


OPENAI = {"pieces": 3, "ids": "first_piece", "index": True, "args": "text", "reasoning_field": None,
          "empty_choices": False, "done": True, "usage": "final_chunk", "role_chunk": True,
          "calls_in_one_chunk": False, "name_every_piece": False,
          "response_format": "accept", "tools": "accept", "errors": "openai",
          "max_tokens": "honor", "context": None, "models": ["scripted"], "server": "openai",
          "context_error": "This model's maximum context length is 8192 tokens. However, your messages "
                           "resulted in 9120 tokens. Please reduce the length of the messages."}

HABITS = {
    # OpenAI's API: arguments in several pieces, the id and name in the first piece only, usage in a
    # last chunk with no choices, [DONE] at the end, {"error": {"message", "type", "code"}}.
    "openai": OPENAI,
    # Ollama's /v1: each tool call whole in one chunk (its own index and id), reasoning in "reasoning".
    "ollama": {**OPENAI, "pieces": 1, "reasoning_field": "reasoning", "errors": "openai_plain", "server": "ollama"},
    # vLLM: arguments streamed in many small pieces, reasoning in "reasoning_content", errors as
    # {"object": "error", "message", "type", "code"}.
    "vllm": {**OPENAI, "pieces": 7, "reasoning_field": "reasoning_content", "errors": "vllm", "server": "vllm",
             "context_error": "This model's maximum context length is 4096 tokens. However, you requested "
                              "5210 tokens (4186 in the messages, 1024 in the completion)."},
    # llama.cpp's server: usage (and timings) in the chunk that carries the finish reason (delta {}),
    # the id repeated with every piece, errors {"error": {"code", "message", "type"}}. Some of its
    # forks end the stream without [DONE] (habit "done": False).
    "llamacpp": {**OPENAI, "pieces": 4, "ids": "every_piece", "usage": "last_choice_chunk",
                 "reasoning_field": "reasoning_content", "errors": "openai", "server": "llamacpp",
                 "context_error": "the request exceeds the available context size, try increasing it"},
}


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request, client_address) -> None:   # a client hanging up is no error here
        import sys
        if not isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            super().handle_error(request, client_address)


class ChatServer:
    def __init__(self, script: list[dict] | None = None, habits: dict | str = "openai"):
        self.habits = dict(HABITS[habits] if isinstance(habits, str) else {**OPENAI, **habits})
        self.script: list[dict] = list(script or [])
        self.requests: list[dict] = []
        self.lookups: list[dict] = []
        self._lock = threading.Lock()
        self._httpd = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, kwargs={"poll_interval": 0.05},
                                        daemon=True)

    @property
    def base_url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host}:{port}/v1"

    def add(self, *replies: dict) -> None:
        with self._lock:
            self.script.extend(replies)

    def add_first(self, reply: dict) -> None:
        with self._lock:
            self.script.insert(0, reply)

    def next_reply(self) -> dict | None:
        with self._lock:
            return self.script.pop(0) if self.script else None

    def start(self) -> "ChatServer":
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> "ChatServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _tool_calls(reply: dict) -> list[dict]:
    out = []
    for i, call in enumerate(reply.get("tool_calls") or []):
        args = call.get("arguments", {})
        out.append({"id": call.get("id", f"call_{i + 1}"), "type": "function",
                    "function": {"name": call["name"],
                                 "arguments": args if isinstance(args, str) else json.dumps(args)}})
    return out


def _tool_chunks(calls: list[dict], habits: dict) -> list[dict]:
    """The tool calls as stream chunks, split and labelled the way the habits say."""
    pieces: list[list[dict]] = []
    for k, call in enumerate(calls):
        args = call["function"]["arguments"]
        if habits["args"] == "double":
            args = json.dumps(args)
        n = max(1, habits["pieces"])
        size = max(1, -(-len(args) // n))
        parts = [args[i:i + size] for i in range(0, len(args), size)] or [""]
        out = []
        for j, part in enumerate(parts):
            tc: dict = {"function": {"arguments": part}}
            if habits["index"]:
                tc["index"] = k
            if j == 0 or habits["name_every_piece"]:
                tc["type"] = "function"
                tc["function"]["name"] = call["function"]["name"]
            ids = habits["ids"]
            if ids != "missing" and (j == 0 or ids == "every_piece"):
                tc["id"] = "call_0" if ids == "same" else call["id"]
            if habits["args"] == "object" and len(parts) == 1:
                tc["function"]["arguments"] = json.loads(args)
            out.append(tc)
        pieces.append(out)
    if habits["calls_in_one_chunk"]:
        return [{"index": 0, "finish_reason": None, "delta": {"role": "assistant", "tool_calls": [
            p[0] for p in pieces]}}] if pieces else []
    return [{"index": 0, "finish_reason": None, "delta": {"tool_calls": [tc]}} for p in pieces for tc in p]


def prompt_tokens(request: dict) -> int:
    """The prompt's size as the scripted server counts it against its context: 3 characters a token."""
    chars = sum(len(str(m.get("content") or "")) + len(json.dumps(m.get("tool_calls") or []))
                for m in request.get("messages", []))
    return (chars + len(json.dumps(request.get("tools") or [], separators=(",", ":")))) // 3


def _bounded(reply: dict, request: dict, habits: dict) -> dict:
    """The reply cut at the request's max_tokens (4 characters a token), as a server does."""
    limit = request.get("max_tokens") or request.get("max_completion_tokens")
    if habits["max_tokens"] != "honor" or not limit:
        return reply
    text = reply.get("content") or ""
    if len(text) > 4 * int(limit):
        return {**reply, "content": text[: 4 * int(limit)], "tool_calls": None, "finish": "length"}
    return reply


def _usage(reply: dict, request: dict) -> dict:
    prompt = sum(len(str(m.get("content") or "")) for m in request.get("messages", [])) // 4
    completion = len(reply.get("content") or "") // 4 + 8 * len(reply.get("tool_calls") or [])
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _handler_for(server: ChatServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:   # keep test output quiet
            pass

        def do_GET(self) -> None:
            server.lookups.append({"path": self.path, "headers": dict(self.headers)})
            h, ctx = server.habits, server.habits["context"]
            if self.path.rstrip("/").endswith("/v1/models"):
                entries = [{"id": m, "object": "model", "owned_by": h["server"], "created": 0,
                            **({"max_model_len": ctx} if h["server"] == "vllm" and ctx else {})}
                           for m in h["models"]]
                return self._send_json(200, {"object": "list", "data": entries})
            if self.path == "/props" and h["server"] == "llamacpp" and ctx:
                return self._send_json(200, {"default_generation_settings": {"n_ctx": ctx, "n_predict": -1},
                                             "total_slots": 1, "model_path": "scripted.gguf"})
            return self._send_json(404, {"error": {"message": f"File Not Found: {self.path}"}})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                request = json.loads(raw)
            except json.JSONDecodeError:
                return self._send_json(400, {"error": {"message": "request body is not JSON"}})
            if not self.path.endswith("/chat/completions"):
                server.lookups.append({"path": self.path, "body": request, "headers": dict(self.headers)})
                h = server.habits
                if self.path == "/api/show" and h["server"] == "ollama" and h["context"]:
                    return self._send_json(200, {"parameters": f"num_ctx {h['context']}\nstop \"<end>\"",
                                                 "model_info": {"gemma3.context_length": 32768}})
                return self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            server.requests.append({"path": self.path, "body": request, "headers": dict(self.headers)})
            habits = server.habits
            ctx = habits["context"]
            asked = prompt_tokens(request) + (int(request.get("max_tokens") or 0) if habits["server"] == "vllm" else 0)
            if ctx and asked > ctx:        # refused before the model runs: the scripted reply is still to come
                return self._error(400, habits["context_error"], habits)
            reply = server.next_reply()
            if reply is None:
                return self._send_json(500, {"error": {"message": "the scripted server has no reply left"}})
            habits = {**server.habits, **reply.get("habits", {})}
            reply = _bounded(reply, request, habits)
            if reply.get("stall"):
                time.sleep(float(reply["stall"]))
            if request.get("response_format") and habits["response_format"] != "accept":
                server.add_first(reply)   # refused before the model ran: the reply is still to come
                return self._error(400, habits["response_format"], habits)
            if request.get("stream_options") and habits.get("stream_options", "accept") != "accept":
                server.add_first(reply)
                return self._error(400, habits["stream_options"], habits)
            if request.get("tools") and habits["tools"] != "accept":
                server.add_first(reply)
                return self._error(400, habits["tools"], habits)
            if reply.get("error") == "context":
                return self._error(400, habits["context_error"], habits)
            if "status" in reply:
                body = reply.get("body")
                if body is None:
                    return self._error(int(reply["status"]), reply.get("message", f"error {reply['status']}"), habits,
                                       reply.get("headers", {}))
                return self._send_raw(int(reply["status"]), body.encode(), "application/json",
                                      reply.get("headers", {}))
            if request.get("stream"):
                return self._stream(reply, request, habits)
            message = {"role": "assistant", "content": reply.get("content")}
            calls = _tool_calls(reply)
            if calls:
                message["tool_calls"] = calls
            body = {"id": "chatcmpl-scripted", "object": "chat.completion", "created": int(time.time()),
                    "model": request.get("model", "scripted"),
                    "choices": [{"index": 0, "message": message,
                                 "finish_reason": "tool_calls" if calls else "stop"}],
                    "usage": _usage(reply, request)}
            data = json.dumps(body).encode()
            if reply.get("truncate"):
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data[: len(data) // 2])
                self.wfile.flush()
                self.close_connection = True
                return
            self._send_raw(200, data, "application/json")

        def _stream(self, reply: dict, request: dict, habits: dict) -> None:
            base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": int(time.time()),
                    "model": request.get("model", "scripted")}
            chunks = []
            if habits["role_chunk"]:
                chunks.append({"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None})
            if habits["reasoning_field"] and reply.get("reasoning"):
                chunks.append({"index": 0, "delta": {habits["reasoning_field"]: reply["reasoning"]},
                               "finish_reason": None})
            text = reply.get("content") or ""
            step = max(1, len(text) // 8) if len(text) < 4096 else 4096
            for i in range(0, len(text), step):
                chunks.append({"index": 0, "delta": {"content": text[i:i + step]}, "finish_reason": None})
            chunks += _tool_chunks(_tool_calls(reply), habits)
            finish = reply.get("finish") or ("tool_calls" if reply.get("tool_calls") else "stop")
            chunks.append({"index": 0, "delta": {}, "finish_reason": finish})
            events = [{**base, "choices": [c]} for c in chunks]
            if habits["empty_choices"]:
                events.insert(1, {**base, "choices": []})
            if habits["usage"] == "final_chunk" and (request.get("stream_options") or {}).get("include_usage"):
                events.append({**base, "choices": [], "usage": _usage(reply, request)})
            elif habits["usage"] == "last_choice_chunk":
                events[-1] = {**events[-1], "usage": _usage(reply, request),
                              "timings": {"prompt_n": 10, "predicted_n": 20}}
            events = [json.dumps(e) for e in events]
            if habits["done"]:
                events.append("[DONE]")
            if reply.get("truncate"):
                events = events[: max(2, len(events) // 2)]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            if reply.get("hang"):
                return self._hang(base, float(reply["hang"]))
            for e in events:
                self._chunk(f"data: {e}\n\n".encode())
            self.wfile.flush()
            if reply.get("truncate"):
                self.close_connection = True   # no terminating chunk: the stream just stops
                return
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _hang(self, base: dict, every: float) -> None:
            """A stream that keeps sending and never finishes (bounded here at 60 s)."""
            end = time.monotonic() + 60
            try:
                while time.monotonic() < end:
                    piece = {**base, "choices": [{"index": 0, "delta": {"content": "thinking "},
                                                  "finish_reason": None}]}
                    self._chunk(f"data: {json.dumps(piece)}\n\n".encode())
                    self.wfile.flush()
                    time.sleep(every)
            except (ConnectionError, OSError):
                pass
            self.close_connection = True

        def _error(self, status: int, message: str, habits: dict, headers: dict | None = None) -> None:
            shape = habits["errors"]
            if shape == "vllm":
                body = {"object": "error", "message": message, "type": "BadRequestError", "param": None,
                        "code": status}
            elif shape == "openai_plain":
                body = {"error": {"message": message, "type": "api_error", "param": None, "code": None}}
            else:
                body = {"error": {"message": message, "type": "invalid_request_error", "param": None,
                                  "code": "context_length_exceeded" if "context" in message else None}}
            self._send_raw(status, json.dumps(body).encode(), "application/json", headers or {})

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        def _send_json(self, status: int, obj: dict) -> None:
            self._send_raw(status, json.dumps(obj).encode(), "application/json")

        def _send_raw(self, status: int, data: bytes, ctype: str, headers: dict | None = None) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            for k, v in (headers or {}).items():
                self.send_header(k, str(v))
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

    return Handler
