"""A scripted OpenAI Responses API server (`POST /v1/responses`, SSE), for the benches only:
the Codex CLI speaks nothing else to a custom provider (`wire_api = "responses"`), and
agentcli does not speak it, so no test needs it. On the tests' server machinery
(tests/sse_server.py), like the Chat Completions and Anthropic servers.

Each reply is the events a streamed response sends: `response.created`, then a message's
text deltas or a function call, each item added and done, then `response.completed`.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from tests.sse_server import SSEHandler, SSEServer, dumps

RESPONSES_PATH = "/v1/responses"
_ids = itertools.count(1)


@dataclass(frozen=True)
class ResponsesReply:
    """One streamed response: `steps` are its events, rendered."""

    kind: Literal["stream"] = "stream"
    status: int = 200
    headers: tuple[tuple[str, str], ...] = ()
    body: bytes = b""
    ending: str = "clean"
    steps: tuple[str, ...] = ()

    @classmethod
    def text(cls, pieces: Sequence[str]) -> ResponsesReply:
        item_id = f"msg_{next(_ids)}"
        message = {"type": "message", "id": item_id, "role": "assistant", "status": "completed"}
        where = {"item_id": item_id, "output_index": 0, "content_index": 0}
        steps = [
            _added({**message, "status": "in_progress", "content": []}),
            *(_event("response.output_text.delta", **where, delta=piece) for piece in pieces),
            _done({**message, "content": [{"type": "output_text", "text": "".join(pieces)}]}),
        ]
        return cls(steps=_response(steps))

    @classmethod
    def function_call(cls, name: str, arguments: dict[str, Any]) -> ResponsesReply:
        number = next(_ids)
        call = {"type": "function_call", "id": f"fc_{number}", "call_id": f"call_{number}"}
        call["name"] = name
        text = json.dumps(arguments)
        steps = [
            _added({**call, "status": "in_progress", "arguments": ""}),
            _event(
                "response.function_call_arguments.delta",
                item_id=call["id"],
                output_index=0,
                delta=text,
            ),
            _done({**call, "status": "completed", "arguments": text}),
        ]
        return cls(steps=_response(steps))


def _event(name: str, **data: Any) -> str:
    return f"event: {name}\ndata: {dumps({'type': name, **data})}\n\n"


def _added(item: dict[str, Any]) -> str:
    return _event("response.output_item.added", output_index=0, item=item)


def _done(item: dict[str, Any]) -> str:
    return _event("response.output_item.done", output_index=0, item=item)


def _response(steps: list[str]) -> tuple[str, ...]:
    response = {"id": f"resp_{next(_ids)}", "object": "response", "status": "in_progress"}
    usage = {
        "input_tokens": 10,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 5,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 15,
    }
    done = {**response, "status": "completed", "usage": usage}
    created = _event("response.created", response=response)
    return (created, *steps, _event("response.completed", response=done))


class _Handler(SSEHandler):
    post_path = RESPONSES_PATH
    label = "scripted responses"
    not_found_type = "invalid_request_error"
    bad_body_message = "scripted responses: request body is not JSON"

    def send_error_json(self, status: int, type_: str, message: str) -> None:
        error = {"message": message, "type": type_, "param": None, "code": None}
        self.send_json(status, dumps({"error": error}))

    def send_no_reply(self) -> None:
        self.send_error_json(500, "server_error", "scripted responses: no reply queued")

    def respond(self, reply: ResponsesReply, body: Any) -> None:
        self.play(reply, reply.steps, lambda step: step)


class ScriptedResponses(SSEServer[ResponsesReply]):
    _handler_class: ClassVar[type[SSEHandler]] = _Handler
    _label = "scripted responses server"
    _thread_name = "scripted-responses"

    @property
    def base_url(self) -> str:
        return f"{self.url}/v1"
