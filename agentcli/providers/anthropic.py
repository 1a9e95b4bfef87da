"""Anthropic Messages with streaming and tools (protocols.md §2).

Text and tool-use blocks become the usual events; `input_json_delta` fragments stream into
TOOL_CALL_ARGS; thinking becomes REASONING_* events and is passed back unchanged (with its
signature) in the next request, as are the provider's own server-tool blocks, which are
shown but never executed here. `ping` and unknown events are ignored; `error` events and
overload are retried before the first byte like HTTP errors."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from agentcli.conversation import events as ev
from agentcli.conversation.images import ImagePart
from agentcli.conversation.messages import Message, new_id
from agentcli.errors import ProviderError, StreamCutError
from agentcli.providers.base import ListedModel, ModelRequest
from agentcli.providers.builtin import ANTHROPIC
from agentcli.providers.http import LISTING_TIMEOUT, HttpProvider, RetryableError
from agentcli.providers.shapes import Edge
from agentcli.text.decoding import NotJson, loads

if TYPE_CHECKING:
    from agentcli.settings import RunSettings

DEFAULT_BASE_URL = ANTHROPIC.official_url
API_VERSION = "2023-06-01"
DEFAULT_MAX_TOKENS = 8192
LISTING_PAGE, MAX_LISTING_PAGES = 1000, 10  # the models endpoint's largest page
STOP_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "max_tokens": "length",
    "model_context_window_exceeded": "context_window",
    "pause_turn": "pause",
    "refusal": "refusal",
}
CONTENT_KEY = "anthropic_content"  # Message.extra: the assistant's blocks, as sent back


def _parsed_input(raw: str) -> dict[str, Any]:
    """A call's arguments as the block's `input`: {} unless a JSON object (NaN is not
    JSON: a block holding it could not be sent again)."""
    try:
        value = loads(raw, finite=True) if raw.strip() else {}
    except ValueError:  # too deep (TooDeep) too: the executor says so to the model
        return {}
    return value if isinstance(value, dict) else {}


def _blocks(message: Message) -> list[dict[str, Any]]:
    if message.role == "tool":
        content: str | list[dict[str, Any]] = message.content or "(no output)"
        if message.images:  # a tool result's content may hold image blocks
            content = [{"type": "text", "text": content}, *map(_image_block, message.images)]
        return [
            {
                "type": "tool_result",
                "tool_use_id": message.tool_call_id,
                "content": content,
                "is_error": message.error is not None,
            }
        ]
    if message.role == "assistant":
        stored = message.extra.get(CONTENT_KEY)
        if stored:
            return list(stored)
        blocks: list[dict[str, Any]] = []
        if message.content:
            blocks.append({"type": "text", "text": message.content})
        for call in message.tool_calls:
            blocks.append(
                {
                    "type": "tool_use",
                    "id": call.id,
                    "name": call.name,
                    "input": _parsed_input(call.arguments),
                }
            )
        return blocks or [{"type": "text", "text": "(no answer)"}]
    text = {"type": "text", "text": message.content or "(empty)"}
    return [text, *map(_image_block, message.images)]


def _image_block(image: ImagePart) -> dict[str, Any]:
    source = {"type": "base64", "media_type": image.mime_type, "data": image.data}
    return {"type": "image", "source": source}


def to_wire_messages(messages: list[Message]) -> list[dict[str, Any]]:
    """Anthropic wants alternating turns, tool results in the next user turn: adjacent
    messages of the same role are merged into one, block by block."""
    wire: list[dict[str, Any]] = []
    for message in messages:
        role = "assistant" if message.role == "assistant" else "user"
        blocks = _blocks(message)
        if wire and wire[-1]["role"] == role:
            wire[-1]["content"].extend(blocks)
        else:
            wire.append({"role": role, "content": blocks})
    for turn in wire:  # tool results must come first in a user turn
        if turn["role"] == "user":
            turn["content"].sort(key=lambda b: b.get("type") != "tool_result")
    return wire


class StreamState:
    """Folds Anthropic's stream events into agentcli events and the final content blocks.
    Every value read from an event is checked first (`Edge`): a wrong one is one line
    naming its field, raised before any event is made of it or any block keeps it."""

    def __init__(self, provider: str, model: str) -> None:
        self.provider, self.model = provider, model
        self.edge = Edge(provider)
        self.message_id = new_id("msg")
        self.blocks: dict[int, dict[str, Any]] = {}
        self.raw_input: dict[int, list[str]] = {}
        self.stopped_blocks: set[int] = set()
        self.usage = ev.Usage()
        self.stop_reason: str | None = None
        self.stopped = False

    def feed(self, kind: str, data: dict[str, Any]) -> list[ev.Event]:
        handler = getattr(self, f"_on_{kind}", None)
        return handler(data) if handler is not None else []  # unknown events: ignored

    def _on_message_start(self, data: dict[str, Any]) -> list[ev.Event]:
        message = self.edge.object(data.get("message"), "message_start's message")
        usage = self.edge.object(message.get("usage"), "message.usage")
        counts = [
            self.edge.count(usage.get(k), f"message.usage.{k}")
            for k in ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")
        ]
        output = self.edge.count(usage.get("output_tokens"), "message.usage.output_tokens")
        self.usage.input_tokens = sum(count or 0 for count in counts)
        self.usage.output_tokens = output or 0
        return []

    def _index(self, data: dict[str, Any], kind: str) -> int:
        index = self.edge.index(data.get("index"), f"{kind}'s index")
        if index is None:
            raise self.edge.wrong(f"{kind}'s index", None, "an integer")
        return index

    def _on_content_block_start(self, data: dict[str, Any]) -> list[ev.Event]:
        index = self._index(data, "content_block_start")
        if index in self.blocks:  # a second block at one index would replace the first
            raise self.edge.fail(f"started content block {index} twice")
        given = data.get("content_block")
        if type(given) is not dict:
            raise self.edge.wrong("content_block_start's content_block", given, "an object")
        block = dict(given)
        kind = self.edge.name(block.get("type"), "content_block.type")
        events = self._started(index, kind, block)
        self.blocks[index] = block
        return events

    def _started(self, index: int, kind: str, block: dict[str, Any]) -> list[ev.Event]:
        """The events of a block's start; `block` is checked and completed in place."""
        edge = self.edge
        if kind == "text":
            block["text"] = edge.text(block.get("text"), "content_block.text") or ""
            return [ev.TextMessageStart(message_id=self.message_id)]
        if kind in ("tool_use", "server_tool_use"):
            # A number is the same id as text; none at all: one is made, as for OpenAI's.
            block["id"] = edge.ident(block.get("id"), "content_block.id") or new_id("toolu")
            block["name"] = edge.name(block.get("name"), "content_block.name")
            block["input"] = edge.object(block.get("input"), "content_block.input")
            self.raw_input[index] = []
            meta: dict[str, Any] = {"provider": self.provider, "model": self.model}
            if kind == "server_tool_use":
                meta["executedBy"] = "provider"
            return [
                ev.ToolCallStart(
                    tool_call_id=block["id"],
                    tool_call_name=block["name"],
                    parent_message_id=self.message_id,
                    metadata=meta,
                )
            ]
        if kind in ("thinking", "redacted_thinking"):
            if kind == "thinking":  # a redacted block goes back exactly as it came
                thought = edge.text(block.get("thinking"), "content_block.thinking")
                block["thinking"] = thought or ""
            rid = f"{self.message_id}-r{index}"
            return [ev.ReasoningStart(message_id=rid), ev.ReasoningMessageStart(message_id=rid)]
        if kind.endswith("_tool_result"):  # a server tool's result, e.g. web search
            used = edge.ident(block.get("tool_use_id"), "content_block.tool_use_id")
            block["tool_use_id"] = used or ""
            content = block.get("content")
            return [
                ev.ToolCallResult(
                    message_id=new_id("msg"),
                    tool_call_id=block["tool_use_id"],
                    content=json.dumps(content, ensure_ascii=False)[:20_000],
                    metadata={"executedBy": "provider", "summary": f"{kind} from the provider"},
                )
            ]
        return []

    def _open_block(self, index: int, delta_kind: str) -> dict[str, Any]:
        """The started, not stopped, block a delta of `delta_kind` adds to."""
        block = self.blocks.get(index)
        if block is None or index in self.stopped_blocks:
            state = "was not started" if block is None else "was already stopped"
            raise self.edge.fail(f"sent {delta_kind} for content block {index}, which {state}")
        return block

    def _on_content_block_delta(self, data: dict[str, Any]) -> list[ev.Event]:
        edge = self.edge
        index = self._index(data, "content_block_delta")
        given = data.get("delta")
        if type(given) is not dict:
            raise edge.wrong("content_block_delta's delta", given, "an object")
        kind = edge.name(given.get("type"), "delta.type")
        wanted = _DELTA_FIELDS.get(kind)
        if wanted is None:
            return []  # a delta of a kind this version does not know: ignored
        block = self._open_block(index, kind)
        kinds, field = wanted
        if block.get("type") not in kinds:
            raise edge.fail(f"sent {kind} for content block {index}, a {block['type']} block")
        if kind == "citations_delta":
            citation = given.get("citation")
            if type(citation) is not dict:
                raise edge.wrong("delta.citation", citation, "an object")
            block.setdefault("citations", []).append(citation)
            return []
        piece = edge.text(given.get(field), f"delta.{field}") or ""
        return self._added(index, block, kind, piece)

    def _added(self, index: int, block: dict[str, Any], kind: str, piece: str) -> list[ev.Event]:
        """A checked piece of a block: kept in it, and its event."""
        if kind == "input_json_delta":
            self.raw_input.setdefault(index, []).append(piece)
            return [ev.ToolCallArgs(tool_call_id=block["id"], delta=piece)] if piece else []
        field = _DELTA_FIELDS[kind][1]
        block[field] = block.get(field, "") + piece
        if not piece or kind == "signature_delta":
            return []
        if kind == "text_delta":
            return [ev.TextMessageContent(message_id=self.message_id, delta=piece)]
        rid = f"{self.message_id}-r{index}"
        return [ev.ReasoningMessageContent(message_id=rid, delta=piece)]

    def _on_content_block_stop(self, data: dict[str, Any]) -> list[ev.Event]:
        index = self._index(data, "content_block_stop")
        block = self.blocks.get(index)
        if block is None:
            raise self.edge.fail(f"stopped content block {index}, which was not started")
        if index in self.stopped_blocks:
            return []  # stopped twice: its end was said once
        self.stopped_blocks.add(index)
        kind = block["type"]
        if kind == "text":
            return [ev.TextMessageEnd(message_id=self.message_id)]
        if kind in ("tool_use", "server_tool_use"):
            raw = "".join(self.raw_input.get(index, []))
            if raw:
                block["input"] = _parsed_input(raw)
                block["_raw"] = raw
            return [ev.ToolCallEnd(tool_call_id=block["id"])]
        if kind in ("thinking", "redacted_thinking"):
            rid = f"{self.message_id}-r{index}"
            return [ev.ReasoningMessageEnd(message_id=rid), ev.ReasoningEnd(message_id=rid)]
        return []

    def _on_message_delta(self, data: dict[str, Any]) -> list[ev.Event]:
        edge = self.edge
        delta = edge.object(data.get("delta"), "message_delta's delta")
        reason = edge.text(delta.get("stop_reason"), "delta.stop_reason")
        usage = edge.object(data.get("usage"), "message_delta's usage")
        output = edge.count(usage.get("output_tokens"), "usage.output_tokens")
        given = edge.count(usage.get("input_tokens"), "usage.input_tokens")
        self.stop_reason = reason or self.stop_reason
        if output is not None:
            self.usage.output_tokens = output  # cumulative
        if given:
            self.usage.input_tokens = given
        return []

    def _on_message_stop(self, data: dict[str, Any]) -> list[ev.Event]:
        self.stopped = True
        return []

    def content(self) -> list[dict[str, Any]]:
        """The assistant's blocks as the next request must repeat them."""
        out = []
        for _, block in sorted(self.blocks.items()):
            clean = {k: v for k, v in block.items() if not k.startswith("_")}
            if clean.get("type") == "text" and not clean.get("text"):
                continue
            out.append(clean)
        return out


# A delta's type -> the block types it may add to, and the field of the delta it carries.
_DELTA_FIELDS = {
    "text_delta": (("text",), "text"),
    "input_json_delta": (("tool_use", "server_tool_use"), "partial_json"),
    "thinking_delta": (("thinking",), "thinking"),
    "signature_delta": (("thinking",), "signature"),
    "citations_delta": (("text",), "citation"),
}


class AnthropicProvider(HttpProvider):
    base_url_hint = "ANTHROPIC_BASE_URL or providers.anthropic.base_url"
    json_answers = False  # a JSON body where the stream should be is said to be one
    takes_images = True  # `images = false` in its [providers.NAME] table: text only

    def __init__(
        self,
        model: str,
        *,
        name: str = "anthropic",
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "ANTHROPIC_API_KEY",
        max_tokens: int = DEFAULT_MAX_TOKENS,
        server_tools: list[dict[str, Any]] | None = None,
        max_retries: int = 3,
    ) -> None:
        super().__init__(
            model,
            name=name,
            base_url=(base_url or DEFAULT_BASE_URL).rstrip("/").removesuffix("/v1"),
            api_key=api_key,
            api_key_env=api_key_env,
            max_retries=max_retries,
        )
        self.max_tokens = max_tokens
        self.server_tools = server_tools or []

    def _headers(self, *, stream: bool = True) -> dict[str, str]:
        accept = "text/event-stream" if stream else "application/json"
        headers = {"accept": accept, "anthropic-version": API_VERSION}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return headers

    def _body(self, request: ModelRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.model,
            "max_tokens": min(self.max_tokens, request.max_tokens or self.max_tokens),
            "messages": to_wire_messages(request.messages),
            "stream": True,
        }
        if request.system:
            body["system"] = request.system
        tools = []
        for tool in request.tools:
            native = tool.get("anthropic")  # a provider-defined tool: Anthropic fixes its schema
            if native:
                tools.append(dict(native))
            else:
                tools.append(
                    {
                        "name": tool["name"],
                        "description": tool["description"],
                        "input_schema": tool["parameters"],
                    }
                )
        tools.extend(self.server_tools)
        if tools:
            body["tools"] = tools
            body["tool_choice"] = {"type": "auto"}
        return body

    async def _attempt(self, request: ModelRequest) -> AsyncIterator[ev.Event | ev.StepEnd]:
        state = StreamState(self.name, self.model)
        messages = self._open_stream(
            "/v1/messages", headers=self._headers(), body=self._body(request)
        )
        async with contextlib.aclosing(messages):
            async for batch in messages:
                for message in batch:
                    data = self._event_data(message.data)
                    if not isinstance(data, dict):
                        raise ProviderError(
                            f"{self.name}: unexpected event: {message.data[:200]!r}"
                        )
                    kind = data.get("type") or message.event
                    if type(kind) is not str:
                        raise state.edge.wrong("an event's type", kind, "text")
                    if kind == "error":
                        raise self._stream_error(data.get("error"))
                    try:
                        events = state.feed(kind, data)
                    except (KeyError, TypeError, AttributeError) as exc:
                        raise ProviderError(
                            f"{self.name}: the server sent a malformed {kind} event ({exc})"
                        ) from None
                    for event in events:
                        yield event
                    if state.stopped:
                        break
                if state.stopped:
                    break
        if not state.stopped and state.stop_reason is None:
            raise StreamCutError(
                f"the {self.name} stream ended before the answer was complete (no "
                "message_stop); the text received so far is kept"
            )
        yield ev.Custom(name="usage", value=state.usage.to_wire(self.name, self.model))
        finish = STOP_REASONS.get(state.stop_reason or "end_turn", "stop")
        yield ev.StepEnd(
            finish_reason=finish, usage=state.usage, extra={CONTENT_KEY: state.content()}
        )

    def _event_data(self, data: str) -> Any:
        """An event's JSON; NaN and the infinities are not JSON (kept, one in a block would
        stop every later request of the session)."""
        try:
            return loads(data, finite=True)
        except NotJson as error:
            raise ProviderError(
                f"{self.name}: the server sent an event that is not JSON ({error}): {data[:200]!r}"
            ) from None
        except ValueError:
            raise ProviderError(
                f"{self.name}: the server sent a malformed event: {data[:200]!r}"
            ) from None

    async def list_models(self) -> list[ListedModel]:
        """`GET /v1/models`, page by page (newest first, as the API orders them)."""
        models: list[ListedModel] = []
        after = ""
        for _ in range(MAX_LISTING_PAGES):
            query = f"?limit={LISTING_PAGE}" + (f"&after_id={after}" if after else "")
            page = await self._request_json(
                f"/v1/models{query}",
                headers=self._headers(stream=False),
                method="GET",
                timeout=LISTING_TIMEOUT,
            )
            entries = page.get("data") if isinstance(page, dict) else None
            if not isinstance(entries, list):
                raise ProviderError(f"{self.name}: unexpected model listing: {str(page)[:200]}")
            models += [
                ListedModel(str(entry["id"]), str(entry.get("display_name") or ""))
                for entry in entries
                if isinstance(entry, dict) and entry.get("id")
            ]
            after = str(page.get("last_id") or "")
            if not page.get("has_more") or not after:
                break
        return models

    def _stream_error(self, error: Any) -> ProviderError:
        """An `error` event's one line; its `error` should be {type, message}, and a
        server may send only words ("overloaded") or nothing."""
        if isinstance(error, dict):
            kind = str(error.get("type") or "")
            said = error.get("message") or kind or "(no message)"
        else:
            kind, said = "", error if isinstance(error, str) and error else "(no message)"
        message = f"{self.name}: error inside the stream: {said}"
        if kind in ("overloaded_error", "rate_limit_error", "api_error", "timeout_error"):
            return RetryableError(message)
        return ProviderError(message)


def from_settings(settings: RunSettings) -> AnthropicProvider:
    """The provider a `[providers.NAME]` table of type anthropic describes."""
    from agentcli.providers.spec import connection

    options = settings.provider.options
    server_tools = []
    if options.get("web_search"):  # provider-executed: Anthropic runs it, we only show it
        server_tools.append(
            {
                "type": "web_search_20250305",
                "name": "web_search",
                "max_uses": int(options.get("web_search_max_uses", 5)),
            }
        )
    return AnthropicProvider(
        settings.model.name,
        **connection(settings),
        max_tokens=int(options.get("max_tokens", DEFAULT_MAX_TOKENS)),
        server_tools=server_tools,
    )
