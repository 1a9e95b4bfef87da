"""The MESSAGES_SNAPSHOT a served run ends with (agentcli.agui.snapshot): byte for byte the
SDK's encoding of the whole thread, while each message is validated and encoded once for
the thread's life, not once per run."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings

from agentcli.agui import wire
from agentcli.agui.snapshot import SnapshotWire, thread_messages
from agentcli.conversation import events as ev
from agentcli.conversation.messages import Message, ToolCall
from tests.message_edits import apply_edit, edits

pytest.importorskip("ag_ui")


def thread() -> list[Message]:
    call = ToolCall(id="c1", name="read_file", arguments='{"path": "é.txt"}')
    return [
        Message.user('hi ✓ \u2028 "quoted"'),
        Message(role="assistant", content="", tool_calls=[call]),
        Message.tool_result("c1", "no such file", error="not found"),
        Message(role="assistant", content="answer"),
    ]


def whole(messages: list[Message], confirms: list, timestamp: int) -> str:
    snapshot = ev.MessagesSnapshot(messages=thread_messages(messages, confirms))
    snapshot.timestamp = timestamp
    return wire.encode(snapshot)


def timestamp_of(record: str) -> int:
    return json.loads(record.removeprefix("data: "))["timestamp"]


def test_the_record_is_the_sdks_encoding_of_the_whole_thread():
    snapshots = SnapshotWire()
    messages = thread()
    for _ in range(2):
        record = snapshots.record(messages, [])
        assert record == whole(messages, [], timestamp_of(record))


def test_confirm_calls_join_their_message_and_are_not_kept():
    snapshots = SnapshotWire()
    messages = thread()
    call = {"id": "confirm-c2", "type": "function", "function": {"name": "confirm_tool_call"}}
    call["function"]["arguments"] = "{}"
    confirms = [(messages[3].id, call), (None, {**call, "id": "confirm-c3"})]
    record = snapshots.record(messages, confirms)
    assert record == whole(messages, confirms, timestamp_of(record))
    after = snapshots.record(messages, [])  # the next run: no confirm calls left over
    assert after == whole(messages, [], timestamp_of(after))


def test_a_run_encodes_only_the_messages_the_thread_gained():
    snapshots = SnapshotWire()
    messages = thread()
    snapshots.record(messages, [])
    assert snapshots.encoded == 4
    for n in range(50):
        messages += [Message.user(f"message {n}"), Message(role="assistant", content="ok")]
        snapshots.record(messages, [])
    assert snapshots.encoded == 4 + 100  # each message once, not once per run


def test_a_message_changed_in_place_is_encoded_anew():
    snapshots = SnapshotWire()
    messages = thread()
    snapshots.record(messages, [])
    messages[3].content = "changed"
    record = snapshots.record(messages, [])
    assert '"content":"changed"' in record
    assert record == whole(messages, [], timestamp_of(record))


@settings(max_examples=100, deadline=None)
@given(edits())
def test_after_any_edits_the_record_is_the_whole_threads_encoding(changes):
    snapshots, messages = SnapshotWire(), thread()
    for kind, where, text in changes:
        apply_edit(messages, kind, where, text)
        record = snapshots.record(messages, [])
        assert record == whole(messages, [], timestamp_of(record))


def test_a_wrong_shape_is_refused_as_before():
    from pydantic import ValidationError

    bad = Message.tool_result("c1", "x")
    bad.tool_call_id = None  # a tool message must answer a call
    with pytest.raises(ValidationError):
        SnapshotWire().record([bad], [])
