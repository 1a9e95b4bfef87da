"""A served thread: its session on disk, and what a new RunAgentInput adds to it.

The session is the thread's memory, so any process that can read the sessions directory can
continue a thread. A client sends its whole history each run; only what the session has not
seen is added: new user messages, results of the client's own (frontend) tools, and answers
to `confirm_tool_call`.

Between runs the server keeps a thread's session in memory (KeptThreads): a run on it reads
only what its file gained since (another process's turns), not the whole thread again, and
its messages' wire encoding (agentcli.agui.snapshot)."""

from __future__ import annotations

import hashlib
import json
import re
import weakref
from collections import OrderedDict
from pathlib import Path
from typing import Any

from agentcli.agui.snapshot import SnapshotWire
from agentcli.agui.wire import CONFIRM_PREFIX, message_from_sdk, text_of
from agentcli.conversation.images import DEFAULT_MAX_BYTES
from agentcli.conversation.messages import Conversation, Message, ToolCall
from agentcli.records import dataclass, field
from agentcli.risk import Decision
from agentcli.sessions.session import Session
from agentcli.sessions.store import sessions_dir

_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,95}")


def session_id_for(thread_id: str) -> str:
    """A thread's session id: readable when the threadId is a plain name, hashed otherwise
    (the id becomes a file name). Prefixed, so a client cannot name a CLI session."""
    if _SAFE.fullmatch(thread_id):
        return f"thread-{thread_id}"
    return "thread-" + hashlib.sha256(thread_id.encode()).hexdigest()[:32]


def open_thread(
    thread_id: str, workspace: Path, model: str, image_limit: int = DEFAULT_MAX_BYTES
) -> Session:
    """The thread's session: continued when it is on disk (its images within
    `image_limit` read, to be sent on), new otherwise."""
    session_id = session_id_for(thread_id)
    path = sessions_dir() / f"{session_id}.jsonl"
    if path.exists():
        # No waiting for another writer: a wait here would hold up every run of the server.
        return Session.open(path, lock_wait=0, images=image_limit)
    session = Session.create(workspace, model, session_id=session_id)
    session.image_limit = image_limit  # what another process appends, read by catch_up
    return session


KEPT_THREADS = 64  # sessions kept between runs; the least recently run leave first


class KeptThreads:
    """Served threads' sessions kept in memory between their runs. `take` and `keep` are
    for the event loop; `open` reads files, for a worker thread."""

    def __init__(self, size: int = KEPT_THREADS) -> None:
        self.size = size
        self.kept: OrderedDict[str, Session] = OrderedDict()
        self.wires: dict[str, SnapshotWire] = {}  # a thread's, while kept or running

    def take(self, thread_id: str) -> Session | None:
        """The thread's kept session, no longer kept (a run has it)."""
        return self.kept.pop(thread_id, None)

    def wire(self, thread_id: str) -> SnapshotWire:
        """The thread's encoded messages (new for a thread not kept)."""
        return self.wires.setdefault(thread_id, SnapshotWire())

    def keep(self, thread_id: str, session: Session) -> None:
        self.kept[thread_id] = session
        self.kept.move_to_end(thread_id)
        while len(self.kept) > self.size:
            gone, _ = self.kept.popitem(last=False)
            self.wires.pop(gone, None)

    def drop(self, thread_id: str) -> None:
        self.kept.pop(thread_id, None)
        self.wires.pop(thread_id, None)

    @staticmethod
    def open(
        thread_id: str,
        kept: Session | None,
        workspace: Path,
        model: str,
        image_limit: int = DEFAULT_MAX_BYTES,
    ) -> Session:
        """The kept session brought up to date, or (none kept, or its file replaced or cut)
        the thread's session read from its file."""
        if kept is not None:
            try:
                if kept.catch_up(lock_wait=0):
                    return kept
            except OSError:
                pass  # opened anew below, which says what is wrong with the file
        return open_thread(thread_id, workspace, model, image_limit)


@dataclass(slots=True)
class Plan:
    """What a run adds before the model is asked again."""

    results: list[Message] = field(default_factory=list)  # answers to pending client calls
    approvals: dict[str, Decision] = field(default_factory=dict)  # call id -> the answer
    approved_calls: list[ToolCall] = field(default_factory=list)
    messages: list[Message] = field(default_factory=list)  # new user (or imported) messages
    notes: list[str] = field(default_factory=list)  # system/developer messages: context
    state: Any = None  # the run's ThreadState (agentcli.agui.state)
    forwarded: Any = None  # the client's forwardedProps
    # The client holds messages the thread keeps none of (system, developer, other roles,
    # answers to confirm_tool_call): its messages are not the thread's, even by their ids.
    unkept: bool = False
    planned: int = 0  # leading client messages the thread's last run planned (ClientLead)
    lead: ClientLead | None = None  # the thread's, told what this run planned once added

    @property
    def empty(self) -> bool:
        return not (self.results or self.approvals or self.messages)


class ClientLead:
    """The client messages a thread's last run planned, and what plan_run and same_history
    made of them. A client sends its whole history each run; the lead it sends again is
    the very objects it validated to before (agentcli.agui.run_inputs keeps them), so a
    list compare in C tells it, and only what follows is looked at. It holds for the same
    conversation only while that has only grown (its index not made again): a thread read
    anew, rewound or edited is planned whole."""

    def __init__(self) -> None:
        # Not held: a thread no longer kept must not stay in memory for this.
        self._conversation: weakref.ref[Conversation] | None = None
        self._generation = -1  # its index's when recorded: any change but appending moves it
        self._messages: list[Any] = []  # the client's messages planned
        self._notes: list[str] = []  # their system and developer messages' text
        self._unkept = False  # whether they hold what the thread keeps none of (Plan.unkept)
        self._keys: list[tuple[str, str | None]] = []  # same_history's keys of them
        self._matched = 0  # of those, how many lead the thread's keys too (all, or none)

    def planned(self, conversation: Conversation, messages: list[Any]) -> int:
        """How many leading `messages` were planned for this thread as it is now."""
        count = len(self._messages)
        if (
            not count
            or self._conversation is None
            or conversation is not self._conversation()
            or conversation.indexed().generation != self._generation
            or len(messages) < count
        ):
            return 0
        return count if messages[:count] == self._messages else 0

    def notes(self, planned: int) -> list[str]:
        return list(self._notes) if planned else []

    def unkept(self, planned: int) -> bool:
        return self._unkept if planned else False

    def matched(self, planned: int) -> int:
        """How many leading keys of the client's messages and the thread's are the same: the
        thread's (only grown since) were the client's when the last run recorded them."""
        return self._matched if planned else 0

    def keys(self, messages: list[Any], planned: int) -> list[tuple[str, str | None]]:
        """same_history's keys of the client's `messages`, of which `planned` lead."""
        lead = self._keys if planned else []
        return [*lead, *client_keys(messages[planned:])]

    def record(
        self,
        conversation: Conversation,
        messages: list[Any],
        plan: Plan,
        keys: list[tuple[str, str | None]],
        same: bool,
    ) -> None:
        """The run planned `messages` (as `plan`) and added what was new to `conversation`;
        `same`: their keys were the thread's then (same_history, no calls left out)."""
        self._conversation = weakref.ref(conversation)
        self._generation = conversation.indexed().generation
        self._messages, self._notes, self._keys = messages, list(plan.notes), keys
        self._unkept = plan.unkept
        self._matched = len(keys) if same else 0


def plan_run(
    conversation: Conversation,
    messages: list[Any],
    server_tools: set[str],
    lead: ClientLead | None = None,
) -> Plan:
    """Sorts the client's messages. A result is taken only for a call of a client tool: a
    call of the server's own tools gets its result here, under the policy, never from the
    client (which may only approve or deny it through `confirm_tool_call`). The server's
    session is the thread's memory: of a known thread, only user messages after what the
    session has are new (a client may have renamed the ids); a new thread takes the
    client's whole history. With `lead`, the messages the thread's last run planned are
    not looked at again (their notes are kept)."""
    plan = Plan()
    index = conversation.indexed()  # kept with the thread: no pass over it
    known, ours = index.ids, index.calls
    answered = _Answered(index.answered)
    fresh = set(map(id, _fresh(conversation, messages, known, ours)))
    imported: set[str] = set()
    if lead is not None:
        plan.lead = lead
        plan.planned = lead.planned(conversation, messages)
        plan.notes = lead.notes(plan.planned)
        plan.unkept = lead.unkept(plan.planned)
    for message in messages[plan.planned :] if plan.planned else messages:
        role = message.role
        if role in ("system", "developer"):
            plan.notes.append(text_of(message.content))
            plan.unkept = True
            continue
        if role not in ("user", "assistant", "tool"):
            plan.unkept = True
            continue  # nothing agentcli keeps (message_from_sdk gives None)
        # Converted only when taken: a client sends its whole history each run, and
        # converting every message of it would make each run O(thread).
        if role == "tool":
            call_id = message.tool_call_id
            if call_id in answered:
                continue
            if call_id.startswith(CONFIRM_PREFIX):
                plan.unkept = True
                target = ours.get(call_id[len(CONFIRM_PREFIX) :])
                if target is not None and target.name in server_tools and target.id not in answered:
                    plan.approvals[target.id] = confirmation(message)
                    plan.approved_calls.append(target)
                    answered.add(target.id)
                continue
            if call_id in ours and ours[call_id].name not in server_tools:
                plan.results.append(_converted(message))
            elif call_id in imported:
                plan.messages.append(_converted(message))
            else:
                continue  # a result for a call nobody here knows
            answered.add(call_id)
            continue
        if id(message) not in fresh or (role == "assistant" and conversation.messages):
            continue  # seen already; and a client never adds assistant turns to a thread
        converted = _converted(message)
        imported.update(c.id for c in converted.tool_calls)
        plan.messages.append(converted)
    return plan


class _Answered:
    """The thread's answered calls and those this run answers, without copying the
    thread's set."""

    def __init__(self, thread: set[str]) -> None:
        self._thread = thread
        self._now: set[str] = set()

    def __contains__(self, call_id: object) -> bool:
        return call_id in self._thread or call_id in self._now

    def add(self, call_id: str) -> None:
        self._now.add(call_id)


def _converted(message: Any) -> Message:
    converted = message_from_sdk(message)
    assert converted is not None  # a user, assistant or tool message
    return converted


def _fresh(
    conversation: Conversation, messages: list[Any], known: set[str], ours: dict[str, ToolCall]
) -> list[Any]:
    """The client's messages after the last one the session already has."""
    if not conversation.messages:
        return messages
    last = -1
    for position in range(len(messages) - 1, -1, -1):  # from the end: the last one is wanted
        message = messages[position]
        # By role, not getattr: a missing field is the SDK model's slow path.
        calls = (message.tool_calls if message.role == "assistant" else None) or []
        if message.id in known or any(c.id in ours for c in calls):
            last = position
            break
    if last < 0:  # ids all renamed: what follows the client's last assistant message
        roles = [m.role for m in messages]
        last = max((i for i, role in enumerate(roles) if role == "assistant"), default=-1)
    return messages[last + 1 :]


def same_history(
    client: list[Any],
    thread: list[Message],
    running: set[str],
    keys: list[tuple[str, str | None]] | None = None,
    client_keyed: list[tuple[str, str | None]] | None = None,
    matched: int = 0,
) -> bool:
    """Whether the client's messages are the thread's (by id, and tool results by their
    call), leaving out what the thread does not keep as messages: system and developer
    messages (context) and the `confirm_tool_call` exchange (approvals); and the results
    of the `running` calls (approved calls this run runs: their events show them).
    In any order: a reloaded page that @ag-ui/client merges the start snapshot into keeps
    its own message first, and sending it the snapshot again each run would change
    nothing it holds. `keys`: the thread's own, kept with it (MessageIndex.keys), and
    `client_keyed`: the client's (client_keys), when the caller has them; `matched`: how
    many leading keys of both are known to be the same ones (ClientLead.matched), not
    compared again."""
    theirs = client_keys(client) if client_keyed is None else client_keyed
    if not running and len(theirs) != len(thread):  # the usual answer, without a pass
        return False
    if not running and keys is not None:
        return _same_keys(theirs[matched:], keys[matched:])
    ours = [
        ("tool", m.tool_call_id) if m.role == "tool" else (m.role, m.id)
        for m in thread
        if not (m.role == "tool" and m.tool_call_id in running)
    ]
    return _same_keys(theirs, ours)


def _same_keys(theirs: list[Any], ours: list[Any]) -> bool:
    """The same keys, in the same order (a compare in C) or in another."""
    return theirs == ours or sorted(theirs, key=str) == sorted(ours, key=str)


def client_keys(client: list[Any]) -> list[tuple[str, str | None]]:
    """What same_history compares of the client's messages: (role, id), or ("tool", the call
    it answers), leaving out context and approvals."""
    # Written out, not a call a message: a served thread may be thousands long.
    return [
        ("tool", m.tool_call_id) if m.role == "tool" else (m.role, m.id)
        for m in client
        if m.role in ("user", "assistant", "tool")
        and not (m.role == "tool" and m.tool_call_id.startswith(CONFIRM_PREFIX))
    ]


_YES = ("approve", "approved", "allow", "allowed", "yes", "y", "true", "ok", "confirm")


def confirmation(message: Any) -> Decision:
    """The client's answer to `confirm_tool_call`: approve, or (for anything else, an
    error included) deny. `{"approved": bool, "reason"?}`, or a word such as "approved"."""
    content = text_of(message.content).strip()
    approved, reason = False, ""
    try:
        value = json.loads(content)
    except ValueError:
        value = content
    if isinstance(value, dict):
        decision = value.get("approved", value.get("decision"))
        approved = decision is True or (isinstance(decision, str) and decision.lower() in _YES)
        reason = str(value.get("reason") or "")
    elif isinstance(value, bool):
        approved = value
    elif isinstance(value, str):
        approved = value.lower().rstrip(".!") in _YES
    if message.error:
        approved, reason = False, reason or str(message.error)
    if approved:
        return Decision("allow", "user", "approved by the user through the client")
    said = f"; the user said: {reason}" if reason else ""
    return Decision("deny", "user", f"the user denied it{said}")
