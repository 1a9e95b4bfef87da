"""The one fold of the event stream, the typed CUSTOM events and tool results' error kinds."""

from __future__ import annotations

import pytest
from ag_ui.core import CustomEvent, Event
from pydantic import TypeAdapter

from agentcli.conversation import events as ev
from agentcli.conversation.error_kinds import DENIED, FAILED, INTERRUPTED, INVALID
from agentcli.conversation.fold import StreamFold
from agentcli.conversation.messages import (
    Conversation,
    Message,
    ToolCall,
    message_from_dict,
    message_to_dict,
)
from agentcli.policy.engine import Policy
from tests.test_executor import call, make, run

EVENT = TypeAdapter(Event)

TYPED = [
    ev.Approval(tool_call_id="c", tool="t", risk="high", decision="deny", by="flag", reason="r"),
    ev.Approval(
        tool_call_id="c", tool="t", risk="low", decision="allow", by="rule", reason="r", rule="t"
    ),
    ev.ToolState(tool_call_id="c", state="running"),
    ev.Progress(tool_call_id="c", lines=["a", "b"], bytes=4),
    ev.RunWarning(message="careful"),
    ev.Instructions(files=["AGENTS.md"]),
    ev.UsageReport.of(ev.Usage(3, 4), "openai", "m"),
    ev.Retry(attempt=2, delay_seconds=0.5, reason="503"),
    ev.Compaction(summarised_messages=4, kept_messages=2, summary_chars=100),
]


@pytest.mark.parametrize("event", TYPED, ids=lambda e: e.name)
def test_typed_custom_events_are_ag_ui_custom_events_and_read_back(event: ev.TypedCustom):
    wire = event.to_wire()
    assert set(wire) == {"type", "timestamp", "name", "value"}
    model = EVENT.validate_python(wire)
    assert isinstance(model, CustomEvent) and model.name == event.NAME
    assert None not in wire["value"].values()  # optional keys are omitted, never null
    back = ev.custom_event(wire["name"], wire["value"], timestamp=wire["timestamp"])
    assert type(back) is type(event) and back == event


def test_usage_report_keeps_the_token_usage_shape():
    assert ev.UsageReport.of(ev.Usage(3, 4), "openai", "m").value == {
        "provider": "openai",
        "model": "m",
        "inputTokens": 3,
        "outputTokens": 4,
        "totalTokens": 7,
    }


def test_unknown_or_misshapen_custom_events_stay_plain():
    assert type(ev.custom_event("mine", {"x": 1})) is ev.Custom
    assert type(ev.custom_event("approval", {"toolCallId": "c"})) is ev.Custom  # fields missing
    assert type(ev.custom_event("warning", {"message": "m", "extra": 1})) is ev.Custom
    assert type(ev.custom_event("warning", "text")) is ev.Custom
    # a plain CUSTOM of a known kind (a provider's) is folded in its typed form
    plain = ev.Custom(name="warning", value={"message": "m"})
    assert ev.typed(plain) == ev.RunWarning(message="m", timestamp=plain.timestamp)


def test_the_fold_follows_runs_texts_and_tool_calls_through_their_states():
    fold = StreamFold()
    stream = [
        ev.RunStarted(thread_id="t", run_id="r"),
        ev.TextMessageStart(message_id="m"),
        ev.TextMessageContent(message_id="m", delta="hel"),
        ev.TextMessageContent(message_id="m", delta="lo"),
        ev.TextMessageEnd(message_id="m"),
        ev.ToolCallStart(tool_call_id="c", tool_call_name="read_file", metadata={"a": 1}),
        ev.ToolCallArgs(tool_call_id="c", delta='{"path": '),
        ev.ToolCallArgs(tool_call_id="c", delta='"x"}', metadata={"a": 2, "b": 3}),
    ]
    for event in stream:
        fold.apply(event)
    calls = fold.calls
    assert fold.texts["m"].text == "hello" and not fold.texts["m"].open
    assert calls["c"].state == "streaming" and not calls["c"].ended
    fold.apply(ev.ToolCallEnd(tool_call_id="c"))
    assert calls["c"].arguments() == {"path": "x"}
    assert calls["c"].metadata == {"a": 2, "b": 3}  # merged key by key, last write wins
    fold.apply(ev.Custom(name="tool_state", value={"toolCallId": "c", "state": "running"}))
    assert calls["c"].state == "running"
    fold.apply(
        ev.ToolCallResult(
            message_id="r1",
            tool_call_id="c",
            content="denied: no",
            metadata={"error": "denied: no", "errorKind": DENIED, "latencyMs": 5},
        )
    )
    assert (calls["c"].state, calls["c"].error_kind, calls["c"].latency_ms) == ("error", DENIED, 5)
    fold.apply(ev.RunFinished(thread_id="t", run_id="r", outcome={"type": "success"}))
    assert fold.run is not None and fold.run.status == "finished"


def test_results_without_an_error_kind_fall_back_to_their_text():
    fold = StreamFold()
    for call_id, error in [("a", "denied: x"), ("b", "interrupted: y"), ("c", "boom")]:
        fold.apply(ev.ToolCallStart(tool_call_id=call_id, tool_call_name="t"))
        meta = {"error": error}
        fold.apply(
            ev.ToolCallResult(message_id="m", tool_call_id=call_id, content="", metadata=meta)
        )
    assert [c.error_kind for c in fold.calls.values()] == [DENIED, INTERRUPTED, FAILED]


def test_the_executor_gives_every_failed_result_its_kind():
    executor, events = make(Policy(deny=True))
    results = run(
        executor,
        [
            call("risky", {}, "a"),
            call("sleep", "{oops", "b"),
            call("broken", {"kind": "expected"}, "c"),
            call("broken", {}, "d"),
            call("sleep", {"seconds": 0}, "e"),
        ],
    )
    expected = [DENIED, INVALID, FAILED, FAILED, None]
    assert [m.error_kind for m in results] == expected
    emitted = {
        e.tool_call_id: (e.metadata or {}).get("errorKind")
        for e in events
        if isinstance(e, ev.ToolCallResult)
    }
    assert [emitted[i] for i in "abcde"] == expected


def test_error_kinds_survive_the_session_file_and_repair_marks_interrupted_calls():
    conversation = Conversation()
    conversation.add(Message(role="assistant", tool_calls=[ToolCall("c", "t", "{}")]))
    conversation.repair()
    result = conversation.messages[-1]
    assert result.error_kind == INTERRUPTED
    assert message_from_dict(message_to_dict(result)).error_kind == INTERRUPTED


def test_a_remote_agents_state_is_one_status_line_on_stderr():
    import io

    from agentcli.output.state_lines import EVERY, StateLines
    from agentcli.output.text import TextOutput

    out, err = io.StringIO(), io.StringIO()
    text = TextOutput(out, err, markdown=False)
    ticks = iter(range(100))
    text.states = StateLines(clock=lambda: next(ticks) * EVERY)  # each change in its own time
    text.handle(ev.StateSnapshot(snapshot={"step": "search", "found": 3}))
    text.handle(ev.StateDelta(delta=[{"op": "replace", "path": "/found", "value": 4}]))
    text.handle(ev.StateSnapshot(snapshot={"blob": "x" * 500}))
    lines = err.getvalue().splitlines()
    assert lines[0] == '  state: {"step": "search", "found": 3}'
    assert lines[1] == "  state: 1 change(s): /found"
    assert len(lines[2]) < 200 and lines[2].endswith("…")
    assert out.getvalue() == ""


def test_a_relay_closes_what_a_cut_run_left_open_before_its_end():
    from agentcli.agui.server import Relay
    from tests.agui_helpers import sse_events

    relay = Relay()
    for event in [
        ev.RunStarted(thread_id="t", run_id="r"),
        ev.TextMessageStart(message_id="m"),
        ev.TextMessageContent(message_id="m", delta="part"),
        ev.ToolCallStart(tool_call_id="c", tool_call_name="read_file", parent_message_id="m"),
        ev.ToolCallArgs(tool_call_id="c", delta='{"pa'),
        ev.RunError(message="timeout", code="timeout"),
    ]:
        relay.handle(event)
    relay.end(None)  # the run's last event goes out once the store has released its thread
    records = []
    while not relay.queue.empty():
        records.append(relay.queue.get_nowait())
    kinds = [e["type"] for e in sse_events("".join(records))]
    assert kinds[-3:] == ["TEXT_MESSAGE_END", "TOOL_CALL_END", "RUN_ERROR"]
