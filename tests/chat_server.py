"""A scripted chat-completions server on loopback, so the real OpenAI SDK can
be tested without the internet.

`ChatServer` is a real HTTP server (stdlib, threaded) on 127.0.0.1 with an
ephemeral port. It answers POST /v1/chat/completions from a script: a list of
replies consumed in order, each a dict with any of
  content: str              the assistant's text
  tool_calls: [{name, arguments}]   arguments a dict (sent as JSON) or a raw str
  stall: seconds            wait before answering (for client timeouts)
  truncate: True            stop the stream (or body) half-way and close
  status: int, body: str    an HTTP error reply
It speaks both plain JSON replies and streaming SSE (`stream: true`), records
every request (body and headers) in `requests`, and replies 500 with a clear
message once the script is used up. Use it as a context manager.
"""
from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class ChatServer:
    def __init__(self, script: list[dict] | None = None):
        self.script: list[dict] = list(script or [])
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
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


def _usage(reply: dict, request: dict) -> dict:
    prompt = sum(len(str(m.get("content") or "")) for m in request.get("messages", [])) // 4
    completion = len(reply.get("content") or "") // 4 + 8 * len(reply.get("tool_calls") or [])
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def _handler_for(server: ChatServer):
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, *args) -> None:   # keep test output quiet
            pass

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                request = json.loads(raw)
            except json.JSONDecodeError:
                return self._send_json(400, {"error": {"message": "request body is not JSON"}})
            server.requests.append({"path": self.path, "body": request, "headers": dict(self.headers)})
            if not self.path.endswith("/chat/completions"):
                return self._send_json(404, {"error": {"message": f"no route {self.path}"}})
            reply = server.next_reply()
            if reply is None:
                return self._send_json(500, {"error": {"message": "the scripted server has no reply left"}})
            if reply.get("stall"):
                time.sleep(float(reply["stall"]))
            if "status" in reply:
                body = reply.get("body", json.dumps({"error": {"message": f"error {reply['status']}"}}))
                return self._send_raw(int(reply["status"]), body.encode(), "application/json")
            if request.get("stream"):
                return self._stream(reply, request)
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

        def _stream(self, reply: dict, request: dict) -> None:
            base = {"id": "chatcmpl-scripted", "object": "chat.completion.chunk", "created": int(time.time()),
                    "model": request.get("model", "scripted")}
            chunks = [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}]
            text = reply.get("content") or ""
            step = max(1, len(text) // 8) if len(text) < 4096 else 4096
            for i in range(0, len(text), step):
                chunks.append({"index": 0, "delta": {"content": text[i:i + step]}, "finish_reason": None})
            for k, call in enumerate(_tool_calls(reply)):
                args = call["function"]["arguments"]
                half = len(args) // 2
                chunks.append({"index": 0, "finish_reason": None, "delta": {"tool_calls": [
                    {"index": k, "id": call["id"], "type": "function",
                     "function": {"name": call["function"]["name"], "arguments": args[:half]}}]}})
                chunks.append({"index": 0, "finish_reason": None, "delta": {"tool_calls": [
                    {"index": k, "function": {"arguments": args[half:]}}]}})
            chunks.append({"index": 0, "delta": {},
                           "finish_reason": "tool_calls" if reply.get("tool_calls") else "stop"})
            events = [json.dumps({**base, "choices": [c]}) for c in chunks]
            events.append(json.dumps({**base, "choices": [], "usage": _usage(reply, request)}))
            events.append("[DONE]")
            if reply.get("truncate"):
                events = events[: max(2, len(events) // 2)]
            self.send_response(200)
            self.send_header("Content-Type", "text/event-stream")
            self.send_header("Cache-Control", "no-cache")
            if reply.get("truncate"):
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                for e in events:
                    self._chunk(f"data: {e}\n\n".encode())
                self.wfile.flush()
                self.close_connection = True   # no terminating chunk: the stream just stops
                return
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for e in events:
                self._chunk(f"data: {e}\n\n".encode())
            self.wfile.write(b"0\r\n\r\n")
            self.wfile.flush()

        def _chunk(self, data: bytes) -> None:
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")

        def _send_json(self, status: int, obj: dict) -> None:
            self._send_raw(status, json.dumps(obj).encode(), "application/json")

        def _send_raw(self, status: int, data: bytes, ctype: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            self.wfile.flush()

    return Handler
