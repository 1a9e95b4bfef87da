"""The small model never replaces a file it was asked to change: a `write_file` onto a
file that exists, chosen for a request that does not ask to replace the whole file, is
turned into the edit the request spells out (`edit_file`), or into no call at all. (A
whole-file overwrite it chooses for a request that does ask is still put to a person:
agentcli.agent.overwrite_step.)"""

from __future__ import annotations

import json
from collections.abc import Collection
from pathlib import Path

from agentcli.providers.local import spelled
from agentcli.providers.local.decision import ANSWER, Decision
from agentcli.providers.local.grammar import entry_kind, named_paths, request_spans

WRITER, EDITOR = "write_file", "edit_file"


def spared_choice(name: str, request: str, offered: Collection[str], workspace: Path | None) -> str:
    """The tool chosen, unless it is `write_file` for a request that names only files
    that exist and does not ask to replace one whole: then `edit_file` when the request
    spells out an edit (and it is offered), else answering."""
    if name != WRITER or workspace is None or spelled.asks_whole_file(request):
        return name
    kinds = [entry_kind(workspace, path) for path in named_paths(request_spans(request), workspace)]
    if "file" not in kinds or None in kinds:
        return name  # names no file that exists, or a new one too: a file to create
    if EDITOR in offered and spelled.replacements(request):
        return EDITOR
    return ANSWER


def spared_decision(decision: Decision, request: str, workspace: Path | None) -> Decision:
    """The call, unless it writes a whole file that exists for a request that does not ask
    for that: then no call (the step answers)."""
    if decision.name != WRITER or workspace is None or spelled.asks_whole_file(request):
        return decision
    try:
        path = json.loads(decision.arguments).get("path")
    except (ValueError, AttributeError):
        return decision
    if isinstance(path, str) and path and (workspace / path).is_file():
        return Decision(ANSWER)
    return decision
