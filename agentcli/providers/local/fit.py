"""How well a request fills each tool's arguments, with no model and no examples: a tool
whose required arguments the request spells out (a URL for `fetch_url`, arithmetic for
`calculator`, a command line after "run") fits; one with a required argument the request
has nothing for (a file to read, when it names none) does not; and a path it names that
exists counts for the tools that take that kind of entry (a folder for a listing, a file
for reading). Part of the prior the scored choice weighs (agentcli.providers.local
.scoring): it knows a tool only by its schema, so it serves any tool."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agentcli.providers.local import spelled
from agentcli.providers.local.decision import ANSWER
from agentcli.providers.local.grammar import (
    COPY_FIELDS,
    entry_kind,
    named_paths,
    path_kinds,
    request_spans,
    spelled_values,
)


def argument_fit(
    request: str, tools: Sequence[dict[str, Any]], workspace: Path | None = None
) -> dict[str, float]:
    """For each tool (and `answer`, 0): +1 for each required copied argument the request
    spells out, -1 for each it does not (a required path: -1 when it names none); and,
    for a path argument, +1 when the request names an existing entry of a kind the tool
    takes, -1 when only of another kind and the path is required (an optional one may
    be left to its default: "find config.py" names what a search looks for)."""
    spans = request_spans(request)
    paths = named_paths(spans, workspace)
    kinds = {k for k in (entry_kind(workspace, p) for p in paths) if k} if workspace else set()
    fit: dict[str, float] = {ANSWER: 0.0}
    for tool in tools:
        parameters = tool.get("parameters") or {}
        properties = parameters.get("properties") or {}
        required = set(parameters.get("required") or ())
        score = 0.0
        for name, schema in properties.items():
            if name not in COPY_FIELDS or not isinstance(schema, dict):
                continue
            if schema.get("type") != "string" or "enum" in schema:
                continue
            if name == "path":
                if name in required and not paths:
                    # a path to create need not exist: its name after "folder called"
                    made = _creates(schema) and spelled.file_names(request)
                    score += 1.0 if made else -1.0
                if kinds & path_kinds(tool, name):
                    score += 1.0
                elif kinds and name in required:
                    score -= 1.0  # a folder to read, a file to list
            elif name in required:
                score += 1.0 if spelled_values(tool, name, request, paths, workspace) else -1.0
        fit[tool["name"]] = score
    return fit


def _creates(schema: dict[str, Any]) -> bool:
    """A path the tool makes ("Directory to create."): the request names one that does
    not exist yet."""
    return "create" in str(schema.get("description", "")).lower()
