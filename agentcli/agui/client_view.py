"""What a client that applies a served run's events as `@ag-ui/client` does (its
`defaultApplyEvents`) holds of the run's new messages, to tell whether the run must end
with a MESSAGES_SNAPSHOT: only when that client could not have the thread's messages from
the run's own events.

The mirror is conservative: it models TEXT_MESSAGE_*, TOOL_CALL_* and TOOL_CALL_RESULT as
that client applies them (AG-UI's wire form of messages, as `wire.message_to_wire` gives
them; the events' `metadata`, which the client also keeps on what it builds, is no part of
a message here), takes the events that never touch messages (run, step, state, CUSTOM) as
such, and counts anything else (reasoning, activity, an event it does not know) as "the
client's messages are not known": then the snapshot is sent. So is it when an event names
a message or a call the thread held before the run (the client would change that one).
The cost is the run's: its events and new messages, never a pass over the thread."""

from __future__ import annotations

from typing import Any

from agentcli.agui.snapshot import thread_messages
from agentcli.conversation import events as ev
from agentcli.conversation import watch
from agentcli.conversation.index import MessageIndex
from agentcli.conversation.messages import Conversation, Message

# Events that leave a client's messages as they are (@ag-ui/client: subscribers only).
_NO_MESSAGES = (
    ev.RunStarted,
    ev.RunFinished,
    ev.RunError,
    ev.StepStarted,
    ev.StepFinished,
    ev.StateSnapshot,
    ev.StateDelta,
    ev.Custom,
)


class ClientView:
    """One run's mirror. Events before `start` (the point where the client's view of the
    thread is known) are not its messages' (superseded by a start snapshot, or, with the
    client's own history, none there are: `start` is told if any touched messages).

    Which ids the thread held is asked of its conversation's index (kept as it grows, so
    no pass over the thread), which also comes to hold the run's own messages as they are
    added: an id counts as held only when it is not one the run's events made."""

    def __init__(self) -> None:
        self.index: MessageIndex | None = None
        self.started = False
        self.established = False  # the client held the thread's messages at `start`
        self.unknown = False  # an event touched messages in a way not mirrored
        self.touched = False  # an event before `start` touched messages
        self._lead: list[Message] = []  # the thread's messages at `start`,
        self._edits = -1  # and the edits of watched messages then
        self.messages: list[dict[str, Any]] = []  # the run's new messages, as the client's
        self._by_id: dict[str, dict[str, Any]] = {}
        self._calls: dict[str, dict[str, Any]] = {}  # call id -> the call, in its message
        self._text: dict[str, list[str]] = {}  # message id -> its content's pieces
        self._args: dict[str, list[str]] = {}  # call id -> its arguments' pieces

    def start(self, conversation: Conversation, *, snapshot: bool, own: bool) -> None:
        """The client's view is known from here: the thread's messages when they were
        just sent it (`snapshot`), or when its `own` history is the thread's and no event
        before changed it."""
        self.index = conversation.indexed()
        messages = conversation.messages
        self.established = snapshot or (own and not self.touched)
        self._lead = list(messages)
        self._edits = watch.edits()
        self.started = True

    def apply(self, event: ev.Event) -> None:
        if isinstance(event, _NO_MESSAGES):
            return
        if not self.started:
            self.touched = True
            return
        if isinstance(event, ev.TextMessageContent):  # most events: first
            self._content(event.message_id, event.delta)
        elif isinstance(event, ev.TextMessageStart):
            self._text_start(event)
        elif isinstance(event, ev.TextMessageEnd):
            self._known(event.message_id)
        elif isinstance(event, ev.ToolCallStart):
            self._call_start(event)
        elif isinstance(event, ev.ToolCallArgs):
            self._call_args(event)
        elif isinstance(event, ev.ToolCallEnd):
            if self._held_call(event.tool_call_id):
                self.unknown = True
        elif isinstance(event, ev.ToolCallResult):
            self._result(event)
        else:  # reasoning, a snapshot, anything else: what the client holds is not known
            self.unknown = True

    def _held_message(self, message_id: str) -> bool:
        """Whether the client holds a message of that id from before the run."""
        assert self.index is not None  # started
        return message_id in self.index.ids and message_id not in self._by_id

    def _held_call(self, call_id: str) -> bool:
        assert self.index is not None
        return call_id in self.index.calls and call_id not in self._calls

    def _known(self, message_id: str) -> dict[str, Any] | None:
        """The client's message of that id among the run's (None: it has none, or one the
        thread held before, which is then changed: not mirrored)."""
        if self._held_message(message_id):
            self.unknown = True
            return None
        return self._by_id.get(message_id)

    def _add(self, message: dict[str, Any], at: int | None = None) -> None:
        if message["id"] in self._by_id or self._held_message(message["id"]):
            self.unknown = True  # two messages of one id: the client finds the first
            return
        self._by_id[message["id"]] = message
        if at is None:
            self.messages.append(message)
        else:
            self.messages.insert(at, message)

    def _text_start(self, event: ev.TextMessageStart) -> None:
        if self._known(event.message_id) is None and not self.unknown:
            self._add({"id": event.message_id, "role": event.role, "content": ""})

    def _content(self, message_id: str, delta: Any) -> None:
        message = self._known(message_id)
        if message is None:
            return  # the client warns and leaves its messages as they are
        if not isinstance(delta, str):
            self.unknown = True
            return
        pieces = self._text.get(message_id)
        if pieces is None:
            content = message.get("content")
            pieces = self._text[message_id] = [content if isinstance(content, str) else ""]
        pieces.append(delta)

    def _call_start(self, event: ev.ToolCallStart) -> None:
        call_id, parent = event.tool_call_id, event.parent_message_id
        if self._held_call(call_id):
            self.unknown = True
            return
        known = self._calls.get(call_id)
        if known is not None:  # the client renames the call it has
            known["function"]["name"] = event.tool_call_name
            return
        if parent:
            target = self._known(parent)
            if self.unknown:
                return
            if target is None or target["role"] != "assistant":
                target = {"id": call_id if target else parent, "role": "assistant"}
                self._add(target)
        else:
            target = {"id": call_id, "role": "assistant"}
            self._add(target)
        function = {"name": event.tool_call_name, "arguments": ""}
        call = {"id": call_id, "type": "function", "function": function}
        target.setdefault("toolCalls", []).append(call)
        self._calls[call_id] = call

    def _call_args(self, event: ev.ToolCallArgs) -> None:
        if self._held_call(event.tool_call_id) or not isinstance(event.delta, str):
            self.unknown = True
            return
        if event.tool_call_id in self._calls:
            self._args.setdefault(event.tool_call_id, []).append(event.delta)

    def _result(self, event: ev.ToolCallResult) -> None:
        if self._held_call(event.tool_call_id):
            self.unknown = True  # the client puts it after the thread's message of the call
            return
        message = {
            "id": event.message_id,
            "toolCallId": event.tool_call_id,
            "role": event.role or "tool",
            "content": event.content,
        }
        # After the message of its call and the results that follow it; last without one.
        position = next(
            (
                i
                for i, m in enumerate(self.messages)
                if m["role"] == "assistant"
                and any(c["id"] == event.tool_call_id for c in m.get("toolCalls") or [])
            ),
            None,
        )
        if position is not None:
            position += 1
            while position < len(self.messages) and self.messages[position]["role"] == "tool":
                position += 1
        self._add(message, position)

    def held_messages(self) -> list[dict[str, Any]]:
        """The run's new messages as the client holds them now."""
        for message_id, pieces in self._text.items():
            self._by_id[message_id]["content"] = "".join(pieces)
        for call_id, pieces in self._args.items():
            call = self._calls[call_id]
            call["function"]["arguments"] = "".join(pieces)
        self._text = {k: ["".join(v)] for k, v in self._text.items()}
        self._args = {k: ["".join(v)] for k, v in self._args.items()}
        return self.messages

    def needs_snapshot(
        self, messages: list[Message], confirms: list[tuple[str | None, dict[str, Any]]]
    ) -> bool:
        """Whether the run must end with the thread's messages: the client's view at the
        start was not the thread's, or an event was not mirrored, or the thread's lead
        changed, or what it gained (with the pending confirm calls, placed as the snapshot
        places them) is not what the client built from the events."""
        if not (self.started and self.established) or self.unknown:
            return True
        count = len(self._lead)
        # The lead unchanged: the same messages (one compare of lists in C, about 20 µs
        # for 4,000) and none of them edited (agentcli.conversation.watch).
        if (
            len(messages) < count
            or watch.edits() != self._edits
            or (messages[:count] if len(messages) > count else messages) != self._lead
        ):
            return True
        return thread_messages(messages[count:], confirms) != self.held_messages()
