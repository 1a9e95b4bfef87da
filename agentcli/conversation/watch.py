"""Edits of messages that per-message caches have seen, counted: the caches (token tally,
request and snapshot encodings, a conversation's index) tell an unchanged lead of a long
thread by the messages' identities alone (one list compare in C) as long as no message they
saw was edited since, and check field by field only after an edit. A thread never changes a
message once it holds it, so in practice the count never moves; it is the proof, not a
hope, that the cheap check is enough.

What counts as an edit of a watched message: setting any of its fields (or a field of one
of its tool calls), and changing its `tool_calls`, `images` or `extra` in place (they are
swapped for the watching list and dict below when the message is watched)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, SupportsIndex


class _Count:
    edits = 0


def edits() -> int:
    """Edits of watched messages so far (in this process)."""
    return _Count.edits


def edited() -> None:
    _Count.edits += 1


def watch(message: Any) -> bool:
    """Watches a message (agentcli.conversation.messages.Message) and its calls from now on;
    False for an object that cannot be watched (a cache then checks its fields each time)."""
    watched = getattr(message, "watched", None)
    if watched is None:
        return False
    if watched:
        return True
    # Set past the records' own __setattr__: watching is not an edit.
    setter = object.__setattr__
    for name in ("tool_calls", "images"):
        value = getattr(message, name)
        if type(value) is list:
            setter(message, name, WatchedList(value))
    if type(message.extra) is dict:
        setter(message, "extra", WatchedDict(message.extra))
    for call in message.tool_calls:
        if getattr(call, "watched", None) is None:
            return False
        setter(call, "watched", True)
    setter(message, "watched", True)
    return True


class WatchedList(list):  # type: ignore[type-arg]
    """A watched message's list (its calls, its images): a change in place is an edit."""

    __slots__ = ()

    def append(self, item: Any) -> None:
        edited()
        super().append(item)

    def extend(self, items: Iterable[Any]) -> None:
        edited()
        super().extend(items)

    def insert(self, index: SupportsIndex, item: Any) -> None:
        edited()
        super().insert(index, item)

    def pop(self, index: SupportsIndex = -1) -> Any:
        edited()
        return super().pop(index)

    def remove(self, item: Any) -> None:
        edited()
        super().remove(item)

    def clear(self) -> None:
        edited()
        super().clear()

    def sort(self, *args: Any, **kwargs: Any) -> None:
        edited()
        super().sort(*args, **kwargs)

    def reverse(self) -> None:
        edited()
        super().reverse()

    def __setitem__(self, index: Any, value: Any) -> None:
        edited()
        super().__setitem__(index, value)

    def __delitem__(self, index: Any) -> None:
        edited()
        super().__delitem__(index)

    def __iadd__(self, items: Iterable[Any]) -> WatchedList:  # type: ignore[override]
        edited()
        return super().__iadd__(items)  # type: ignore[return-value]

    def __imul__(self, times: SupportsIndex) -> WatchedList:  # type: ignore[override]
        edited()
        return super().__imul__(times)  # type: ignore[return-value]


class WatchedDict(dict):  # type: ignore[type-arg]
    """A watched message's `extra`: a change in place is an edit."""

    __slots__ = ()

    def __setitem__(self, key: Any, value: Any) -> None:
        edited()
        super().__setitem__(key, value)

    def __delitem__(self, key: Any) -> None:
        edited()
        super().__delitem__(key)

    def update(self, *args: Any, **kwargs: Any) -> None:
        edited()
        super().update(*args, **kwargs)

    def setdefault(self, key: Any, default: Any = None) -> Any:
        edited()
        return super().setdefault(key, default)

    def pop(self, *args: Any) -> Any:
        edited()
        return super().pop(*args)

    def popitem(self) -> Any:
        edited()
        return super().popitem()

    def clear(self) -> None:
        edited()
        super().clear()

    def __ior__(self, other: Any) -> WatchedDict:  # type: ignore[override,misc]
        edited()
        return super().__ior__(other)  # type: ignore[return-value]
