"""A place added mid-session (the REPL's `/add-dir DIR[:ro]`), under the rules of
`--add-dir`: an existing directory, never `/`, never one that holds (or is inside)
agentcli's own configuration or data; `:ro` read-only. From the next call on, every tool
reaches it — the file and search tools through the session's boundary, commands through
the sandbox's layout under any backend — and the MCP servers are told their roots
changed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.errors import UsageError

if TYPE_CHECKING:
    from agentcli.agent.session import Agent
    from agentcli.sandbox.boundary import Place


async def add_place(agent: Agent, text: str) -> str:
    """Adds the place `text` names to `agent`'s sandbox (shared with the agents a REPL
    opens after it) and tells its MCP servers; the line that says what was done. A place
    that cannot be one is a UsageError saying why, and nothing changes."""
    from agentcli.mcp.client_features import roots_of, tell_roots
    from agentcli.output.visible import visible
    from agentcli.sandbox.boundary import PlaceError, parse_place, within

    if not text:
        raise UsageError("name a directory: /add-dir DIR, or /add-dir DIR:ro for read-only")
    try:
        place = parse_place(text)
    except PlaceError as error:
        raise UsageError(f"/add-dir {visible(text)}: {visible(str(error))}") from None
    shown = visible(place.path)
    workspace = str(agent.workspace.root)
    if within(place.path, workspace):
        raise UsageError(f"{shown} is in the workspace ({visible(workspace)}): tools reach it")
    sandbox = agent.sandbox
    if place in sandbox.settings.places:
        return f"{shown} is already a place ({_mode(place)}); /status lists them"
    replaced = sandbox.add_place(place)
    told = await tell_roots(agent.registry.sources, roots_of(agent.workspace.root, sandbox))
    said = f"added {shown} ({_mode(place)}"
    said += f", was {_mode(replaced)})" if replaced is not None else ")"
    said += ": every tool reaches it from the next call"
    if told:
        said += f"; told {told} MCP server{'s' if told != 1 else ''}"
    if not sandbox.settings.enabled:
        said += " (the sandbox is off: tools reach everything but agentcli's own files)"
    return said


def _mode(place: Place) -> str:
    return "read-write" if place.writable else "read-only"
