"""Estimated tokens of messages, kept per message between measures: a long conversation
(a served thread of thousands of messages) is measured before every model step, and
re-encoding every message each time made a run's cost grow with the thread. A
conversation holds one `TokenTally`; a measure costs a check in C per message it counted
before (agentcli.conversation.seen) and an estimate per message it did not.

A message is known again by identity, with its content's identity and its calls' names
and arguments: a message replaced, edited or given other calls is measured anew, so a
tally always equals the sum from scratch (tests/test_tokens.py)."""

from __future__ import annotations

from agentcli.conversation.seen import Message, PerMessage, SeenMessages

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


class TokenTally:
    """The messages' estimates, kept between measures of one conversation: the running
    total of the list measured last, as far as it is unchanged, and each message's own."""

    def __init__(self) -> None:
        self._seen = SeenMessages()
        self._sums = [0]  # _sums[n]: the tokens of the first n messages of the list seen
        self._kept: PerMessage[int] = PerMessage()  # each message's, for a list in another order
        self.measured = 0  # messages estimated so far (tests count them)

    def count(self, messages: list[Message]) -> int:
        unchanged = self._seen.unchanged(messages)
        del self._sums[unchanged + 1 :]
        total = self._sums[unchanged]
        for message in messages[unchanged:]:
            total += self._tokens(message)
            self._sums.append(total)
        self._seen.see(messages, unchanged)
        self._kept.keep_only(messages)
        return total

    def _tokens(self, message: Message) -> int:
        tokens = self._kept.get(message)
        if tokens is None:
            self.measured += 1
            tokens = self._kept.put(message, message_tokens(message))
        return tokens
