"""A scripted Anthropic Messages API server on 127.0.0.1, for running the real
`langchain-anthropic` client (and the `anthropic` SDK under it) without a key or the network.

`POST /v1/messages` answers with the next scripted reply (tests/openai_server.py's `text` and
`call`): a message of text or tool_use blocks; `stream: true` gets it as the Messages API's
server-sent events (message_start, content blocks with text and input_json deltas,
message_delta, message_stop). Every request body is recorded. A request Anthropic would refuse
gets its 400 instead of a reply: tools breaking its published rules (tests/provider_rules.py),
a role other than user or assistant, a tool_use left without its tool_result in the next
message, a tool_result answering no tool_use; a request without the API key or version header
(as x-api-key or an Authorization bearer) gets its 401 or 400.
Format: https://docs.anthropic.com/en/api/messages and
https://docs.anthropic.com/en/docs/build-with-claude/streaming
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler
from typing import Any

from tests.openai_server import Reply
from tests.provider_rules import anthropic_problems
from tests.scripted_server import JSONHandler, ScriptedServer

API_KEY = "x"
VERSION_HEADER = "anthropic-version"


@dataclass
class Request:
    """One request the server got: its headers and JSON body."""

    headers: dict[str, str]
    body: dict[str, Any]

    @property
    def key(self) -> str | None:
        """The API key sent as x-api-key."""
        return self.headers.get("x-api-key")

    @property
    def bearer(self) -> str | None:
        """The API key or token sent as Authorization: Bearer."""
        scheme, _, token = self.headers.get("authorization", "").partition(" ")
        return token if scheme == "Bearer" else None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The conversation sent (user and assistant turns)."""
        return list(self.body.get("messages", []))

    @property
    def system(self) -> str:
        """The system prompt's text (a string or text blocks)."""
        return text_of(self.body.get("system") or "")

    @property
    def tool_names(self) -> list[str]:
        """The names of the tools offered to the model."""
        return [t["name"] for t in self.body.get("tools", [])]

    def tool(self, name: str) -> dict[str, Any]:
        """The definition of one offered tool."""
        found = [t for t in self.body.get("tools", []) if t["name"] == name]
        assert found, f"tool {name} not offered: {self.tool_names}"
        return dict(found[0])


def text_of(content: Any) -> str:
    """The text of a message's content (a string or text blocks)."""
    if isinstance(content, list):
        return "".join(part.get("text", "") for part in content if isinstance(part, dict))
    return str(content)


def blocks(message: dict[str, Any]) -> list[dict[str, Any]]:
    """A message's content as blocks (a plain string is one text block)."""
    content = message.get("content")
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return list(content or [])


@dataclass
class AnthropicServer(ScriptedServer[Request, Reply]):
    """The scripted server; `base_url` is what ChatAnthropic's base_url should be."""

    def handler(self) -> type[BaseHTTPRequestHandler]:
        """The Messages API handler."""
        return _handler(self)

    @property
    def base_url(self) -> str:
        """The server's address (the SDK adds /v1/messages)."""
        return self.address


def _handler(owner: AnthropicServer) -> type[BaseHTTPRequestHandler]:
    class Handler(JSONHandler):
        def do_POST(self) -> None:
            body = self.read_json()
            request = Request({k.lower(): v for k, v in self.headers.items()}, body)
            if self.path.split("?")[0] != "/v1/messages":
                self._json(404, _error("not_found_error", f"unknown path {self.path}"))
                return
            if API_KEY not in (request.key, request.bearer):
                owner.refuse(request, "authentication")
                self._json(401, _error("authentication_error", "invalid x-api-key"))
                return
            refused = invalid(request)
            if refused:
                owner.refuse(request, refused)
                self._json(400, _error("invalid_request_error", refused))
                return
            reply = owner.take(request)
            if reply is None:
                self._json(500, _error("api_error", "no scripted reply left"))
            elif body.get("stream"):
                self._stream(reply, str(body["model"]))
            else:
                self._json(200, _message(reply, str(body["model"])))

        def _json(self, status: int, payload: dict[str, Any]) -> None:
            self.send_json(status, payload, {"request-id": f"req_{len(owner.requests)}"})

        def _stream(self, reply: Reply, model: str) -> None:
            self.start_events()
            for event in _events(reply, model):
                line = f"event: {event['type']}\ndata: {json.dumps(event)}\n\n"
                self.wfile.write(line.encode())
                self.wfile.flush()

    return Handler


def invalid(request: Request) -> str:
    """Why Anthropic would refuse this request with a 400, or "" when it would not."""
    body = request.body
    if not request.headers.get(VERSION_HEADER):
        return f"{VERSION_HEADER}: header is required"
    if not isinstance(body.get("max_tokens"), int) or not body.get("model"):
        return "model and max_tokens: Field required"
    problems = anthropic_problems(body.get("tools", []))
    if problems:
        return f"tools: {problems[0]}"
    previous: list[str] = []
    for n, message in enumerate(request.messages):
        role = message.get("role")
        if role not in ("user", "assistant"):
            return f"messages.{n}.role: Input should be 'user' or 'assistant'"
        content = blocks(message)
        answered = [b["tool_use_id"] for b in content if b.get("type") == "tool_result"]
        if previous and (role != "user" or sorted(answered) != sorted(previous)):
            return (
                f"messages.{n}: `tool_use` ids were found without `tool_result` blocks "
                f"immediately after: {', '.join(previous)}"
            )
        if not previous and answered:
            return f"messages.{n}: unexpected `tool_use_id` found in `tool_result` blocks"
        previous = [b["id"] for b in content if b.get("type") == "tool_use"]
        if role == "user" and previous:
            return f"messages.{n}: a user message cannot hold `tool_use` blocks"
    if previous:
        return f"`tool_use` ids without `tool_result` blocks: {', '.join(previous)}"
    return ""


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": kind, "message": message}}


def _content(reply: Reply) -> list[dict[str, Any]]:
    made: list[dict[str, Any]] = [{"type": "text", "text": reply.text}] if reply.text else []
    made += [
        {"type": "tool_use", "id": f"toolu_{n}_{name}", "name": name, "input": args}
        for n, (name, args) in enumerate(reply.tool_calls)
    ]
    return made


def _stop(reply: Reply) -> str:
    return "tool_use" if reply.tool_calls else "end_turn"


def _message(reply: Reply, model: str) -> dict[str, Any]:
    return {
        "id": "msg_test",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": _content(reply),
        "stop_reason": _stop(reply),
        "stop_sequence": None,
        "usage": {"input_tokens": 50, "output_tokens": 10},
    }


def _events(reply: Reply, model: str) -> Iterator[dict[str, Any]]:
    """The reply as the Messages API streams it: each block opened, its text or its input's
    JSON in pieces, closed; then the stop reason and the end."""
    start = {**_message(reply, model), "content": [], "stop_reason": None}
    yield {"type": "message_start", "message": start}
    for index, block in enumerate(_content(reply)):
        if block["type"] == "text":
            opened: dict[str, Any] = {"type": "text", "text": ""}
            key, piece, whole = "text", "text_delta", block["text"]
        else:
            opened = {**block, "input": {}}
            key, piece, whole = "partial_json", "input_json_delta", json.dumps(block["input"])
        yield {"type": "content_block_start", "index": index, "content_block": opened}
        for i in range(0, len(whole), 5):
            delta = {"type": piece, key: whole[i : i + 5]}
            yield {"type": "content_block_delta", "index": index, "delta": delta}
        yield {"type": "content_block_stop", "index": index}
    delta = {"stop_reason": _stop(reply), "stop_sequence": None}
    yield {"type": "message_delta", "delta": delta, "usage": {"output_tokens": 10}}
    yield {"type": "message_stop"}
