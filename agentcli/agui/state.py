"""AG-UI shared state: RFC 6902 JSON Patch (the `jsonpatch` library), and for `serve` a
thread's state with the `update_state` tool through which the model changes it. Each
change is a STATE_DELTA event: the client applies it, and the thread's session file
records it, so the state outlives the run (agentcli.sessions.session restores it)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from agentcli.conversation import events as ev
from agentcli.risk import Assessment, Risk
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput

STATE_TOOL = "update_state"
_SHOWN_CHARS = 4000  # of the new state, in the tool's result


class StateError(ValueError):
    """A patch that does not apply to the state."""


def apply_patch(state: Any, delta: list[Any]) -> Any:
    """`state` patched by `delta` (RFC 6902), as a new value."""
    import jsonpatch  # only when state changes

    try:
        return jsonpatch.apply_patch(state, delta, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as error:
        raise StateError(str(error)) from None


def has_state(state: Any) -> bool:
    """Whether a client sent state: AG-UI clients send `{}` when they have none."""
    return state is not None and state != {}


class ThreadState:
    """The state of one served thread during a run."""

    def __init__(self, state: Any, emit: Callable[[ev.Event], None]) -> None:
        self.value = copy.deepcopy(state)
        self.emit = emit

    def patch(self, delta: list[Any]) -> None:
        self.value = apply_patch(self.value, delta)
        self.emit(ev.StateDelta(delta=delta))


_OPERATION = {
    "type": "object",
    "properties": {
        "op": {"type": "string", "enum": ["add", "remove", "replace", "move", "copy", "test"]},
        "path": {"type": "string", "description": "A JSON Pointer, such as /items/0/done"},
        "value": {"description": "For add, replace and test"},
        "from": {"type": "string", "description": "For move and copy"},
    },
    "required": ["op", "path"],
}


class UpdateStateTool(Tool):
    """Offered in a served run that has state: the model changes the application's state
    (shown to it as context) with JSON Patch operations; the client sees each change."""

    name = STATE_TOOL
    description = (
        "Change the application's shared state (shown in the context as 'Application "
        "state') with RFC 6902 JSON Patch operations, applied in order, all or none. The "
        "application sees the change at once. Returns the new state."
    )
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {"patch": {"type": "array", "items": _OPERATION, "minItems": 1}},
        "required": ["patch"],
        "additionalProperties": False,
    }
    source = "serve"
    risk_summary = "low"

    def __init__(self, state: ThreadState) -> None:
        self.state = state

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "changes the application's state, not files or commands")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        try:
            self.state.patch(list(args["patch"]))
        except StateError as error:
            raise ToolFailure(f"the patch does not apply, nothing changed: {error}") from None
        shown = json.dumps(self.state.value, ensure_ascii=False, default=str)
        if len(shown) > _SHOWN_CHARS:
            shown = shown[:_SHOWN_CHARS] + " [cut]"
        count = len(args["patch"])
        return ToolOutput(content=f"new state: {shown}", summary=f"{count} change(s)")
