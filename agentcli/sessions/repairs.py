"""A recorded message made sendable again: whatever an older version, another writer or a
hand edit left in a session, `--continue` must not be refused by the model or the remote
agent on every later run. What can be repaired is (tool-call arguments given as an object
become their JSON text, a call without an id gets one); what cannot be sent on is left out
(a call without a name, a provider's stored blocks of the wrong shape, an AG-UI record the
protocol's models refuse); each repair is one `note`, said as a warning with its line."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from agentcli.conversation.messages import new_id
from agentcli.text.decoding import all_finite

# Message.extra keys written by the providers (agentcli.agui.thread_view.EXTRA_KEY,
# agentcli.providers.anthropic.CONTENT_KEY); named here so reading a session imports neither.
AGUI_KEY = "agui"
ANTHROPIC_KEY = "anthropic_content"

Note = Callable[[str], None]


def repaired(data: dict[str, Any], note: Note) -> dict[str, Any]:
    """`data` (a recorded message, its role and texts already checked) with its tool calls
    and provider parts in shapes that can be sent on; `data` itself is not changed."""
    out = dict(data)
    if "toolCalls" in data:
        out["toolCalls"] = _calls(data["toolCalls"], note)
    extra = data.get("extra")
    if isinstance(extra, dict) and (AGUI_KEY in extra or ANTHROPIC_KEY in extra):
        out["extra"] = _extra(extra, note)
    return out


def _calls(calls: Any, note: Note) -> list[dict[str, Any]]:
    if not isinstance(calls, list):
        note("its toolCalls is not a list; the calls are left out")
        return []
    kept = []
    for call in calls:
        if not isinstance(call, dict):
            note("a tool call that is not an object is left out")
            continue
        name = call.get("name")
        if not isinstance(name, str) or not name:
            note("a tool call without a name is left out")
            continue
        call = dict(call)
        if not isinstance(call.get("id"), str) or not call["id"]:
            call["id"] = new_id("call")
            note(f"a call of {name} without an id was given one")
        arguments = call.get("arguments", "")
        if not isinstance(arguments, str):
            call["arguments"] = _json_text(arguments)
            note(f"the arguments of a call of {name} were not text: sent as their JSON")
        kept.append(call)
    return kept


def _json_text(value: Any) -> str:
    try:
        return json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError):
        return "{}"


def _extra(extra: dict[str, Any], note: Note) -> dict[str, Any]:
    out = dict(extra)
    if ANTHROPIC_KEY in out and not _blocks_ok(out[ANTHROPIC_KEY]):
        del out[ANTHROPIC_KEY]
        note("its stored Anthropic content blocks are of the wrong shape; left out")
    elif ANTHROPIC_KEY in out and not all_finite(out[ANTHROPIC_KEY]):
        # An older agentcli kept a stream's NaN or Infinity: no request can carry it.
        del out[ANTHROPIC_KEY]
        note("its stored Anthropic content blocks hold NaN or Infinity, not JSON; left out")
    if AGUI_KEY in out and not all_finite(out[AGUI_KEY]):
        del out[AGUI_KEY]
        note("its AG-UI record holds NaN or Infinity, not JSON; left out")
    if AGUI_KEY in out:
        record = agui_record(out[AGUI_KEY], note)
        if record is None:
            del out[AGUI_KEY]
        else:
            out[AGUI_KEY] = record
    return out


def _blocks_ok(blocks: Any) -> bool:
    return isinstance(blocks, list) and all(
        isinstance(b, dict) and isinstance(b.get("type"), str) for b in blocks
    )


def agui_record(record: Any, note: Note) -> dict[str, Any] | None:
    """What a run of a remote agent added (agentcli.agui.thread_view.added), checked by
    the `ag-ui-protocol` models the next run is sent in: arguments given as objects are
    repaired; a record still refused is left out (the agent is then sent agentcli's own
    view of those turns)."""
    why = "its AG-UI record (what the remote agent added) is of the wrong shape"
    keep = record.get("keep") if isinstance(record, dict) else None
    messages = record.get("messages") if isinstance(record, dict) else None
    if isinstance(keep, bool) or not isinstance(keep, int) or keep < 0:
        note(f"{why} (keep); left out")
        return None
    if not isinstance(messages, list):
        note(f"{why} (messages); left out")
        return None
    fixed = copy.deepcopy(record)
    for message in fixed["messages"]:
        for call in (message.get("toolCalls") if isinstance(message, dict) else None) or []:
            function = call.get("function") if isinstance(call, dict) else None
            if isinstance(function, dict) and not isinstance(function.get("arguments"), str):
                function["arguments"] = _json_text(function.get("arguments"))
                note("the arguments of a remote agent's call were not text: sent as their JSON")
    problem = _agui_problem(fixed["messages"])
    if problem is not None:
        note(f"{why} ({problem}); left out")
        return None
    return fixed


def _agui_problem(messages: list[Any]) -> str | None:
    from ag_ui.core import Message
    from pydantic import TypeAdapter, ValidationError  # only for sessions of --agent

    adapter = TypeAdapter(list[Message])
    try:
        adapter.validate_python(messages)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(step) for step in first.get("loc", ()))
        return f"{where}: {first.get('msg', 'wrong')}"
    return None
