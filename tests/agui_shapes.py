"""Wrong shapes of every AG-UI event a remote agent can send (`--agent`), for the property
tests: a valid event of each type, in a run where it makes sense, and a hypothesis
strategy that changes one of its fields (at any depth) to a value of another kind or
leaves it out. Whether the result is valid is the `ag-ui-protocol` SDK's word, not ours."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st
from pydantic import ValidationError

from tests.agui_helpers import EVENT, finished, started

# A valid event of each type, and the events before it that make it meaningful.
OPEN_TEXT = {"type": "TEXT_MESSAGE_START", "messageId": "m1", "role": "assistant"}
OPEN_CALL = {"type": "TOOL_CALL_START", "toolCallId": "c1", "toolCallName": "lookup"}
OPEN_REASONING = [
    {"type": "REASONING_START", "messageId": "r1"},
    {"type": "REASONING_MESSAGE_START", "messageId": "r1", "role": "reasoning"},
]
BASES: dict[str, tuple[list[dict[str, Any]], dict[str, Any]]] = {
    "TEXT_MESSAGE_START": ([], OPEN_TEXT),
    "TEXT_MESSAGE_CONTENT": ([OPEN_TEXT], {"messageId": "m1", "delta": "hello"}),
    "TEXT_MESSAGE_END": ([OPEN_TEXT], {"messageId": "m1"}),
    "TEXT_MESSAGE_CHUNK": ([], {"messageId": "m1", "role": "assistant", "delta": "hi"}),
    "TOOL_CALL_START": ([], {**OPEN_CALL, "parentMessageId": "m1"}),
    "TOOL_CALL_ARGS": ([OPEN_CALL], {"toolCallId": "c1", "delta": '{"key": "k"}'}),
    "TOOL_CALL_END": ([OPEN_CALL], {"toolCallId": "c1"}),
    "TOOL_CALL_CHUNK": ([], {"toolCallId": "c1", "toolCallName": "lookup", "delta": "{}"}),
    "TOOL_CALL_RESULT": (
        [OPEN_CALL, {"type": "TOOL_CALL_END", "toolCallId": "c1"}],
        {"messageId": "t1", "toolCallId": "c1", "content": "k is 42", "role": "tool"},
    ),
    "STATE_SNAPSHOT": ([], {"snapshot": {"notes": ["a"]}}),
    "STATE_DELTA": (
        [{"type": "STATE_SNAPSHOT", "snapshot": {"notes": []}}],
        {"delta": [{"op": "add", "path": "/notes/-", "value": "b"}]},
    ),
    "MESSAGES_SNAPSHOT": (
        [],
        {
            "messages": [
                {"id": "u1", "role": "user", "content": "hi"},
                {
                    "id": "a1",
                    "role": "assistant",
                    "content": "looking",
                    "toolCalls": [
                        {
                            "id": "c1",
                            "type": "function",
                            "function": {"name": "lookup", "arguments": '{"key": "k"}'},
                        }
                    ],
                },
                {"id": "t1", "role": "tool", "toolCallId": "c1", "content": "k is 42"},
            ]
        },
    ),
    "RUN_FINISHED": (
        [],
        {"threadId": "t", "runId": "r", "usage": [{"inputTokens": 3, "outputTokens": 4}]},
    ),
    "STEP_STARTED": ([], {"stepName": "think"}),
    "CUSTOM": ([], {"name": "progress", "value": {"done": 1}}),
    "REASONING_MESSAGE_CONTENT": (OPEN_REASONING, {"messageId": "r1", "delta": "hmm"}),
}
TYPES = sorted(BASES)

OTHER_VALUES = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=8),
    st.lists(st.integers(0, 9), max_size=3),
    st.dictionaries(st.sampled_from(["a", "id", "name"]), st.integers(0, 9), max_size=2),
)
DROP = object()  # the field left out


def paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every field of an event, at any depth (not its `type`: that names the event)."""
    found: list[tuple[Any, ...]] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if prefix == () and key == "type":
                continue
            found.append((*prefix, key))
            found += paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += paths(item, (*prefix, index))
    return found


def changed(event: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(event)
    holder: Any = out
    for step in path[:-1]:
        holder = holder[step]
    if value is DROP:
        del holder[path[-1]]
    else:
        holder[path[-1]] = value
    return out


def sdk_accepts(event: Any) -> bool:
    try:
        EVENT.validate_python(event)
    except ValidationError:
        return False
    return True


@st.composite
def mutated(draw: st.DrawFn, kind: str) -> tuple[list[dict[str, Any]], dict[str, Any], str]:
    """(the events before it, the changed event, the name of the field changed)."""
    before, fields = BASES[kind]
    event = {"type": kind, **fields}
    path = draw(st.sampled_from(paths(event)))
    value = draw(st.one_of(st.just(DROP), OTHER_VALUES))
    return before, changed(event, path, value), str(path[-1])


def stream(before: list[dict[str, Any]], event: dict[str, Any]) -> list[dict[str, Any]]:
    """A run around `event`: RUN_STARTED, what it needs before it, it, RUN_FINISHED."""
    ending = [] if event.get("type") in ("RUN_FINISHED", "RUN_ERROR") else [finished()]
    return [started(), *before, event, *ending]
