"""A decision, the one JSON object a small model writes when a tool may be called:
`{"name": TOOL, "arguments": {...}}` or `{"name": "answer"}` (no tool: answer in words).
How it is written (few-shot examples, the history) and read back."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from agentcli.records import dataclass

ANSWER = "answer"  # the decision "no tool: answer in words"
COMPACT = (",", ":")  # JSON separators of a decision: the grammar allows no other spacing


@dataclass(frozen=True, slots=True)
class Decision:
    name: str  # a tool name, or ANSWER
    arguments: str = "{}"  # the JSON text of the arguments, as the model wrote it

    @property
    def is_call(self) -> bool:
        return self.name != ANSWER


def render_decision(name: str, arguments: dict[str, Any] | str | None = None) -> str:
    """The JSON a decision is written as (few-shot examples and the history)."""
    if name == ANSWER:
        return json.dumps({"name": ANSWER}, separators=COMPACT)
    if isinstance(arguments, str):
        try:
            arguments = json.loads(arguments) if arguments.strip() else {}
        except ValueError:
            arguments = {}
    if not isinstance(arguments, dict):
        arguments = {}
    return json.dumps(
        {"name": name, "arguments": arguments}, ensure_ascii=False, separators=COMPACT
    )


def decision_prefix() -> str:
    """What every decision starts with; the prompt ends with it when names are scored."""
    return '{"name":"'


def parse_decision(text: str, tool_names: Iterable[str]) -> Decision:
    """The decision the model wrote. Raises ValueError when it is not one (cut short by a
    bound, or an unknown name: the grammar makes both rare)."""
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"not complete JSON ({exc.msg}): {text[:120]!r}") from None
    if not isinstance(data, dict) or not isinstance(data.get("name"), str):
        raise ValueError(f"no tool name in {text[:120]!r}")
    name = data["name"]
    if name == ANSWER:
        return Decision(ANSWER)
    if name not in set(tool_names):
        raise ValueError(f"unknown tool {name!r}")
    arguments = data.get("arguments", {})
    if not isinstance(arguments, dict):
        raise ValueError(f"arguments of {name} are not an object: {arguments!r}")
    return Decision(name, json.dumps(arguments, ensure_ascii=False))
