"""What a remote AG-UI agent sends (`--agent`), checked where it enters: each event against
the `ag-ui-protocol` SDK's own models before agentcli folds, shows or records any of it. A
wrong shape is one ProviderError naming the event type and the field (the run ends with a
provider error); nothing of that event reaches the thread, the screen or the session. An
event type the SDK does not know (a newer protocol's) is left out, as before."""

from __future__ import annotations

from functools import cache
from typing import Any

from agentcli.errors import ProviderError
from agentcli.json_depth import MAX_DEPTH, too_deep
from agentcli.json_kinds import json_kind as _kind_of

_SHOWN_MESSAGE = 160  # characters of the schema's complaint


@cache
def _adapter() -> Any:
    from ag_ui.core import Event  # imported with the first event of the first run
    from pydantic import TypeAdapter

    return TypeAdapter(Event)


@cache
def _known() -> frozenset[str]:
    from ag_ui.core import EventType

    return frozenset(kind.value for kind in EventType)


def checked_event(raw: Any) -> dict[str, Any] | None:
    """`raw` as AG-UI's schema has it (token counts given as "5" become 5; fields the SDK
    does not model pass as they came), or None for an event type it does not know.
    Raises ProviderError for any other shape."""
    from pydantic import ValidationError

    if not isinstance(raw, dict):
        raise ProviderError(
            f"the agent sent an event that is not a JSON object ({_kind_of(raw)}); "
            "the run stops here"
        )
    kind = raw.get("type")
    if not isinstance(kind, str):
        raise ProviderError(
            f"the agent sent an event whose type is {_kind_of(kind)}, not an AG-UI event "
            "type; the run stops here"
        )
    if kind not in _known():
        return None
    # A value nested past what the encoders take would be kept (a state, a session) and
    # fail every run that sends it on; a snapshot's messages are typed, so not walked.
    if kind != "MESSAGES_SNAPSHOT" and too_deep(raw):
        raise ProviderError(_too_deep(kind))
    try:
        model = _adapter().validate_python(raw)
    except ValidationError as error:
        raise ProviderError(describe(kind, raw, error.errors()[0])) from None
    try:
        return model.model_dump(mode="json", by_alias=True, exclude_unset=True)
    except (ValueError, RecursionError):  # pydantic's serializer: past its depth
        raise ProviderError(_too_deep(kind)) from None


def _too_deep(kind: str) -> str:
    return (
        f"the agent sent a {kind} event nested deeper than {MAX_DEPTH} levels; "
        "the run stops here (nothing of that event was recorded)"
    )


def describe(kind: str, raw: dict[str, Any], error: dict[str, Any]) -> str:
    """One line: the event type, the field (as a path into the event) and what is wrong."""
    path, value = _path(raw, tuple(error.get("loc") or ())[1:])
    if error.get("type") == "union_tag_invalid":
        context = error.get("ctx") or {}
        what = (
            f"{context.get('discriminator', 'its tag')} {context.get('tag')!r} is not one AG-UI has"
        )
    elif error.get("type") == "recursion_loop":
        what = "nested too deeply"
    elif error.get("type") == "missing":
        what = "missing"
    else:
        what = f"{error.get('msg', 'wrong')} (it is {_kind_of(value)})"
    what = what[:_SHOWN_MESSAGE]
    where = f"its {path}" if path else "it"
    return (
        f"the agent sent a {kind} event that does not match AG-UI's schema: {where}: {what}; "
        "the run stops here (nothing of that event was recorded)"
    )


def _path(raw: Any, loc: tuple[Any, ...]) -> tuple[str, Any]:
    """The error's place as a path into the event (`messages[0].toolCalls`), leaving out
    the names pydantic gives the branches of a union (a message's role, an op's name)."""
    parts: list[str] = []
    current: Any = raw
    for position, step in enumerate(loc):
        if isinstance(current, dict) and isinstance(step, str) and step in current:
            parts.append(f".{step}" if parts else step)
            current = current[step]
        elif isinstance(current, list) and isinstance(step, int) and 0 <= step < len(current):
            parts.append(f"[{step}]")
            current = current[step]
        elif isinstance(current, dict) and isinstance(step, str) and position == len(loc) - 1:
            parts.append(f".{step}" if parts else step)  # a field that is missing
            current = None
        # anything else is the name of a union's branch (a role, an op), not a field
    return "".join(parts), current
