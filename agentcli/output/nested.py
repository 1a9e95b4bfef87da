"""A subagent's events, on their way into its parent's stream: its RUN_STARTED names the
parent's run (AG-UI's `parentRunId`) and the call that started it, and each of its other
events carries its run's id in `metadata.runId`, so a reader of `--output jsonl` or of the
session file can tell whose each event is even when two subagents run at once. They go to
the parent's outputs that take nested events (the session file, jsonl; the terminal shows
a line per call); its ending is the `task` call's result, not a summary of its own."""

from __future__ import annotations

from typing import Any

from agentcli.conversation import events as ev
from agentcli.output.base import RunSummary


class NestedOutput:
    def __init__(
        self, parent: Any, parent_run_id: str | None, call_id: str, name: str, run_id: str
    ) -> None:
        self.parent = parent  # the parent's FanOut
        self.parent_run_id = parent_run_id
        self.call_id = call_id
        self.name = name
        self.run_id = run_id

    def handle(self, event: ev.Event) -> None:
        metadata = event.metadata or {}
        if isinstance(event, ev.RunStarted):
            if event.parent_run_id is None:  # (a deeper subagent's names its own parent)
                event.parent_run_id = self.parent_run_id
                event.metadata = {**metadata, "toolCallId": self.call_id, "subagent": self.name}
        elif "runId" not in metadata:
            event.metadata = {**metadata, "runId": self.run_id}
        self.parent.nested(event)

    nested = handle  # a deeper subagent's events pass through on their way up

    def finish(self, summary: RunSummary) -> None:
        """The subagent's ending is the parent's call result: nothing is printed here."""


def is_nested(event: dict[str, Any]) -> bool:
    """Whether a recorded event (its wire form) is a subagent's."""
    metadata = event.get("metadata")
    return "parentRunId" in event or (isinstance(metadata, dict) and "runId" in metadata)
