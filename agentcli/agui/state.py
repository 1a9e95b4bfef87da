"""AG-UI shared state: RFC 6902 JSON Patch (the `jsonpatch` library), and for `serve` a
thread's state with the `update_state` tool through which the model changes it. Each
change is a STATE_DELTA event: the client applies it, and the thread's session file
records it, so the state outlives the run (agentcli.sessions.session restores it).

`limits.state` bounds a state's JSON: a patch whose result would pass it is refused whole
before it is built, since a few `copy` ops double the state each (20 of them turn 50
bytes into 50 MB)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

from agentcli.conversation import events as ev
from agentcli.json_depth import MAX_DEPTH, too_deep
from agentcli.risk import Assessment, Risk
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput

STATE_TOOL = "update_state"
_SHOWN_CHARS = 4000  # of the new state, in the tool's result
DEFAULT_LIMIT = 4 * 1024 * 1024  # limits.state's default (agentcli.config.schema)
_RECOUNTS = 4  # exact measures of the state within one patch, when the estimate is near


class StateError(ValueError):
    """A patch that does not apply to the state."""


class StateTooLarge(StateError):
    """A patch whose result would pass limits.state."""


def json_size(value: Any) -> int:
    """Bytes of `value` as compact JSON (UTF-8)."""
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return len(text.encode("utf-8", "surrogatepass"))


def apply_patch(state: Any, delta: list[Any]) -> Any:
    """`state` patched by `delta` (RFC 6902), as a new value."""
    import jsonpatch  # only when state changes

    try:
        return jsonpatch.apply_patch(state, delta, in_place=False)
    except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as error:
        raise StateError(str(error)) from None


def apply_bounded(
    state: Any, delta: list[Any], limit: int, size: int | None = None
) -> tuple[Any, int]:
    """`state` patched by `delta`, and the result's size, refused (StateTooLarge) before
    any op could take it past `limit` bytes. The state is measured once (or `size` is its
    known size), each op adds at most what it brings (its value, or for `copy` the part it
    copies, which is within the limit), and the result is measured once; only an estimate
    that reaches the limit is checked against the state itself (at most _RECOUNTS times)."""
    import jsonpatch  # only when state changes

    estimate = json_size(state) if size is None else size
    recounts = 0
    document = copy.deepcopy(state)
    for number, operation in enumerate(delta, 1):
        growth = _growth(document, operation)
        if estimate + growth > limit and recounts < _RECOUNTS:  # near: measure exactly
            estimate, recounts = json_size(document), recounts + 1
            growth -= _replaced(document, operation)
        if estimate + growth > limit:
            raise StateTooLarge(_too_large(limit, f"its operation {number}"))
        try:
            document = jsonpatch.apply_patch(document, [operation], in_place=True)
        except (jsonpatch.JsonPatchException, jsonpatch.JsonPointerException, TypeError) as error:
            raise StateError(str(error)) from None
        estimate += growth
    result = json_size(document)
    if result > limit:
        raise StateTooLarge(_too_large(limit, "it"))
    if too_deep(document):  # each op may nest a value in another: bounded as a whole
        raise StateTooLarge(
            f"it would nest the state deeper than {MAX_DEPTH} levels; nothing changed: "
            "keep the state flatter"
        )
    return document, result


def _too_large(limit: int, what: str) -> str:
    return (
        f"{what} would take the state past limits.state ({limit} bytes of JSON); nothing "
        "changed: keep the state smaller (remove what is no longer needed)"
    )


def _growth(document: Any, operation: Any) -> int:
    """At most how many bytes of JSON one op adds: its value, or the part a copy copies,
    and the key its path names (escaped, with quotes, colon and comma)."""
    if not isinstance(operation, dict):
        return 0  # the patch does not apply: jsonpatch says why
    kind = operation.get("op")
    key = 6 * len(str(operation.get("path", ""))) + 4
    if kind in ("add", "replace"):
        return json_size(operation.get("value")) + key
    if kind == "copy":
        import jsonpointer

        try:
            part = jsonpointer.resolve_pointer(document, str(operation.get("from", "")))
        except (jsonpointer.JsonPointerException, TypeError):
            return 0
        return json_size(part) + key
    if kind == "move":
        return key
    return 0


def _replaced(document: Any, operation: Any) -> int:
    """Bytes of what a `replace` op takes out (0 for any other op)."""
    if not isinstance(operation, dict) or operation.get("op") != "replace":
        return 0
    import jsonpointer

    try:
        return json_size(jsonpointer.resolve_pointer(document, str(operation.get("path", ""))))
    except (jsonpointer.JsonPointerException, TypeError):
        return 0


def has_state(state: Any) -> bool:
    """Whether a client sent state: AG-UI clients send `{}` when they have none."""
    return state is not None and state != {}


class ThreadState:
    """The state of one served thread during a run."""

    def __init__(
        self, state: Any, emit: Callable[[ev.Event], None], limit: int = DEFAULT_LIMIT
    ) -> None:
        self.value = copy.deepcopy(state)
        self.emit = emit
        self.limit = limit
        self.size: int | None = None  # bytes of the value's JSON, once measured

    def patch(self, delta: list[Any]) -> None:
        """Applied whole, or refused whole (StateError) with nothing changed."""
        self.value, self.size = apply_bounded(self.value, delta, self.limit, self.size)
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
        except StateTooLarge as error:
            raise ToolFailure(f"the patch is refused: {error}") from None
        except StateError as error:
            raise ToolFailure(f"the patch does not apply, nothing changed: {error}") from None
        shown = json.dumps(self.state.value, ensure_ascii=False, default=str)
        if len(shown) > _SHOWN_CHARS:
            shown = shown[:_SHOWN_CHARS] + " [cut]"
        count = len(args["patch"])
        return ToolOutput(content=f"new state: {shown}", summary=f"{count} change(s)")
