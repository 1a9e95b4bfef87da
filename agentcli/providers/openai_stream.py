"""Turns OpenAI-compatible `chat.completion.chunk` objects into events, accepting the
deviations of real servers (protocols.md §1): index reuse with distinct ids, calls arriving
whole, arguments as objects, missing ids or arguments, `finish_reason: stop` with calls."""

from __future__ import annotations

import json
from typing import Any

from agentcli.conversation import events as ev
from agentcli.conversation.messages import new_id
from agentcli.providers.shapes import Edge, described
from agentcli.records import dataclass, field


@dataclass(slots=True)
class _CallSlot:
    id: str
    name: str = ""
    started: bool = False
    pending_args: list[str] = field(default_factory=list)  # arguments seen before the name


class ChatStreamAccumulator:
    """`whole`: the chunks are whole answers (`completion_as_chunk`), so a wrong value is
    named as the answer's field (`choices[0].message.content`), not a delta's."""

    def __init__(self, provider: str, model: str, *, whole: bool = False) -> None:
        self.provider = provider
        self.model = model
        self.edge = Edge(provider, "answer" if whole else "stream")
        self._part = "message" if whole else "delta"
        self.message_id = new_id("msg")
        self.finish_reason: str | None = None
        self.usage: ev.Usage | None = None
        self.began = False  # some text or a tool call arrived: the answer has begun
        self.refused = False  # the model sent a refusal (`delta.refusal`), shown as text
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
            choice = choices[0]  # a piece of text, as nearly every chunk is
            if (
                type(choice) is dict
                and type(delta := choice.get("delta")) is dict
                and len(delta) == 1
                and type(content := delta.get("content")) is str
                and content
                and not choice.get("finish_reason")
                and choice.get("index", 0) == 0
                and chunk.get("usage") is None
            ):
                return [ev.TextMessageContent(message_id=self.message_id, delta=content)]
        # Every value is checked before any event is made of the chunk: a wrong one ends
        # the run with nothing of its chunk recorded.
        usage = chunk.get("usage")
        if usage is not None:
            self.usage = self._usage(usage)
        out: list[ev.Event] = []
        for position, choice in enumerate(self.edge.listed(choices, "choices")):
            out.extend(self._choice(choice, f"choices[{position}]"))
        self.began = self.began or bool(out)
        return out

    def _choice(self, choice: Any, where: str) -> list[ev.Event]:
        edge = self.edge
        if type(choice) is not dict:
            raise edge.wrong(where, choice, "an object")
        if (edge.index(choice.get("index"), f"{where}.index") or 0) != 0:
            return []  # we ask for one completion; ignore any other
        at = f"{where}.{self._part}"
        delta = edge.object(choice.get("delta"), at)
        content = edge.text(delta.get("content"), f"{at}.content")
        refusal = edge.text(delta.get("refusal"), f"{at}.refusal")
        calls = edge.listed(delta.get("tool_calls"), f"{at}.tool_calls")
        finish = edge.text(choice.get("finish_reason"), f"{where}.finish_reason")
        out = self._text(content) if content else []
        if refusal:  # shown and kept as text, as Anthropic's refusal is
            self.refused = True
            out.extend(self._text(refusal))
        for number, call_delta in enumerate(calls):
            out.extend(self._tool_call(call_delta, f"{at}.tool_calls[{number}]"))
        if finish:
            self.finish_reason = finish
        return out

    def _usage(self, usage: Any) -> ev.Usage:
        edge = self.edge
        usage = edge.object(usage, "usage")
        prompt = edge.count(usage.get("prompt_tokens"), "usage.prompt_tokens")
        completion = edge.count(usage.get("completion_tokens"), "usage.completion_tokens")
        return ev.Usage(input_tokens=prompt or 0, output_tokens=completion or 0)

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
        elif self.refused and self.finish_reason in (None, "stop"):
            self.finish_reason = "refusal"  # said as Anthropic's refusal is
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

    def _slot_for(self, call_id: str | None, index: int | None) -> _CallSlot:
        if call_id and call_id in self._by_id:
            slot = self._by_id[call_id]
        elif index is not None and index in self._by_index:
            slot = self._by_index[index]
            if call_id and call_id != slot.id:  # Ollama: index 0 for every call, new id
                slot = self._new_slot(call_id)
        elif index is None and not call_id and self._slots:
            slot = self._slots[-1]  # a fragment with neither index nor id continues the last
        else:
            slot = self._new_slot(call_id)
        if index is not None:
            self._by_index[index] = slot
        return slot

    def _new_slot(self, call_id: str | None) -> _CallSlot:
        slot = _CallSlot(id=call_id or new_id("call"))
        self._slots.append(slot)
        self._by_id[slot.id] = slot
        return slot

    def _tool_call(self, call_delta: Any, where: str) -> list[ev.Event]:
        edge = self.edge
        if type(call_delta) is not dict:
            raise edge.wrong(where, call_delta, "an object")
        call_id = edge.ident(call_delta.get("id"), f"{where}.id")
        index = edge.index(call_delta.get("index"), f"{where}.index")
        function = edge.object(call_delta.get("function"), f"{where}.function")
        name = function.get("name")
        if name is not None and name != "":
            name = edge.name(name, f"{where}.function.name")
        arguments = self._arguments(function.get("arguments"), f"{where}.function.arguments")
        slot = self._slot_for(call_id, index)
        out: list[ev.Event] = []
        if name and not slot.name:
            slot.name = name
        if slot.name and not slot.started:
            out.extend(self._start(slot))
        if not arguments:
            return out
        if slot.started:
            out.append(ev.ToolCallArgs(tool_call_id=slot.id, delta=arguments))
        else:
            slot.pending_args.append(arguments)
        return out

    def _arguments(self, arguments: Any, field: str) -> str:
        """A call's arguments as text: an object (Ollama's native style) as its JSON."""
        if arguments is None or type(arguments) is str:
            return arguments or ""
        try:
            return json.dumps(arguments, ensure_ascii=False, allow_nan=False)
        except (ValueError, RecursionError):  # nested past what Python can write again
            raise self.edge.wrong(field, arguments, "JSON text") from None

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


def completion_as_chunk(completion: Any, label: str = "openai") -> dict[str, Any]:
    """A whole `chat.completion` (an answer without streaming) as the one chunk that would
    have streamed it, so that the accumulator (made with `whole=True`, which names the
    fields as the answer's) turns it into the same events: each choice's message becomes
    its delta, its tool calls indexed in order (a legacy `function_call` is one call)."""
    edge = Edge(label, "answer")
    if type(completion) is not dict:
        raise edge.fail(f"was {described(completion)}, not a JSON object")
    choices = []
    for position, choice in enumerate(edge.listed(completion.get("choices"), "choices")):
        where = f"choices[{position}]"
        if type(choice) is not dict:
            raise edge.wrong(where, choice, "an object")
        message = edge.object(choice.get("message"), f"{where}.message")
        delta = {
            "content": message.get("content"),
            "refusal": message.get("refusal"),
            "tool_calls": _whole_calls(message, edge, f"{where}.message"),
        }
        choices.append(
            {
                "index": choice.get("index", 0),
                "delta": delta,
                "finish_reason": choice.get("finish_reason"),
            }
        )
    return {"choices": choices, "usage": completion.get("usage")}


def _whole_calls(message: dict[str, Any], edge: Edge, where: str) -> list[Any]:
    """A whole message's calls, indexed; a legacy `function_call` (checked here, where its
    field's name is known) is the one call."""
    calls = edge.listed(message.get("tool_calls"), f"{where}.tool_calls")
    legacy = edge.object(message.get("function_call"), f"{where}.function_call")
    if not calls and legacy:
        edge.name(legacy.get("name"), f"{where}.function_call.name")
        calls = [{"function": legacy}]
    return [{**call, "index": i} if type(call) is dict else call for i, call in enumerate(calls)]
