"""Random edits of a list of messages, for the caches of per-message work (token
estimates, snapshot encodings) to be checked against the work done from scratch."""

from __future__ import annotations

import json

from hypothesis import strategies as st

from agentcli.conversation.messages import Message, ToolCall
from agentcli.records import replace

KINDS = ["append", "replace", "edit", "delete", "insert", "calls", "arguments"]


def edits(*extra: str) -> st.SearchStrategy[list[tuple[str, int, str]]]:
    """Lists of (kind, where, text); `extra` kinds are the caller's to apply."""
    return st.lists(
        st.tuples(
            st.sampled_from([*KINDS, *extra]),
            st.integers(min_value=0, max_value=10_000),
            st.text(max_size=20),
        ),
        max_size=30,
    )


def apply_edit(messages: list[Message], kind: str, where: int, text: str) -> None:
    at = where % len(messages) if messages else 0
    if kind == "append" or not messages:
        messages.append(Message.user(text))
    elif kind == "replace":
        messages[at] = replace(messages[at], content=text)
    elif kind == "edit":
        messages[at].content = messages[at].content + text
    elif kind == "delete":
        del messages[at]
    elif kind == "insert":
        messages.insert(at, Message(role="assistant", content=text))
    elif kind == "calls" and messages[at].role == "assistant":
        arguments = json.dumps({"q": text})
        messages[at].tool_calls.append(ToolCall(id=f"c{where}", name="t", arguments=arguments))
    elif kind == "arguments":
        for call in messages[at].tool_calls:
            call.arguments = json.dumps({"path": text})
