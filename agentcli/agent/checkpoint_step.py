"""Checkpoints as a step around every tool call (agentcli.agent.call_steps): before a call
that may change the workspace runs, what it may change is kept; after it, what it did
change is recorded against the turn (agentcli.workspace.checkpoints).

A file tool (`writes_files`) names its target: that path is kept before and read after. A
tool that runs commands may change anything: the workspace is scanned before and after, and
what differs is recorded. Calls that were refused never ran, so nothing is recorded for
them. A command's background job, an MCP server, or anything outside the workspace is not
seen: docs/usage.md says what a rewind cannot undo."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.workspace.checkpoints import MAX_SCANNED, Checkpoints, State, Turn

if TYPE_CHECKING:
    from agentcli.agent.call_steps import Proceed, ToolCallFlight
    from agentcli.conversation.messages import Conversation
    from agentcli.tools.base import ToolOutput


def current_turn(conversation: Conversation) -> Turn | None:
    """The turn now running: the latest user message, its number and its prompt."""
    number, last = 0, None
    for message in conversation.messages:
        if message.role == "user":
            number, last = number + 1, message
    if last is None:
        return None
    return Turn(last.id, number, " ".join(last.content.split()))


class CheckpointStep:
    stage = "around"

    def __init__(
        self,
        store: Checkpoints,
        turn: Callable[[], Turn | None],
        emit: Callable[[Any], None] = lambda event: None,
    ) -> None:
        self.store = store
        self.turn = turn
        self.emit = emit  # the session's events: a warning when its record is incomplete

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        tool, store = flight.tool, self.store
        if not store.enabled or not (tool.runs_commands or getattr(tool, "writes_files", False)):
            return await proceed(flight)
        if self.turn() is None:  # no turn to rewind to (`mcp serve`): no scan to pay for
            return await proceed(flight)
        paths = None if tool.runs_commands else self._targets(flight)
        if paths == []:
            return await proceed(flight)
        before, whole = await asyncio.to_thread(self._before, paths)
        try:
            return await proceed(flight)
        finally:
            turn = self.turn()
            if flight.ran and turn is not None:
                after, seen = await asyncio.to_thread(self._after, paths, before)
                changes = [(rel, before.get(rel, {"kind": "none"}), s) for rel, s in after.items()]
                await asyncio.to_thread(store.record, turn, tool.name, changes)
                if not (whole and seen):  # a full baseline: what it did is not all known
                    self._incomplete(turn, tool.name)

    def _incomplete(self, turn: Turn, by: str) -> None:
        why = (
            f"the workspace has more than {MAX_SCANNED:,} files, so what {by} changed "
            "beyond them was not kept"
        )
        if self.store.gap(turn, by, why):
            from agentcli.conversation import events as ev

            self.emit(ev.RunWarning(message=f"checkpoints: {why}; a rewind cannot restore it"))

    def _targets(self, flight: ToolCallFlight) -> list[str]:
        try:
            subjects = flight.tool.rule_subjects(flight.arguments, flight.context)
        except Exception:  # a tool that cannot say its path: nothing is kept for it
            return []
        if subjects.kind != "path":
            return []
        found = (self.store.relative(Path(value)) for value in subjects.values)
        return [rel for rel in found if rel is not None]

    def _before(self, paths: list[str] | None) -> tuple[dict[str, State], bool]:
        """What may change, kept, and whether that is all of it."""
        if paths is None:
            return self.store.scan()
        return {rel: self.store.state(rel) for rel in paths}, True

    def _after(
        self, paths: list[str] | None, before: dict[str, State]
    ) -> tuple[dict[str, State], bool]:
        if paths is not None:
            return {rel: self.store.state(rel, keep=False) for rel in paths}, True
        now, whole = self.store.scan(keep=False)
        for rel in before:  # gone since: deleted or renamed by the command
            now.setdefault(rel, self.store.state(rel, keep=False))
        return now, whole
