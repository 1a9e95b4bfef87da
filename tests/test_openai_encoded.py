"""The OpenAI-compatible request's messages, encoded from what the conversation keeps of
earlier requests (agentcli.providers.openai.encoded_wire_messages), are always the JSON of
`to_wire_messages` from scratch, and a request encodes only the messages it adds."""

from __future__ import annotations

import json

from hypothesis import given, settings

from agentcli.conversation.encoded import EncodedMessages
from agentcli.conversation.images import ImagePart
from agentcli.conversation.messages import Message, ToolCall
from agentcli.providers.http import json_body
from agentcli.providers.openai import encoded_wire_messages, to_wire_messages
from agentcli.records import replace
from tests.message_edits import apply_edit, edits

PNG = ImagePart(data="iVBORw0KGgo=", mime_type="image/png")


def _thread(count: int) -> list[Message]:
    messages: list[Message] = []
    for n in range(count):
        calls = [ToolCall(id=f"c{n}", name="read_file", arguments=f'{{"path": "f{n}"}}')]
        result = Message.tool_result(f"c{n}", f"contents {n}", error="boom" if n == 2 else None)
        if n % 3 == 1:
            result = replace(result, images=[PNG])
        messages += [
            Message.user(f"question {n}", images=[PNG] if n == 4 else None),
            Message(role="assistant", content=f"answer {n}", tool_calls=calls),
            result,
        ]
    return messages


def _same(system: str, messages: list[Message], kept: EncodedMessages) -> None:
    encoded = encoded_wire_messages(system, messages, kept)
    assert json.loads(encoded.text) == to_wire_messages(system, messages)
    assert encoded.plain() == to_wire_messages(system, messages)


def test_a_second_request_encodes_only_the_new_messages():
    messages, kept = _thread(50), EncodedMessages()
    _same("be brief", messages, kept)
    assert kept.encoded == 150
    messages.append(Message.user("one more"))
    _same("be brief, and kind", messages, kept)  # the system message is not kept
    assert kept.encoded == 151


def test_images_of_the_last_results_follow_them_at_the_end_and_later_in_place():
    messages, kept = _thread(2), EncodedMessages()  # ends with a result holding an image
    _same("", messages, kept)
    messages.append(Message.user("and now?"))
    _same("", messages, kept)


@settings(max_examples=200, deadline=None)
@given(edits("part", "images"))
def test_after_any_edits_the_encoding_equals_the_one_from_scratch(changes):
    messages, kept = _thread(4), EncodedMessages()
    for kind, where, text in changes:
        if kind == "part" and messages:  # part of them, as after a compaction
            _same("s", messages[where % len(messages) :], kept)
        elif kind == "images" and messages:
            at = where % len(messages)
            messages[at] = replace(messages[at], images=[PNG] * (where % 3))
        else:
            apply_edit(messages, kind, where, text)
        _same("s", messages, kept)


def test_the_body_splices_the_messages_and_writes_a_lone_surrogate_as_shown():
    def body(text: str) -> dict:
        encoded = encoded_wire_messages("", [Message.user(text)], EncodedMessages())
        content = json_body({}, {"model": "m", "messages": encoded, "stream": True})["content"]
        return json.loads(content)

    spliced = body("café")
    assert list(spliced) == ["messages", "model", "stream"]  # spliced in first
    assert spliced["messages"] == [{"role": "user", "content": "café"}]
    anew = body("caf\udce9")  # written anew from the plain value, the surrogate shown
    assert anew["model"] == "m" and anew["messages"][0]["role"] == "user"
    assert "\udce9" not in anew["messages"][0]["content"]
