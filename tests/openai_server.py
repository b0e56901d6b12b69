"""A scripted OpenAI-compatible chat-completions server on 127.0.0.1, for running the real
`langchain-openai` client (and the `openai` SDK under it) without a key or the network.

`POST /v1/chat/completions` answers with the next scripted reply: text, tool calls, an HTTP
error (429 rate limit, 500), a hang, or a stream cut off midway; `stream: true` gets the reply
as server-sent events, tool-call deltas included, the way OpenAI sends them. Every request body
is recorded. With the script used up, `fallback(request)` answers (by default a 500 naming the
unscripted request).
A request OpenAI would refuse (a tool message that answers no call, a tool call left without
its answer, a malformed tool schema, a strict one breaking tests/provider_rules.py) gets
OpenAI's 400 instead of a reply.
The server stops on `close()` (or leaving the `with` block), and by itself after `lifetime`
seconds.
"""

from __future__ import annotations

import json
import re
import socket
import struct
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.provider_rules import openai_strict_problems
from tests.scripted_server import JSONHandler, ScriptedServer

API_KEY = "sk-test-not-a-real-key"


@dataclass(frozen=True)
class Reply:
    """One scripted answer: text and tool calls, or an HTTP error status, or a hang."""

    text: str = ""
    tool_calls: tuple[tuple[str, dict[str, Any]], ...] = ()
    status: int = 200
    error: str = ""
    hang_seconds: float = 0.0
    cut_after: int | None = None
    reset: bool = True


def text(content: str) -> Reply:
    """An assistant message with this text."""
    return Reply(text=content)


def call(name: str, **args: Any) -> Reply:
    """An assistant message calling one tool."""
    return Reply(tool_calls=((name, args),))


def failure(status: int, message: str) -> Reply:
    """An HTTP error with OpenAI's error body (429 is a rate limit)."""
    return Reply(status=status, error=message)


RATE_LIMITED = failure(429, "Rate limit reached for requests")
SERVER_ERROR = failure(500, "The server had an error while processing your request")


def hang(seconds: float = 30.0) -> Reply:
    """A request that is accepted and never answered (for `seconds`, or until close)."""
    return Reply(hang_seconds=seconds)


def cut(content: str, after: int = 3, reset: bool = True) -> Reply:
    """A streamed text reply whose connection drops after `after` chunks: reset (as a proxy
    or a crashed server does) or closed cleanly before the end of the stream."""
    return Reply(text=content, cut_after=after, reset=reset)


def unreachable_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens (a server that is down)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


@dataclass
class Request:
    """One request the server got: its path and JSON body."""

    path: str
    body: dict[str, Any]

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The chat messages sent."""
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str:
        """The text of the system message(s)."""
        return "\n".join(_content(m) for m in self.messages if m["role"] == "system")

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered to the model."""
        return [t["function"]["name"] for t in self.body.get("tools", [])]

    def tool(self, name: str) -> dict[str, Any]:
        """The function schema of one offered tool."""
        found: list[dict[str, Any]] = [
            t["function"] for t in self.body.get("tools", []) if t["function"]["name"] == name
        ]
        assert found, f"tool {name} not offered: {self.tool_names}"
        return found[0]


def _content(message: dict[str, Any]) -> str:
    content = message.get("content") or ""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


@dataclass
class OpenAIServer(ScriptedServer[Request, Reply]):
    """The scripted server; `base_url` is what OPENAI_BASE_URL should be."""

    fallback: Callable[[Request], Reply] | None = None

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The chat-completions handler."""
        return _handler(self)

    @property
    def base_url(self) -> str:
        """The API base URL, http://127.0.0.1:<port>/v1."""
        return f"{self.address}/v1"

    @property
    def completions(self) -> list[Request]:
        """The chat-completion requests received, in order."""
        with self._lock:
            return [r for r in self.requests if r.path.endswith("/chat/completions")]

    def _next(self, request: Request) -> Reply:
        reply = self.take(request)
        if reply is not None:
            return reply
        if self.fallback is not None:
            return self.fallback(request)
        last = _content(request.messages[-1]) if request.messages else ""
        return failure(500, f"no scripted reply left for a request ending {last[:80]!r}")


def _handler(owner: OpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(JSONHandler):
        def do_POST(self) -> None:
            body = self.read_json()
            if not self.path.endswith("/chat/completions"):
                self._json(404, _error(f"unknown path {self.path}", "invalid_request_error"))
                return
            request = Request(self.path, body)
            refused = invalid(request)
            if refused:
                owner.refuse(request, refused)
                self._json(400, _error(refused, "invalid_request_error"))
                return
            reply = owner._next(request)
            if reply.hang_seconds:
                owner._closing.wait(reply.hang_seconds)
                return
            if reply.status != 200:
                kind = "requests" if reply.status == 429 else "server_error"
                self._json(reply.status, _error(reply.error, kind))
                return
            model = str(body.get("model", "gpt-test"))
            if body.get("stream"):
                self._stream(
                    reply, model, bool((body.get("stream_options") or {}).get("include_usage"))
                )
            else:
                self._json(200, _completion(reply, model))

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            headers = {"x-request-id": f"req_{len(owner.requests)}"}
            if status == 429:
                headers["retry-after-ms"] = "10"
            self.send_json(status, payload, headers)

        def _stream(self, reply: Reply, model: str, usage: bool) -> None:
            self.start_events()
            chunks = _chunks(reply, model, usage)
            for chunk in chunks[: reply.cut_after]:
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()
            if reply.cut_after is not None:
                if reply.reset:
                    linger = struct.pack("ii", 1, 0)
                    self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, linger)
                    self.connection.close()
                else:
                    self.connection.shutdown(socket.SHUT_RDWR)
                return
            self.wfile.write(b"data: [DONE]\n\n")
            self.wfile.flush()

    return Handler


TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def invalid(request: Request) -> str:
    """Why OpenAI would refuse this request with a 400, or "" when it would not."""
    for tool in request.body.get("tools", []):
        function = tool.get("function") or {}
        if tool.get("type") != "function" or not TOOL_NAME.match(function.get("name", "")):
            return f"Invalid 'tools': {json.dumps(tool)[:120]}"
        if (function.get("parameters") or {"type": "object"}).get("type") != "object":
            return f"Invalid schema for function '{function['name']}': type must be 'object'."
        problems = openai_strict_problems([tool]) if function.get("strict") else []
        if problems:
            return f"Invalid schema for function '{function['name']}': {problems[0]}"
    open_calls: list[str] = []
    for n, message in enumerate(request.messages):
        role = message.get("role")
        if open_calls and role != "tool":
            return (
                "An assistant message with 'tool_calls' must be followed by tool messages "
                "responding to each 'tool_call_id'. The following tool_call_ids did not have "
                f"response messages: {', '.join(open_calls)}"
            )
        if role == "tool":
            if message.get("tool_call_id") not in open_calls:
                return (
                    f"Invalid parameter: messages[{n}] with role 'tool' must be a response to a "
                    "preceeding message with 'tool_calls'."
                )
            open_calls.remove(message["tool_call_id"])
        elif role == "assistant":
            open_calls = [c["id"] for c in message.get("tool_calls") or []]
            if message.get("content") is None and not open_calls:
                return f"Invalid value for 'content': messages[{n}] has no content."
        elif role not in ("system", "developer", "user"):
            return f"Invalid value: '{role}' in messages[{n}].role"
    if open_calls:
        return f"tool_call_ids without response messages: {', '.join(open_calls)}"
    return ""


def _error(message: str, kind: str) -> dict[str, Any]:
    code = "rate_limit_exceeded" if kind == "requests" else None
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _calls(reply: Reply) -> list[dict[str, Any]]:
    return [
        {
            "id": f"call_{n}_{name}",
            "type": "function",
            "function": {"name": name, "arguments": json.dumps(args)},
        }
        for n, (name, args) in enumerate(reply.tool_calls)
    ]


def _usage() -> dict[str, int]:
    return {"prompt_tokens": 50, "completion_tokens": 10, "total_tokens": 60}


def _completion(reply: Reply, model: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
    if reply.tool_calls:
        message["tool_calls"] = _calls(reply)
    return {
        "id": "chatcmpl-test",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": message,
                "logprobs": None,
                "finish_reason": "tool_calls" if reply.tool_calls else "stop",
            }
        ],
        "usage": _usage(),
    }


def _chunks(reply: Reply, model: str, usage: bool) -> list[dict[str, Any]]:
    """The reply as OpenAI streams it: the role, the text in pieces, each tool call's id and
    name and then its arguments in fragments, the finish reason, and usage when asked for."""
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": reply.text[i : i + 7]} for i in range(0, len(reply.text), 7)]
    for index, tool_call in enumerate(_calls(reply)):
        function = tool_call["function"]
        head = {"id": tool_call["id"], "type": "function"}
        deltas.append(
            {
                "tool_calls": [
                    {
                        "index": index,
                        **head,
                        "function": {"name": function["name"], "arguments": ""},
                    }
                ]
            }
        )
        arguments = function["arguments"]
        deltas += [
            {"tool_calls": [{"index": index, "function": {"arguments": arguments[i : i + 5]}}]}
            for i in range(0, len(arguments), 5)
        ]

    def chunk(choices: list[dict[str, Any]], **extra: Any) -> dict[str, Any]:
        base = {"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": 0}
        return {**base, "model": model, "choices": choices, **extra}

    chunks = [chunk([{"index": 0, "delta": d, "finish_reason": None}]) for d in deltas]
    finish = "tool_calls" if reply.tool_calls else "stop"
    chunks.append(chunk([{"index": 0, "delta": {}, "finish_reason": finish}]))
    if usage:
        chunks.append(chunk([], usage=_usage()))
    return chunks
