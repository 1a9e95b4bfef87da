"""The values a model provider sends, checked where they enter (issue 40: "validate at the
edge"). A value of the wrong shape is one line naming its field, never an internal error,
and it is refused before any event is made of it, so nothing wrong-shaped is recorded and
the session continues afterwards."""

from __future__ import annotations

import math
from typing import Any

from agentcli.errors import ProviderError
from agentcli.json_kinds import json_kind

# The largest count taken as it is: past it a float no longer holds every integer, and no
# answer has that many tokens; a server that says so is wrong, not generous.
MAX_COUNT = 2**53
_SHOWN_DIGITS = 24  # a number longer than this is described, not printed


class WrongShape(ProviderError):
    """A provider's answer held a value of the wrong shape: the run stops at it."""


def described(value: Any) -> str:
    """A value in words for a one-line message: numbers by their value (short), the rest
    by their kind ("a list")."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return json_kind(value)
    if isinstance(value, float) and not math.isfinite(value):
        return f"the number {value}"
    text = str(value)
    if len(text) > _SHOWN_DIGITS:
        return f"a number of {len(text)} characters"
    return f"the number {text}"


class Edge:
    """The checks of one provider's answer: `label` names the provider, `source` what it
    sent ("stream", or "answer" for one without streaming). Each check returns the value
    as agentcli keeps it, or raises WrongShape naming `field`."""

    def __init__(self, label: str, source: str = "stream") -> None:
        self.label, self.source = label, source

    def fail(self, what: str) -> WrongShape:
        """`what` the provider did, as one line: "sent content block 0 twice"."""
        return WrongShape(f"the {self.label} {self.source} {what}; the run stops here")

    def wrong(self, field: str, value: Any, expected: str) -> WrongShape:
        return self.fail(f"sent {field} as {described(value)}, not {expected}")

    def object(self, value: Any, field: str) -> dict[str, Any]:
        """An object; null or absent is an empty one."""
        if value is None:
            return {}
        if type(value) is not dict:
            raise self.wrong(field, value, "an object")
        return value

    def listed(self, value: Any, field: str) -> list[Any]:
        """A list; null or absent is an empty one."""
        if value is None:
            return []
        if type(value) is not list:
            raise self.wrong(field, value, "a list")
        return value

    def text(self, value: Any, field: str) -> str | None:
        """Text; null or absent is None."""
        if value is None or type(value) is str:
            return value
        raise self.wrong(field, value, "text")

    def name(self, value: Any, field: str) -> str:
        """Text that is not empty (a tool's name)."""
        if type(value) is str and value:
            return value
        raise self.wrong(field, value, "a name")

    def ident(self, value: Any, field: str) -> str | None:
        """An id as text: a number's decimal text is the same id, losslessly (a model
        given the number back as text matches it); null, absent or empty is None."""
        if value is None or value == "":
            return None
        if type(value) is str:
            return value
        if type(value) is int:
            return str(value)
        raise self.wrong(field, value, "text")

    def index(self, value: Any, field: str) -> int | None:
        """An integer position; an integral float is that integer; null or absent is None."""
        if value is None or type(value) is int:
            return value
        if type(value) is float and value.is_integer():
            return int(value)
        raise self.wrong(field, value, "an integer")

    def count(self, value: Any, field: str) -> int | None:
        """A count of tokens: a non-negative integer (or an integral float) up to
        MAX_COUNT; null or absent is None (not said)."""
        if value is None:
            return None
        if type(value) is float and value.is_integer():
            value = int(value)
        if type(value) is int and 0 <= value <= MAX_COUNT:
            return value
        raise self.wrong(field, value, "a count of tokens")
