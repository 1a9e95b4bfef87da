"""A conversation's messages encoded for one wire format, kept between model requests: a
served thread of thousands of messages sends them all with every step, and encoding each
one anew made a step's cost grow with the thread. The unchanged lead of the list (told by
agentcli.conversation.seen: the same messages, contents and calls) is taken as it was;
each message's own JSON is kept by identity, with its content's and its calls', so a list
in another order (after a compaction) reuses it too. What else a message's JSON depends on
(its role, error, call id and images) is set before a conversation holds it."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from agentcli.conversation.seen import Message, PerMessage, SeenMessages

M = TypeVar("M", bound=Message)


class EncodedMessages:
    """One wire format's pieces of JSON for a list of messages: a piece per message (which
    may begin with what the format puts before it, from the messages before it)."""

    def __init__(self) -> None:
        self._seen = SeenMessages()
        self._pieces: list[str] = []
        self.own: PerMessage[str] = PerMessage()  # each message's own JSON
        self.encoded = 0  # messages encoded so far (tests count them)

    def pieces(self, messages: Sequence[M], piece: Callable[[Sequence[M], int], str]) -> list[str]:
        """The pieces of `messages`: `piece(messages, i)` makes the one of position i."""
        listed = list(messages)
        unchanged = self._seen.unchanged(listed)
        del self._pieces[unchanged:]
        self._pieces.extend(piece(listed, i) for i in range(unchanged, len(listed)))
        self._seen.see(listed, unchanged)
        self.own.keep_only(listed)
        return self._pieces

    def own_json(self, message: M, encode: Callable[[M], str]) -> str:
        text = self.own.get(message)
        if text is None:
            self.encoded += 1
            text = self.own.put(message, encode(message))
        return text


def kept_encoding(encodings: dict[str, EncodedMessages] | None, wire: str) -> EncodedMessages:
    """The encoding a request's conversation keeps for `wire` (a new one, used once, for a
    request made outside a conversation)."""
    if encodings is None:
        return EncodedMessages()
    kept = encodings.get(wire)
    if kept is None:
        kept = encodings[wire] = EncodedMessages()
    return kept
