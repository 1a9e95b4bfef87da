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

    def update(self, messages: Sequence[Any]) -> MessageIndex:
        held = self._messages
        count = len(held)
        if not (
            len(messages) >= count
            and self._edits == watch.edits()
            and (messages[:count] if len(messages) > count else messages) == held
        ):
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

    def _clear(self) -> None:
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
            self.keys.append(("tool", call_id))
        else:
            self.keys.append((message.role, message.id))
        for call in message.tool_calls:
            self.calls[call.id] = call
            if call.id not in self.answered:
                self.unanswered.add(call.id)
        if message.images:
            self.with_images += 1
