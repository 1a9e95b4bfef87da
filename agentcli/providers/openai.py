"""OpenAI-compatible Chat Completions with streaming and tools (OpenAI, Ollama, vLLM,
llama.cpp, LM Studio, ...)."""

from __future__ import annotations

import contextlib
import json
import re
from collections.abc import AsyncIterator, Sequence
from typing import TYPE_CHECKING, Any

from agentcli.conversation import events as ev
from agentcli.conversation.encoded import EncodedMessages, kept_encoding
from agentcli.conversation.images import ImagePart
from agentcli.conversation.messages import Message
from agentcli.errors import ProviderError, StreamCutError
from agentcli.providers.base import ListedModel, ModelRequest, StreamItem
from agentcli.providers.builtin import OPENAI
from agentcli.providers.http import (
    LISTING_TIMEOUT,
    EncodedValue,
    HttpProvider,
    RetryableError,
    compact_json,
    with_retries,
)
from agentcli.providers.openai_stream import ChatStreamAccumulator, completion_as_chunk
from agentcli.providers.sse import SSEMessage
from agentcli.text.decoding import NotJson, loads

if TYPE_CHECKING:
    from agentcli.settings import RunSettings

DEFAULT_BASE_URL = OPENAI.official_url
_RETRYABLE_STREAM_ERRORS = ("overloaded", "rate_limit", "server_error", "timeout", "unavailable")
_STREAMING = re.compile(r"stream", re.IGNORECASE)  # "Streaming is not supported with tools"


def to_wire_messages(system: str, messages: list[Message]) -> list[dict[str, Any]]:
    wire: list[dict[str, Any]] = []
    if system:
        wire.append({"role": "system", "content": system})
    names: dict[str, str] = {}  # call id -> tool name, for the images' message
    shown: list[Message] = []  # tool results with images, since the last assistant message
    for message in messages:
        if message.role != "tool" and shown:
            wire.append(_result_images(shown, names))
            shown = []
        if message.role == "assistant":
            names.update((call.id, call.name) for call in message.tool_calls)
        elif message.role == "tool" and message.images:
            shown.append(message)
        wire.append(_message_wire(message))
    if shown:
        wire.append(_result_images(shown, names))
    return wire


def _message_wire(message: Message) -> dict[str, Any]:
    """One message's own entry of the request (the images of tool results go after them,
    in a message of their own: `_result_images`)."""
    if message.role == "tool":
        content = message.content
        if message.error and not content.lower().startswith(("error", "denied")):
            content = f"Error: {content}"
        return {"role": "tool", "tool_call_id": message.tool_call_id, "content": content}
    if message.role == "assistant" and message.tool_calls:
        return {
            "role": "assistant",
            # A string even when empty: llama-cpp-python's server refuses null.
            "content": message.content,
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
    if message.images:
        parts = [{"type": "text", "text": message.content}, *map(_image_url, message.images)]
        return {"role": message.role, "content": parts}
    return {"role": message.role, "content": message.content}


def encoded_wire_messages(
    system: str, messages: list[Message], kept: EncodedMessages
) -> EncodedValue:
    """`to_wire_messages(system, messages)` as JSON text, each message's part taken from
    what `kept` holds of an earlier request (tests/test_openai_encoded.py: the same JSON)."""

    def piece(listed: Sequence[Message], position: int) -> str:
        message = listed[position]
        own = kept.own_json(message, lambda m: compact_json(_message_wire(m)))
        if message.role == "tool":
            return own
        shown = _images_before(listed, position)
        if not shown:
            return own
        return f"{compact_json(_result_images(shown, _names(listed, position)))},{own}"

    parts = kept.pieces(messages, piece)
    head = [compact_json({"role": "system", "content": system})] if system else []
    shown = _images_before(messages, len(messages))
    tail = [compact_json(_result_images(shown, _names(messages, len(messages))))] if shown else []
    text = "[" + ",".join([*head, *parts, *tail]) + "]"
    return EncodedValue(text, lambda: to_wire_messages(system, messages))


def _images_before(messages: Sequence[Message], position: int) -> list[Message]:
    """The tool results with images in the run of results just before `position`."""
    start = position
    while start > 0 and messages[start - 1].role == "tool":
        start -= 1
    return [m for m in messages[start:position] if m.images]


def _names(messages: Sequence[Message], position: int) -> dict[str, str]:
    """Call id -> tool name, of the calls before `position`."""
    return {
        call.id: call.name
        for message in messages[:position]
        if message.role == "assistant"
        for call in message.tool_calls
    }


def _image_url(image: ImagePart) -> dict[str, Any]:
    return {
        "type": "image_url",
        "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"},
    }


def _result_images(results: list[Message], names: dict[str, str]) -> dict[str, Any]:
    """Tool messages take only text: the images of the results just sent follow them in
    one user message, each group after a line naming the call it belongs to."""
    parts: list[dict[str, Any]] = []
    for result in results:
        call = result.tool_call_id or ""
        name = f" ({names[call]})" if call in names else ""
        count = len(result.images)
        what = "the image" if count == 1 else f"the {count} images"
        text = f"{what.capitalize()} returned by tool call {call}{name}:"
        parts.append({"type": "text", "text": text})
        parts.extend(_image_url(image) for image in result.images)
    return {"role": "user", "content": parts}


class _CannotStream(Exception):
    """The streamed step failed before any of the answer arrived, in a way that asking
    again without streaming may mend (servers that cannot stream tool calls)."""


# (provider, base URL, model) that could not stream in this process: asked without
# streaming for the rest of the session, so the notice and the wasted request come once.
_NOT_STREAMING: set[tuple[str, str, str]] = set()


class OpenAIProvider(HttpProvider):
    base_url_hint = "--base-url or OPENAI_BASE_URL"
    takes_images = True  # `images = false` in its [providers.NAME] table: a text-only model

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
            model,
            name=name,
            base_url=(base_url or DEFAULT_BASE_URL).rstrip("/"),
            api_key=api_key,
            api_key_env=api_key_env,
            max_retries=max_retries,
        )

    @property
    def _key(self) -> tuple[str, str, str]:
        return (self.name, self.base_url, self.model)

    def _headers(self, *, stream: bool = True) -> dict[str, str]:
        headers = {"accept": "text/event-stream" if stream else "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    def _body(self, request: ModelRequest, *, stream: bool = True) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "messages": encoded_wire_messages(
                request.system, request.messages, kept_encoding(request.encodings, "openai-chat")
            ),
            "stream": stream,
        }
        if stream:
            body["stream_options"] = {"include_usage": True}
        if request.max_tokens:  # OpenAI's own API names it anew; compatible servers, as was
            official = self.base_url == DEFAULT_BASE_URL.rstrip("/")
            body["max_completion_tokens" if official else "max_tokens"] = request.max_tokens
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

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        """Streams the step; when the stream fails before the answer began in a way that
        says the server cannot stream it, asks once more without streaming."""
        if self._key in _NOT_STREAMING:
            async with contextlib.aclosing(self._without_streaming(request, None)) as items:
                async for item in items:
                    yield item
            return
        try:
            async with contextlib.aclosing(super().stream(request)) as items:
                async for item in items:
                    yield item
            return
        except _CannotStream as failure:
            reason = str(failure)
        # The broken stream may have left its connection in the pool, as if it were still
        # good: start the request without streaming on a fresh one.
        await self.aclose()
        notice = (
            f"{self.name}: {reason}; asked again without streaming, as {self.model} will be "
            "for the rest of the session"
        )
        try:
            async with contextlib.aclosing(self._without_streaming(request, notice)) as items:
                async for item in items:
                    yield item
        except ProviderError as error:
            raise ProviderError(
                f"{error} (asked without streaming after {reason})", status=error.status
            ) from None

    def _without_streaming(
        self, request: ModelRequest, notice: str | None
    ) -> AsyncIterator[ev.Event | ev.StepEnd]:
        return with_retries(lambda: self._complete(request, notice), max_retries=self.max_retries)

    async def _complete(
        self, request: ModelRequest, notice: str | None
    ) -> AsyncIterator[ev.Event | ev.StepEnd]:
        """One request with `stream: false`; the whole answer becomes the same events a
        stream would have produced. `notice`: the warning to give once it worked."""
        completion = await self._request_json(
            "/chat/completions",
            headers=self._headers(stream=False),
            body=self._body(request, stream=False),
        )
        if isinstance(completion, dict) and completion.get("error") is not None:
            raise _stream_error(completion["error"], self.name, "in the answer")
        acc = ChatStreamAccumulator(self.name, self.model, whole=True)
        try:
            events = acc.feed(completion_as_chunk(completion, self.name))
        except (TypeError, AttributeError, ValueError, KeyError) as exc:
            raise ProviderError(
                f"{self.name}: the server sent a malformed answer ({exc}): "
                f"{json.dumps(completion)[:200]}"
            ) from None
        if notice is not None:
            _NOT_STREAMING.add(self._key)
            yield ev.RunWarning(message=notice, code="no_streaming")
        for event in [*events, *self._finish(acc)]:
            yield event

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        acc = ChatStreamAccumulator(self.name, self.model)
        done = False
        messages = self._open_stream(
            "/chat/completions", headers=self._headers(), body=self._body(request)
        )
        try:
            async with contextlib.aclosing(messages):
                async for batch in messages:
                    events, ending = self._events_of(batch, acc)
                    if events:
                        yield events
                    if isinstance(ending, Exception):
                        raise ending
                    if ending:
                        done = True
                        break
        except StreamCutError:
            if not acc.began:
                raise _CannotStream("the stream broke before the answer began") from None
            raise
        except ProviderError as error:  # an HTTP error before the stream
            if error.status and _names_streaming(error.detail):
                raise _CannotStream(
                    f"the server refused to stream (HTTP {error.status}: {error.detail})"
                ) from None
            raise
        if not done and acc.finish_reason is None:
            if not acc.began:
                raise _CannotStream("the stream ended before the answer began")
            raise StreamCutError(
                f"the {self.name} stream ended before the answer was complete (no finish_reason, "
                "no [DONE]); the text received so far is kept"
            )
        for event in self._finish(acc):
            yield event

    def _events_of(
        self, batch: list[SSEMessage], acc: ChatStreamAccumulator
    ) -> tuple[list[ev.Event], bool | Exception]:
        """The events of the messages that arrived together, in one pass, and how the
        batch ended: True at `[DONE]` (what follows is not read), an error to raise once
        the events before it are passed on, else False."""
        events: list[ev.Event] = []
        for message in batch:
            data = message.data
            if "[DONE]" in data and data.strip() == "[DONE]":
                return events, True
            try:
                chunk = _parse_chunk(data, self.name)
            except ProviderError as error:
                return events, error
            failure = _failure_in(message.event, chunk)
            if failure is not None:  # `"error": null` is no error: the chunk goes on
                error = _stream_error(failure, self.name)
                if not acc.began and _names_streaming(error.detail):
                    return events, _CannotStream(f"the server could not stream ({error.detail})")
                return events, error
            try:
                events += acc.feed(chunk)
            except ProviderError as error:  # a value of the wrong shape, named
                return events, error
            except (TypeError, AttributeError, ValueError, KeyError) as exc:
                return events, ProviderError(
                    f"{self.name}: the server sent a malformed chunk ({exc}): {data[:200]!r}"
                )
        return events, False

    async def list_models(self) -> list[ListedModel]:
        """`GET /models`: what the server serves (OpenAI, Ollama, llama.cpp, vLLM, ...)."""
        listing = await self._request_json(
            "/models", headers=self._headers(stream=False), method="GET", timeout=LISTING_TIMEOUT
        )
        entries = listing.get("data") if isinstance(listing, dict) else listing
        if not isinstance(entries, list):
            raise ProviderError(f"{self.name}: unexpected model listing: {str(listing)[:200]}")
        models = []
        for entry in entries:
            if isinstance(entry, str):
                models.append(ListedModel(entry))
            elif isinstance(entry, dict) and entry.get("id"):
                models.append(ListedModel(str(entry["id"]), str(entry.get("owned_by") or "")))
        return models

    def _finish(self, acc: ChatStreamAccumulator) -> list[ev.Event | ev.StepEnd]:
        """What ends a step: open messages and calls closed, usage, the finish reason."""
        out: list[ev.Event | ev.StepEnd] = list(acc.finish())
        if acc.usage is not None:
            out.append(ev.Custom(name="usage", value=acc.usage.to_wire(self.name, self.model)))
        out.append(ev.StepEnd(finish_reason=acc.finish_reason or "stop", usage=acc.usage))
        return out


def _history_arguments(raw: str) -> str:
    """Arguments as sent back in the history. Some servers (Ollama) parse them and reject
    the whole request when they are not a JSON object: send `{}` then; the tool result
    already tells the model what was wrong with what it sent (NaN too: not JSON)."""
    try:
        parsed = loads(raw, finite=True) if raw.strip() else {}
    except ValueError:  # TooDeep and NotJson are ValueErrors
        return "{}"
    return raw if isinstance(parsed, dict) else "{}"


def _parse_chunk(data: str, label: str) -> dict[str, Any]:
    try:
        chunk = loads(data, finite=True)  # a NaN kept would stop every later request
    except NotJson as error:
        raise ProviderError(
            f"{label}: the server sent a stream event that is not JSON ({error}): {data[:200]!r}"
        ) from None
    except ValueError:
        raise ProviderError(
            f"{label}: the server sent a malformed stream event: {data[:200]!r}"
        ) from None
    if not isinstance(chunk, dict):
        raise ProviderError(f"{label}: unexpected stream event: {data[:200]!r}")
    return chunk


def _failure_in(event: str, chunk: dict[str, Any]) -> Any:
    """The error a chunk reports, or None: its `error` (null is none), or, for an
    `event: error` message, the chunk itself when it has no `error` (`{"message": ...}`)."""
    error = chunk.get("error")
    if error is None and event == "error":
        return chunk or "the server sent an error event with nothing in it"
    return error


def _stream_error(error: Any, label: str, where: str = "inside the stream") -> ProviderError:
    if isinstance(error, dict):
        detail = str(error.get("message") or error.get("type") or error.get("code") or error)
        kind = f"{error.get('type', '')} {error.get('code', '')}".lower()
    else:
        detail, kind = str(error), str(error).lower()
    message = f"{label}: error {where}: {detail}"
    if any(word in kind for word in _RETRYABLE_STREAM_ERRORS):
        return RetryableError(message, detail=detail)
    return ProviderError(message, detail=detail)


def _names_streaming(detail: str) -> bool:
    return bool(_STREAMING.search(detail))


def from_settings(settings: RunSettings) -> OpenAIProvider:
    """The provider a `[providers.NAME]` table of type openai describes."""
    from agentcli.providers.spec import connection

    return OpenAIProvider(settings.model.name, **connection(settings))
