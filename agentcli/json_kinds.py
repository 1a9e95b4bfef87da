"""The kind of a JSON value in words ("a number", "a list"), for one-line messages about a
peer's wrong shapes (AG-UI events, MCP answers)."""

from __future__ import annotations

from typing import Any


def json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__
