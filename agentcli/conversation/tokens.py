"""Estimated tokens of messages, kept per message between measures: a long conversation
(a served thread of thousands of messages) is measured before every model step, and
re-encoding every message each time made a run's cost grow with the thread. A
conversation holds one `TokenTally`; a measure costs an identity check per message it
counted before and an estimate per message it did not.

A message is known again by identity, with its content's identity and its calls' names
and arguments: a message replaced, edited or given other calls is measured anew, so a
tally always equals the sum from scratch (tests/test_tokens.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agentcli.conversation.messages import Message

_HIGH_BYTES = bytes(range(128, 256))
FRAMING = 4  # each message's own framing (role, separators)


def text_tokens(text: str) -> int:
    """An estimate that errs high: 3 ASCII characters per token (English runs nearer 4,
    code about 3) and 2 UTF-8 bytes per token beyond ASCII (a CJK character, 3 bytes, is
    counted 1.5 tokens; tokenizers give it 1 to 1.5)."""
    data = text.encode("utf-8", "surrogatepass")
    ascii_bytes = len(data.translate(None, _HIGH_BYTES))
    return ascii_bytes // 3 + (len(data) - ascii_bytes) // 2 + 1


def message_tokens(message: Message) -> int:
    total = FRAMING + text_tokens(message.content)
    for call in message.tool_calls:
        total += text_tokens(call.name) + text_tokens(call.arguments)
    return total


def messages_tokens(messages: list[Message]) -> int:
    """From scratch (what a tally must always equal)."""
    return sum(message_tokens(message) for message in messages)


def _calls_key(message: Message) -> tuple[str, ...]:
    """What of its calls a message's estimate depends on (equal keys, equal tokens)."""
    return tuple(part for call in message.tool_calls for part in (call.name, call.arguments))


class TokenTally:
    """The messages' estimates, kept between measures of one conversation."""

    def __init__(self) -> None:
        # id(message) -> (the message, its content, its calls' key, its tokens); the
        # message is held, so its id is not reused while its entry is here.
        self._kept: dict[int, tuple[Message, str, tuple[str, ...], int]] = {}
        self.measured = 0  # messages estimated so far (tests count them)

    def count(self, messages: list[Message]) -> int:
        kept = self._kept
        total = 0
        for message in messages:
            entry = kept.get(id(message))
            if (
                entry is not None
                and entry[0] is message
                and entry[1] is message.content
                and entry[2] == (_calls_key(message) if message.tool_calls else ())
            ):
                total += entry[3]
                continue
            tokens = message_tokens(message)
            self.measured += 1
            kept[id(message)] = (message, message.content, _calls_key(message), tokens)
            total += tokens
        if len(kept) > 2 * len(messages) + 64:  # messages the conversation no longer holds
            self._kept = {id(m): kept[id(m)] for m in messages if id(m) in kept}
        return total
