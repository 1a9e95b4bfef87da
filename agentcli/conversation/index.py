"""What a conversation's messages hold, kept as they grow: their ids, the tool calls by id,
which calls have results, and whether any message has images. A served thread of thousands
of messages asked these on every run (repairs, a run's plan, a request's images), each a
pass over the whole thread; here a question costs a compare of the list in C and a look at
the messages added since. Any other change (a message removed, replaced or moved, a
compaction's reordering, an edit of a watched message: agentcli.conversation.watch) makes
the index again from the messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from agentcli.conversation import watch


class MessageIndex:
    def __init__(self) -> None:
        self._messages: list[Any] = []  # the list indexed (its messages held)
        self._edits = -1  # watch.edits() when indexed; -1: not every message is watched
        self.ids: set[str] = set()
        self.calls: dict[str, Any] = {}  # call id -> the ToolCall (the last of that id)
        self.answered: set[str] = set()  # call ids that tool results answer
        self.unanswered: set[str] = set()  # call ids without a result (yet)
        # (role, id) of each message, ("tool", its call) for a tool result: the thread's
        # history as agentcli.agui.threads.same_history compares it.
        self.keys: list[tuple[str, str | None]] = []
        self.with_images = 0  # messages that hold images
        self.generation = 0  # how many times the index was made again from the messages

    def update(self, messages: Sequence[Any]) -> MessageIndex:
        held = self._messages
        count = len(held)
        if not (
            len(messages) >= count
            and self._edits == watch.edits()
            and (messages[:count] if len(messages) > count else messages) == held
        ) and not self._reordered(messages):
            self._clear()
            count = 0
        added = messages[count:]
        if not all(map(watch.watch, added)):
            self._edits = -1
        elif not count:
            self._edits = watch.edits()
        for message in added:
            self._add(message)
        held.extend(added)
        return self

    def _reordered(self, messages: Sequence[Any]) -> bool:
        """Whether the messages held, unedited, end in another order in `messages` (a run
        puts its results in the order of their calls): the sets stand, the keys of the
        reordered part are made again."""
        held = self._messages
        count = len(held)
        if len(messages) < count or self._edits != watch.edits():
            return False
        low, high = 0, count  # the longest common lead, by compares of lists in C
        while low < high:
            middle = (low + high + 1) // 2
            if messages[:middle] == held[:middle]:
                low = middle
            else:
                high = middle - 1
        tail = messages[low:count]
        if sorted(map(id, tail)) != sorted(map(id, held[low:])):
            return False
        if any(m.tool_calls for m in tail):  # `calls` keeps the last call of an id: by order
            return False
        held[low:] = tail
        self.keys[low:] = [_key(m) for m in tail]
        return True

    def _clear(self) -> None:
        self.generation += 1
        self._messages.clear()
        self._edits = watch.edits()
        self.ids.clear()
        self.calls.clear()
        self.answered.clear()
        self.unanswered.clear()
        self.keys.clear()
        self.with_images = 0

    def _add(self, message: Any) -> None:
        self.ids.add(message.id)
        if message.role == "tool":
            call_id = message.tool_call_id
            self.answered.add(call_id)
            self.unanswered.discard(call_id)
        self.keys.append(_key(message))
        for call in message.tool_calls:
            self.calls[call.id] = call
            if call.id not in self.answered:
                self.unanswered.add(call.id)
        if message.images:
            self.with_images += 1


def _key(message: Any) -> tuple[str, str | None]:
    return ("tool", message.tool_call_id) if message.role == "tool" else (message.role, message.id)
