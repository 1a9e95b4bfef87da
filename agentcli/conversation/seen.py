"""What a cache of per-message work (a conversation's token estimates, a served thread's
snapshot encoding) saw last, to tell how many leading messages of a list are the same
ones, unchanged. The messages it sees are watched (agentcli.conversation.watch): while no
watched message was edited, the same messages are the same work, and the check is one
compare of the two lists in C (about 20 µs for 4,000 messages). After an edit it compares
whole lists of their contents and their calls' counts too (about 110 µs), and their calls
(names and arguments) one by one. A message replaced, edited or given other calls ends the
unchanged part."""

from __future__ import annotations

from collections.abc import Sequence
from operator import attrgetter
from typing import Any, Generic, Protocol, TypeVar

from agentcli.conversation import watch


class Message(Protocol):
    """What these caches read of a message (agentcli.conversation.messages.Message, which
    holds a conversation's token tally: so it is named by its shape here, not imported)."""

    content: str
    tool_calls: Sequence[Any]


T = TypeVar("T")
_content = attrgetter("content")
_calls = attrgetter("tool_calls")


def calls_key(message: Message) -> tuple[str, ...]:
    """What of its calls work on a message depends on (their names and arguments)."""
    return tuple(part for call in message.tool_calls for part in (call.name, call.arguments))


class SeenMessages:
    """The list a cache worked on last (its messages held, so no identity is reused)."""

    def __init__(self) -> None:
        self._messages: list[Message] = []
        self._contents: list[str] = []
        self._counts: list[int] = []
        self._with_calls: list[tuple[int, tuple[str, ...]]] = []  # (position, calls_key)
        self._edits = -1  # watch.edits() when last seen; -1: not every message is watched

    def unchanged(self, messages: list[Message]) -> int:
        """How many leading messages of `messages` are the ones seen, as they were."""
        seen = self._messages
        count = min(len(seen), len(messages))
        # Whole lists compared (`==` on lists takes identical items as equal at once, and
        # equal messages ask for the same work).
        head = messages if len(messages) == count else messages[:count]
        same = head == (seen if len(seen) == count else seen[:count])
        if same and self._edits == watch.edits():
            return count  # none of the messages seen was edited since
        # Their fields read by list comprehensions (twice as fast as attrgetter's map on
        # these slotted records); the first change is looked for only when there is one.
        if not (
            same
            and [m.content for m in head] == self._contents[:count]
            and [len(m.tool_calls) for m in head] == self._counts[:count]
        ):
            count = next((i for i in range(count) if not self._same(messages[i], i)), count)
        for position, key in self._with_calls:
            if position >= count:
                break
            if calls_key(messages[position]) != key:
                return position
        return count

    def _same(self, message: Message, position: int) -> bool:
        return (
            message is self._messages[position]
            and message.content is self._contents[position]
            and len(message.tool_calls) == self._counts[position]
        )

    def see(self, messages: list[Message], unchanged: int) -> None:
        """`messages` is the list seen now, of which `unchanged` lead as they were."""
        added = messages[unchanged:]
        if not unchanged or self._edits != -1:  # -1 stays while an unwatched one is held
            self._edits = watch.edits()
        if not all(map(watch.watch, added)):
            self._edits = -1
        del self._messages[unchanged:], self._contents[unchanged:], self._counts[unchanged:]
        self._messages.extend(added)
        self._contents.extend(map(_content, added))
        self._counts.extend(map(len, map(_calls, added)))
        while self._with_calls and self._with_calls[-1][0] >= unchanged:
            self._with_calls.pop()
        self._with_calls.extend(
            (unchanged + n, calls_key(m)) for n, m in enumerate(added) if m.tool_calls
        )


class PerMessage(Generic[T]):
    """Work done on each message (its estimate, its encoding), known again by identity,
    with its content's identity and its calls' key: a message changed is done anew."""

    def __init__(self) -> None:
        # id(message) -> (the message, its content, its calls' key, the work); the message
        # is held, so its id is not reused while its entry is here.
        self._kept: dict[int, tuple[Message, str, tuple[str, ...], T]] = {}

    def get(self, message: Message) -> T | None:
        entry = self._kept.get(id(message))
        if (
            entry is not None
            and entry[0] is message
            and entry[1] is message.content
            and entry[2] == (calls_key(message) if message.tool_calls else ())
        ):
            return entry[3]
        return None

    def put(self, message: Message, work: T) -> T:
        key = calls_key(message) if message.tool_calls else ()
        self._kept[id(message)] = (message, message.content, key, work)
        return work

    def keep_only(self, messages: list[Message]) -> None:
        """Entries of messages no longer held (a thread read anew, a compaction's older
        turns) are dropped once they outnumber the list's."""
        kept = self._kept
        if len(kept) > 2 * len(messages) + 64:
            self._kept = {id(m): kept[id(m)] for m in messages if id(m) in kept}
