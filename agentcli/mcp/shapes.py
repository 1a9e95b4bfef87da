"""An MCP server's answer that the `mcp` SDK's types refuse, said in one line: which answer,
the field (as a path into it) and what is wrong — not pydantic's multi-line report with a
block for every branch of a union and a web address under each."""

from __future__ import annotations

from typing import Any

from agentcli.json_kinds import json_kind

_SHOWN_MESSAGE = 160  # characters of the schema's complaint


def is_wrong_shape(error: BaseException) -> bool:
    from pydantic import ValidationError

    return isinstance(error, ValidationError)


# The SDK's result models by the request they answer.
_ANSWERS = {
    "InitializeResult": "initialize",
    "ListToolsResult": "tools/list",
    "CallToolResult": "tools/call",
    "ListPromptsResult": "prompts/list",
    "GetPromptResult": "prompts/get",
    "ListResourcesResult": "resources/list",
    "ReadResourceResult": "resources/read",
}


def answer_name(error: Any) -> str:
    """The answer's name ("its tools/list answer"), from the model the SDK checked it by."""
    title = str(getattr(error, "title", "") or "")
    known = _ANSWERS.get(title) or next(
        (name for model, name in _ANSWERS.items() if model in title), None
    )  # a union of models (a result, or a task's) names its first
    return f"its {known} answer" if known else "an answer"


def wrong_shape(what: str, error: Any) -> str:
    """`what` ("its tools/list answer") and the first complaint of the branch that fits:
    a union's branch whose own `type` differs from the value's is not what was meant."""
    errors = list(error.errors())
    mismatched = {_branch(e["loc"]) for e in errors if _is_tag_mismatch(e)}
    fitting = [e for e in errors if _branch(e["loc"]) not in mismatched] or errors
    first = fitting[0]
    path = _path(first["loc"])
    if _is_tag_mismatch(first) and len(fitting) == len(errors):
        said = f"{first.get('input')!r} is not a type MCP has"
    elif first.get("type") == "missing":
        said = "missing"
    else:
        said = f"{first.get('msg', 'wrong')} (it is {json_kind(first.get('input'))})"
    where = f"{path}: " if path else ""
    return f"{what} does not match MCP's schema: {where}{said[:_SHOWN_MESSAGE]}"


def _is_branch_name(step: Any) -> bool:
    """pydantic names a union's branch by its class (`TextContent`) or its function; MCP's
    own field names start in lower case (or `_meta`)."""
    return isinstance(step, str) and (step[:1].isupper() or "[" in step)


def _branch(loc: tuple[Any, ...]) -> tuple[Any, ...]:
    for index in range(len(loc) - 1, -1, -1):
        if _is_branch_name(loc[index]):
            return tuple(loc[: index + 1])
    return ()


def _is_tag_mismatch(error: dict[str, Any]) -> bool:
    loc = tuple(error.get("loc") or ())
    return error.get("type") == "literal_error" and bool(loc) and loc[-1] == "type"


def _path(loc: tuple[Any, ...]) -> str:
    parts: list[str] = []
    for step in loc:
        if _is_branch_name(step):
            continue
        if isinstance(step, int):
            parts.append(f"[{step}]")
        else:
            parts.append(f".{step}" if parts else str(step))
    return "".join(parts)
