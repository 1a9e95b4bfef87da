"""agentcli.agui.client_view: what a client applying a served run's events as @ag-ui/client
does holds of the run's new messages, and so whether the run must end with the thread's
MESSAGES_SNAPSHOT (only when that client could not have them; when unsure, it must)."""

from __future__ import annotations

import json
import weakref

import pytest

from agentcli.agui.client_view import ClientView
from agentcli.agui.server import Relay
from agentcli.conversation import events as ev
from agentcli.conversation.messages import Conversation, Message, ToolCall

pytest.importorskip("ag_ui")


def user(message_id: str, content: str = "hi") -> Message:
    return Message(role="user", content=content, id=message_id)


def held() -> list[Message]:
    return [user("u1"), Message(role="assistant", content="hello", id="a0")]


def started(thread: list[Message], *, snapshot: bool = False, own: bool = True) -> ClientView:
    view = ClientView()
    view.apply(ev.RunStarted(thread_id="t", run_id="r"))
    view.start(Conversation(thread), snapshot=snapshot, own=own)
    return view


def text(message_id: str, *pieces: str) -> list[ev.Event]:
    return [
        ev.TextMessageStart(message_id=message_id),
        *(ev.TextMessageContent(message_id=message_id, delta=p) for p in pieces),
        ev.TextMessageEnd(message_id=message_id),
    ]


def call(call_id: str, name: str, parent: str | None, *pieces: str) -> list[ev.Event]:
    return [
        ev.ToolCallStart(
            tool_call_id=call_id,
            tool_call_name=name,
            parent_message_id=parent,
            metadata={"provider": "openai"},  # kept by the client beside the call: no part of it
        ),
        *(ev.ToolCallArgs(tool_call_id=call_id, delta=p) for p in pieces),
        ev.ToolCallEnd(tool_call_id=call_id),
    ]


def result(message_id: str, call_id: str, content: str) -> ev.ToolCallResult:
    return ev.ToolCallResult(
        message_id=message_id, tool_call_id=call_id, content=content, metadata={"latencyMs": 3}
    )


def applied(view: ClientView, events: list[ev.Event]) -> ClientView:
    for event in [ev.StepStarted(step_name="step-1"), *events, ev.StepFinished(step_name="s")]:
        view.apply(event)
    view.apply(ev.RunFinished(thread_id="t", run_id="r"))
    return view


def answer(message_id: str, content: str, *calls: ToolCall) -> Message:
    return Message(role="assistant", content=content, tool_calls=list(calls), id=message_id)


def tool(message_id: str, call_id: str, content: str, error: str | None = None) -> Message:
    message = Message.tool_result(call_id, content, error=error)
    message.id = message_id
    return message


def test_a_text_answer_is_what_the_client_built():
    thread = held()
    view = applied(started(thread), text("m1", "Hel", "lo ✓"))
    thread.append(answer("m1", "Hello ✓"))
    assert view.needs_snapshot(thread, []) is False
    assert view.held_messages() == [{"id": "m1", "role": "assistant", "content": "Hello ✓"}]


def test_text_a_server_call_and_its_result_then_text():
    thread = held()
    events = [
        *text("m1", "let me ", "look"),
        *call("c1", "read_file", "m1", '{"path"', ': "x"}'),
        result("r1", "c1", "data"),
        ev.Custom(name="tool_state", value={"id": "c1"}),
        ev.StateDelta(delta=[]),
        *text("m2", "it says data"),
    ]
    view = applied(started(thread), events)
    thread += [
        answer("m1", "let me look", ToolCall("c1", "read_file", '{"path": "x"}')),
        tool("r1", "c1", "data"),
        answer("m2", "it says data"),
    ]
    assert view.needs_snapshot(thread, []) is False
    # the same calls' arguments, but not as streamed: the client's differ
    thread[-3] = answer("m1", "let me look", ToolCall("c1", "read_file", '{"path":"x"}'))
    assert view.needs_snapshot(thread, []) is True


def test_a_pending_frontend_call():
    thread = held()
    view = applied(started(thread), call("c1", "pick_color", "m1", '{"prompt": "?"}'))
    thread.append(answer("m1", "", ToolCall("c1", "pick_color", '{"prompt": "?"}')))
    assert view.needs_snapshot(thread, []) is False
    assert view.held_messages()[0] == {
        "id": "m1",
        "role": "assistant",
        "toolCalls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "pick_color", "arguments": '{"prompt": "?"}'},
            }
        ],
    }


def confirm_events(parent: str | None) -> tuple[list[ev.Event], dict]:
    arguments = json.dumps({"toolCallId": "c1", "tool": "write_file"})
    confirm = {
        "id": "confirm-c1",
        "type": "function",
        "function": {"name": "confirm_tool_call", "arguments": arguments},
    }
    events = [
        *call("c1", "write_file", "m1", '{"path": "n.txt"}'),
        *call("confirm-c1", "confirm_tool_call", parent, arguments),
    ]
    return events, confirm


def test_a_pending_confirm_call_goes_where_the_snapshot_puts_it():
    thread = held()
    events, confirm = confirm_events("m1")
    view = applied(started(thread), events)
    thread.append(answer("m1", "", ToolCall("c1", "write_file", '{"path": "n.txt"}')))
    assert view.needs_snapshot(thread, [("m1", confirm)]) is False
    assert view.needs_snapshot(thread, []) is True  # a call the thread does not place


def test_a_confirm_call_without_a_parent_is_not_where_the_snapshot_puts_it():
    thread = held()
    events, confirm = confirm_events(None)
    view = applied(started(thread), events)
    thread.append(answer("m1", "", ToolCall("c1", "write_file", '{"path": "n.txt"}')))
    assert view.needs_snapshot(thread, [(None, confirm)]) is True


@pytest.mark.parametrize(
    "change",
    [
        lambda m: m.__setitem__(slice(0, 2), [Message.user("a summary")]),  # compaction-like
        lambda m: m.insert(1, tool("x", "c0", "interrupted")),  # a repair's insert
        lambda m: m.pop(0),  # one gone
        lambda m: m.__setitem__(slice(None), [Message.user(x.content) for x in list(m)]),
    ],
    ids=["summarised", "inserted", "removed", "read-again"],
)
def test_a_lead_changed_during_the_run_ends_with_the_snapshot(change):
    thread = [*held(), user("u2", "more")]
    view = applied(started(thread), text("m1", "ok"))
    change(thread)
    thread.append(answer("m1", "ok"))
    assert view.needs_snapshot(thread, []) is True


@pytest.mark.parametrize(
    "event",
    [
        ev.ReasoningStart(message_id="r1"),
        ev.ReasoningMessageStart(message_id="r1"),
        ev.MessagesSnapshot(messages=[]),
        ev.Event(),  # one the mirror does not know
    ],
    ids=["reasoning", "reasoning-message", "snapshot", "unknown"],
)
def test_an_event_the_mirror_does_not_know_ends_with_the_snapshot(event):
    thread = held()
    view = applied(started(thread), [*text("m1", "ok"), event])
    thread.append(answer("m1", "ok"))
    assert view.needs_snapshot(thread, []) is True


def test_what_the_client_cannot_build_ends_with_the_snapshot():
    thread = held()
    events = [*call("c1", "read_file", "m1", "{}"), result("r1", "c1", "no")]
    view = applied(started(thread), events)
    failed = tool("r1", "c1", "no", error="no such file")  # AG-UI's ToolMessage.error
    thread += [answer("m1", "", ToolCall("c1", "read_file", "{}")), failed]
    assert view.needs_snapshot(thread, []) is True
    thread[-1] = tool("r1", "c1", "no")
    assert view.needs_snapshot(thread, []) is False


def test_a_message_the_run_added_without_events_ends_with_the_snapshot():
    thread = held()
    view = applied(started(thread), text("m1", "ok"))
    thread += [answer("m1", "ok"), Message.user("a hook's")]
    assert view.needs_snapshot(thread, []) is True


def test_an_event_naming_what_the_thread_held_ends_with_the_snapshot():
    """The client would change the thread's message or call of that id, not add one."""
    first = answer("a0", "", ToolCall("c0", "read_file", "{}"))
    thread = [user("u1"), first, tool("r0", "c0", "x")]
    view = applied(started(thread), call("c0", "read_file", "m1", "{}"))  # a reused call id
    thread.append(answer("m1", "", ToolCall("c0", "read_file", "{}")))
    assert view.needs_snapshot(thread, []) is True
    thread = thread[:3]
    view = applied(started(thread), text("a0", "again"))
    assert view.needs_snapshot([*thread, answer("a0", "again")], []) is True


def test_the_clients_view_at_the_start_decides_first():
    thread = held()
    view = applied(started(thread, own=False), text("m1", "ok"))
    assert view.needs_snapshot([*thread, answer("m1", "ok")], []) is True
    # events before the start that touched messages: the client's own history is not it
    view = ClientView()
    view.apply(result("r9", "c9", "ran in the prelude"))
    view.start(Conversation(thread), snapshot=False, own=True)
    applied(view, text("m1", "ok"))
    assert view.needs_snapshot([*thread, answer("m1", "ok")], []) is True
    # ... unless a start snapshot gave it the thread's messages since
    view = ClientView()
    view.apply(result("r9", "c9", "ran in the prelude"))
    view.start(Conversation(thread), snapshot=True, own=False)
    applied(view, text("m1", "ok"))
    assert view.needs_snapshot([*thread, answer("m1", "ok")], []) is False
    # a view never started (the prelude failed) does not know
    assert ClientView().needs_snapshot(thread, []) is True


def test_the_runs_own_messages_are_not_taken_for_the_threads_once_indexed():
    """The conversation's index comes to hold the run's messages as they are added (a
    repair, a request's images ask it during the run): they stay the run's own."""
    conversation = Conversation(held())
    view = ClientView()
    view.start(conversation, snapshot=False, own=True)
    for event in call("c1", "read_file", "m1", "{}"):
        view.apply(event)
    conversation.add(answer("m1", "", ToolCall("c1", "read_file", "{}")))
    conversation.indexed()
    view.apply(result("r1", "c1", "data"))
    conversation.add(tool("r1", "c1", "data"))
    conversation.indexed()
    for event in text("m2", "it says data"):
        view.apply(event)
    conversation.add(answer("m2", "it says data"))
    assert view.needs_snapshot(conversation.messages, []) is False


def test_held_results_put_in_order_during_the_run_end_with_the_snapshot():
    """The lead told unchanged by its length and last message: a repair that puts held
    results in the order of their calls changes no length, and the run's own messages
    are still what the client built."""
    calls = [ToolCall("c1", "pick_color", "{}"), ToolCall("c2", "pick_size", "{}")]
    thread = [user("u1"), answer("a0", "", *calls), tool("r2", "c2", "M"), tool("r1", "c1", "red")]
    view = applied(started(thread), text("m1", "ok"))
    thread[2:4] = [thread[3], thread[2]]
    thread.append(answer("m1", "ok"))
    assert view.needs_snapshot(thread, []) is True
    thread[2:4] = [thread[3], thread[2]]  # as they were: nothing to send
    assert view.needs_snapshot(thread, []) is False


def relay_after(events: list[ev.Event], thread: list[Message]) -> Relay:
    """A served run's relay that streamed `events` after its start on `thread`."""
    relay = Relay()
    relay.thread = lambda: thread
    relay.snapshot = lambda: "SNAPSHOT"
    relay.view = ClientView()
    relay.handle(ev.RunStarted(thread_id="t", run_id="r"))
    relay.view.start(Conversation(thread), snapshot=False, own=True)
    for event in events:
        relay.handle(event)
    return relay


def sent(relay: Relay) -> list[str]:
    out = []
    while not relay.queue.empty():
        item = relay.queue.get_nowait()
        out.append("SNAPSHOT" if item == "SNAPSHOT" else json.loads(item[len("data: ") :])["type"])
    return out


def test_the_relay_ends_a_run_with_the_snapshot_only_when_needed():
    thread = held()
    relay = relay_after(text("m1", "ok"), thread)
    thread.append(answer("m1", "ok"))
    relay.handle(ev.RunFinished(thread_id="t", run_id="r"))
    relay.end(None)
    assert sent(relay)[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    # cut short mid-answer: the relay closes the message, the client has what the thread has
    thread = held()
    relay = relay_after(text("m1", "o")[:2], thread)
    thread.append(answer("m1", "o"))
    relay.handle(ev.RunFinished(thread_id="t", run_id="r"))
    relay.end(None)
    assert sent(relay)[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]


def test_a_run_error_ends_with_the_snapshot_whatever_the_client_holds():
    thread = held()
    relay = relay_after(text("m1", "ok"), thread)
    thread.append(answer("m1", "ok"))
    relay.handle(ev.RunError(message="the provider failed"))
    relay.end(None)
    assert sent(relay)[-2:] == ["SNAPSHOT", "RUN_ERROR"]
    # a store that failed as the run ended turns its RUN_FINISHED into a RUN_ERROR: with it
    thread = held()
    relay = relay_after(text("m1", "ok"), thread)
    thread.append(answer("m1", "ok"))
    relay.handle(ev.RunFinished(thread_id="t", run_id="r"))
    relay.end("the store is unavailable")
    assert sent(relay)[-2:] == ["SNAPSHOT", "RUN_ERROR"]


def test_a_relay_lets_go_of_its_mirror_once_the_run_has_ended():
    """The mirror holds the thread's messages as they were at the start; a run's parts are
    reference cycles, so kept by the relay it would live on until the collector ran (and
    be traversed by it) at every later run's cost."""
    thread = held()
    relay = relay_after(text("m1", "ok"), thread)
    view = weakref.ref(relay.view)
    thread.append(answer("m1", "ok"))
    relay.handle(ev.RunFinished(thread_id="t", run_id="r"))
    relay.end(None)
    assert sent(relay)[-2:] == ["TEXT_MESSAGE_END", "RUN_FINISHED"]
    assert view() is None  # freed when the run ended, while the relay itself lives on
