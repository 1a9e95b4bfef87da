"""How deeply a JSON value nests, for values from outside that agentcli keeps and hands on.

A value nested a few hundred levels deep parses, but pydantic's serializer (the AG-UI
events' encoder) refuses past about 255 levels and `json.dumps` recurses: kept in a thread's
state or a session, such a value would fail every later run that sends it on. So values
from a peer are refused where they enter when they nest deeper than `MAX_DEPTH`, far past
anything an application keeps, well inside what every encoder handles."""

from __future__ import annotations

from typing import Any

MAX_DEPTH = 100  # levels of objects and arrays in a peer's free-form value (state, props)


def nesting(value: Any, stop_past: int | None = None) -> int:
    """How deeply arrays and objects nest in `value` (iteratively: no recursion limit);
    with `stop_past`, the walk stops at the first level past it (the value is too deep)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            if depth > deepest:
                deepest = depth
                if stop_past is not None and deepest > stop_past:
                    return deepest
            children = item.values() if isinstance(item, dict) else item
            stack.extend((child, depth + 1) for child in children)
    return deepest


def too_deep(value: Any, limit: int = MAX_DEPTH) -> bool:
    """Whether `value` nests deeper than `limit` levels."""
    return nesting(value, stop_past=limit) > limit
