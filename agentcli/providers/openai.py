"""OpenAI-compatible Chat Completions with streaming and tools (OpenAI, Ollama, vLLM,
llama.cpp, LM Studio, ...)."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

from agentcli import events as ev
from agentcli.errors import ProviderError, StreamCutError
from agentcli.messages import Message
from agentcli.providers.base import ModelRequest
from agentcli.providers.http import HttpProvider, RetryableError
from agentcli.providers.openai_stream import ChatStreamAccumulator

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_MODEL = "gpt-4.1-mini"
_RETRYABLE_STREAM_ERRORS = ("overloaded", "rate_limit", "server_error", "timeout", "unavailable")


def to_wire_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    if system:
        wire.append({"role": "system", "content": system})
    for message in messages:
        if message.role == "tool":
            content = message.content
            if message.error and not content.lower().startswith(("error", "denied")):
                content = f"Error: {content}"
            wire.append({"role": "tool", "tool_call_id": message.tool_call_id, "content": content})
        elif message.role == "assistant" and message.tool_calls:
            wire.append(
                {
                    "role": "assistant",
                    "content": message.content or None,
                    "tool_calls": [
                        {
                            "id": call.id,
                            "type": "function",
                            "function": {
                                "name": call.name,
                                "arguments": _history_arguments(call.arguments),
                            },
                        }
                        for call in message.tool_calls
                    ],
                }
            )
        else:
            wire.append({"role": message.role, "content": message.content})
    return wire


class OpenAIProvider(HttpProvider):
    base_url_hint = "--base-url or OPENAI_BASE_URL"

    def __init__(
        self,
        model: str,
        *,
        name: str = "openai",
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        max_retries: int = 3,
    ) -> None:
        super().__init__(
            model, name=name, base_url=(base_url or DEFAULT_BASE_URL).rstrip("/"),
            api_key=api_key, api_key_env=api_key_env, max_retries=max_retries,
        )  # fmt: skip

    def _headers(self) -> dict[str, str]:
        headers = {"accept": "text/event-stream"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": to_wire_messages(request.system, request.messages),
            "stream": True,
            "stream_options": {"include_usage": True},
        }
        if request.tools:
            body["tools"] = [
                {
                    "type": "function",
                    "function": {
                        "name": tool["name"],
                        "description": tool["description"],
                        "parameters": tool["parameters"],
                    },
                }
                for tool in request.tools
            ]
            body["tool_choice"] = "auto"
        return body

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[ev.Event | ev.StepEnd]:
        acc = ChatStreamAccumulator(self.name, self.model)
        done = False
        messages = self._open_stream(
            "/chat/completions", headers=self._headers(), body=self._body(request)
        )
        async with contextlib.aclosing(messages):
            async for message in messages:
                if message.data.strip() == "[DONE]":
                    done = True
                    break
                chunk = _parse_chunk(message.data, self.name)
                if "error" in chunk:
                    raise _stream_error(chunk["error"], self.name)
                try:
                    events = acc.feed(chunk)
                except (TypeError, AttributeError, ValueError, KeyError) as exc:
                    raise ProviderError(
                        f"{self.name}: the server sent a malformed chunk ({exc}): "
                        f"{message.data[:200]!r}"
                    ) from None
                for event in events:
                    yield event
        if not done and acc.finish_reason is None:
            raise StreamCutError(
                f"the {self.name} stream ended before the answer was complete (no finish_reason, "
                "no [DONE]); the text received so far is kept"
            )
        for event in acc.finish():
            yield event
        if acc.usage is not None:
            yield ev.Custom(name="usage", value=acc.usage.to_wire(self.name, self.model))
        yield ev.StepEnd(finish_reason=acc.finish_reason or "stop", usage=acc.usage)


def _history_arguments(raw: str) -> str:
    """Arguments as sent back in the history. Some servers (Ollama) parse them and reject
    the whole request when they are not a JSON object: send `{}` then; the tool result
    already tells the model what was wrong with what it sent."""
    try:
        parsed = json.loads(raw) if raw.strip() else {}
    except (ValueError, RecursionError):
        return "{}"
    return raw if isinstance(parsed, dict) else "{}"


def _parse_chunk(data: str, label: str) -> dict[str, Any]:
    try:
        chunk = json.loads(data)
    except (ValueError, RecursionError):
        raise ProviderError(
            f"{label}: the server sent a malformed stream event: {data[:200]!r}"
        ) from None
    if not isinstance(chunk, dict):
        raise ProviderError(f"{label}: unexpected stream event: {data[:200]!r}")
    return chunk


def _stream_error(error: Any, label: str) -> ProviderError:
    if isinstance(error, dict):
        detail = str(error.get("message") or error.get("type") or error)
        kind = f"{error.get('type', '')} {error.get('code', '')}".lower()
    else:
        detail, kind = str(error), str(error).lower()
    message = f"{label}: error inside the stream: {detail}"
    if any(word in kind for word in _RETRYABLE_STREAM_ERRORS):
        return RetryableError(message)
    return ProviderError(message)
