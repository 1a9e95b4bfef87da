"""Turns OpenAI-compatible `chat.completion.chunk` objects into events, accepting the
deviations of real servers (protocols.md §1): index reuse with distinct ids, calls arriving
whole, arguments as objects, missing ids or arguments, `finish_reason: stop` with calls."""

from __future__ import annotations

import json
from typing import Any

from agentcli.conversation import events as ev
from agentcli.conversation.messages import new_id
from agentcli.records import dataclass, field


@dataclass(slots=True)
class _CallSlot:
    id: str
    name: str = ""
    started: bool = False
    pending_args: list[str] = field(default_factory=list)  # arguments seen before the name


class ChatStreamAccumulator:
    def __init__(self, provider: str, model: str) -> None:
        self.provider = provider
        self.model = model
        self.message_id = new_id("msg")
        self.finish_reason: str | None = None
        self.usage: ev.Usage | None = None
        self.began = False  # some text or a tool call arrived: the answer has begun
        self._text_open = False
        self._slots: list[_CallSlot] = []
        self._by_index: dict[int, _CallSlot] = {}
        self._by_id: dict[str, _CallSlot] = {}

    @property
    def saw_tool_calls(self) -> bool:
        return bool(self._slots)

    def feed(self, chunk: dict[str, Any]) -> list[ev.Event]:
        choices = chunk.get("choices")
        if self._text_open and type(choices) is list and len(choices) == 1:
            delta = choices[0].get("delta")  # a piece of text, as nearly every chunk is
            if (
                type(delta) is dict
                and len(delta) == 1
                and type(content := delta.get("content")) is str
                and content
                and not choices[0].get("finish_reason")
                and choices[0].get("index", 0) == 0
                and chunk.get("usage") is None
            ):
                return [ev.TextMessageContent(message_id=self.message_id, delta=content)]
        out: list[ev.Event] = []
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            self.usage = ev.Usage(
                input_tokens=int(usage.get("prompt_tokens") or 0),
                output_tokens=int(usage.get("completion_tokens") or 0),
            )
        for choice in chunk.get("choices") or ():
            if choice.get("index", 0) != 0:
                continue  # we ask for one completion; ignore any other
            delta = choice.get("delta") or {}
            content = delta.get("content")
            if content:
                out.extend(self._text(content))
            for call_delta in delta.get("tool_calls") or ():
                out.extend(self._tool_call(call_delta))
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
        self.began = self.began or bool(out)
        return out

    def finish(self) -> list[ev.Event]:
        """Close everything still open. Missing arguments mean `{}`."""
        out = self._close_text()
        for slot in self._slots:
            if not slot.started:
                slot.name = slot.name or "unknown"
                out.extend(self._start(slot))
            out.append(ev.ToolCallEnd(tool_call_id=slot.id))
        if self._slots and self.finish_reason in (None, "stop"):
            self.finish_reason = "tool_calls"
        return out

    def _text(self, content: str) -> list[ev.Event]:
        out: list[ev.Event] = []
        if not self._text_open:
            self._text_open = True
            out.append(ev.TextMessageStart(message_id=self.message_id))
        out.append(ev.TextMessageContent(message_id=self.message_id, delta=content))
        return out

    def _close_text(self) -> list[ev.Event]:
        if not self._text_open:
            return []
        self._text_open = False
        return [ev.TextMessageEnd(message_id=self.message_id)]

    def _slot_for(self, call_delta: dict[str, Any]) -> _CallSlot:
        call_id = call_delta.get("id") or None
        index = call_delta.get("index")
        if call_id and call_id in self._by_id:
            slot = self._by_id[call_id]
        elif isinstance(index, int) and index in self._by_index:
            slot = self._by_index[index]
            if call_id and call_id != slot.id:  # Ollama: index 0 for every call, new id
                slot = self._new_slot(call_id)
        elif index is None and not call_id and self._slots:
            slot = self._slots[-1]  # a fragment with neither index nor id continues the last
        else:
            slot = self._new_slot(call_id)
        if isinstance(index, int):
            self._by_index[index] = slot
        return slot

    def _new_slot(self, call_id: str | None) -> _CallSlot:
        slot = _CallSlot(id=call_id or new_id("call"))
        self._slots.append(slot)
        self._by_id[slot.id] = slot
        return slot

    def _tool_call(self, call_delta: dict[str, Any]) -> list[ev.Event]:
        slot = self._slot_for(call_delta)
        function = call_delta.get("function") or {}
        out: list[ev.Event] = []
        if function.get("name") and not slot.name:
            slot.name = function["name"]
        if slot.name and not slot.started:
            out.extend(self._start(slot))
        arguments = function.get("arguments")
        if arguments is None or arguments == "":
            return out
        if not isinstance(arguments, str):  # Ollama native style: already an object
            arguments = json.dumps(arguments)
        if slot.started:
            out.append(ev.ToolCallArgs(tool_call_id=slot.id, delta=arguments))
        else:
            slot.pending_args.append(arguments)
        return out

    def _start(self, slot: _CallSlot) -> list[ev.Event]:
        out = self._close_text()
        slot.started = True
        out.append(
            ev.ToolCallStart(
                tool_call_id=slot.id,
                tool_call_name=slot.name,
                parent_message_id=self.message_id,
                metadata={"provider": self.provider, "model": self.model},
            )
        )
        if slot.pending_args:
            out.append(ev.ToolCallArgs(tool_call_id=slot.id, delta="".join(slot.pending_args)))
            slot.pending_args.clear()
        return out


def completion_as_chunk(completion: Any) -> dict[str, Any]:
    """A whole `chat.completion` (an answer without streaming) as the one chunk that would
    have streamed it, so that the accumulator turns it into the same events: each choice's
    message becomes its delta, its tool calls indexed in order (a legacy `function_call`
    is one call)."""
    if not isinstance(completion, dict):
        raise ValueError("the answer is not a JSON object")
    choices = []
    for choice in completion.get("choices") or ():
        message = choice.get("message") or {}
        calls = message.get("tool_calls") or []
        if not calls and isinstance(message.get("function_call"), dict):
            calls = [{"function": message["function_call"]}]
        delta = {
            "content": message.get("content"),
            "tool_calls": [{**call, "index": i} for i, call in enumerate(calls)],
        }
        choices.append(
            {
                "index": choice.get("index", 0),
                "delta": delta,
                "finish_reason": choice.get("finish_reason"),
            }
        )
    return {"choices": choices, "usage": completion.get("usage")}
