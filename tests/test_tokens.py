"""A conversation's token tally (agentcli.conversation.tokens) always equals the estimate
from scratch, whatever happens to the messages, and estimates only what it has not seen."""

from __future__ import annotations

import random

from hypothesis import given, settings

from agentcli.agent.compaction import Compactor, estimate_tokens
from agentcli.conversation.messages import Conversation, Message, ToolCall
from agentcli.conversation.tokens import TokenTally, messages_tokens
from agentcli.records import replace
from tests.message_edits import apply_edit, edits


def _conversation(count: int) -> Conversation:
    conversation = Conversation()
    for n in range(count):
        conversation.add(Message.user(f"question {n}"))
        calls = [ToolCall(id=f"c{n}", name="read_file", arguments=f'{{"path": "f{n}"}}')]
        conversation.add(Message(role="assistant", content=f"answer {n}", tool_calls=calls))
        conversation.add(Message.tool_result(f"c{n}", "x" * n))
    return conversation


def test_a_second_measure_estimates_only_the_new_messages():
    conversation = _conversation(100)
    tally = conversation.tokens
    assert tally.count(conversation.messages) == messages_tokens(conversation.messages)
    assert tally.measured == 300
    conversation.add(Message.user("one more"))
    assert tally.count(conversation.messages) == messages_tokens(conversation.messages)
    assert tally.measured == 301


def test_replaced_edited_and_reordered_messages_are_measured_anew():
    conversation = _conversation(20)
    tally, messages = conversation.tokens, conversation.messages
    tally.count(messages)
    messages[5] = replace(messages[5], content="a much longer answer than before " * 10)
    messages[8].content += " and more"
    messages[4].tool_calls.append(ToolCall(id="extra", name="search", arguments='{"q": "x"}'))
    messages[7].tool_calls[0].arguments = '{"path": "a-longer-file-name.txt"}'
    messages[10].tool_calls.clear()
    messages.reverse()
    assert tally.count(messages) == messages_tokens(messages)
    assert tally.measured == 60 + 5


def test_the_compactors_measure_follows_a_compaction():
    conversation = _conversation(30)
    compactor = Compactor(provider=None, window=10_000, threshold=0.8, keep_turns=2, emit=print)  # type: ignore[arg-type]
    tools = [{"name": "read_file", "parameters": {}}]
    assert compactor.used("system", conversation, tools) == estimate_tokens(
        "system", conversation.messages, tools
    )
    conversation.summary, conversation.start = "what happened", 60
    assert compactor.used("system", conversation, tools) == estimate_tokens(
        "system", conversation.messages[60:], tools
    )
    before = conversation.tokens.measured
    compactor.used("system", conversation, tools)
    assert conversation.tokens.measured == before


@settings(max_examples=200, deadline=None)
@given(edits("part"))
def test_after_any_edits_the_tally_equals_the_sum_from_scratch(changes):
    messages = _conversation(5).messages
    tally = TokenTally()
    for kind, where, text in changes:
        if kind == "part" and messages:  # a measure of part of them, as after a compaction
            part = messages[where % len(messages) :]
            assert tally.count(part) == messages_tokens(part)
        apply_edit(messages, kind, where, text)
        assert tally.count(messages) == messages_tokens(messages)


def test_many_measures_of_a_growing_conversation_keep_few_entries():
    conversation, generator = Conversation(), random.Random(7)
    for n in range(500):
        conversation.add(Message.user("u" * generator.randrange(50)))
        conversation.start = max(0, n - 20)  # compactions: only the latest are measured
        visible = conversation.visible()
        assert conversation.tokens.count(visible) == messages_tokens(visible)
    assert conversation.tokens.measured < 700
