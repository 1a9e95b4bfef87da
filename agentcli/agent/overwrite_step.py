"""A step before the decision for calls a small model chose: a whole-file overwrite of a
file that exists (`write_file` onto it) is asked of a person, always. A tiny model that
was asked to change a word can pick the tool that replaces the file; under `--yes` that
would lose the file, so the flag does not answer this ask: with no person at a terminal
the call is refused, with the reason in one line."""

from __future__ import annotations

from collections.abc import Callable

from agentcli.agent.call_steps import Proceed, Stage, ToolCallFlight
from agentcli.tools.base import ToolOutput

# The tools that replace a whole file with their `content`
WHOLE_FILE_WRITERS = frozenset({"write_file"})


class OverwriteAsksStep:
    stage: Stage = "before"

    def __init__(self, small_model: Callable[[], bool]) -> None:
        # Whether the calls are chosen by the embedded small model now (`/model` may
        # switch to another and back)
        self.small_model = small_model

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        if flight.tool.name in WHOLE_FILE_WRITERS and self.small_model():
            reason = overwrite_reason(flight)
            if reason is not None:
                flight.ask_reasons.append(reason)
                flight.person_only = True
        return await proceed(flight)


def overwrite_reason(flight: ToolCallFlight) -> str | None:
    """Why a person is asked, when the call replaces a file that exists."""
    path = flight.arguments.get("path")
    if not isinstance(path, str) or not path:
        return None
    target = flight.context.workspace.resolve(path).path
    if not target.is_file():
        return None  # a new file loses nothing
    shown = flight.context.workspace.relative(target)
    size = target.stat().st_size
    return (
        f"the small local model chose to replace all of {shown} ({size} bytes) with new "
        f"content; only a person may approve a whole-file overwrite it chose"
    )
