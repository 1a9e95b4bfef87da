"""`--output jsonl`: the event stream itself, one AG-UI event per line, flushed per line."""

from __future__ import annotations

from typing import TextIO

from agentcli.conversation import events as ev
from agentcli.output.base import RunSummary
from agentcli.output.visible import visible_json


class JsonlOutput:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def handle(self, event: ev.Event) -> None:
        # C1 controls and bidi overrides as \u escapes: JSON allows them raw, a terminal
        # showing the stream would obey them (the same data for a reader of the JSON).
        self.stream.write(visible_json(event.to_wire()) + "\n")
        self.stream.flush()

    nested = handle  # a subagent's events, tagged with its run (agentcli.output.nested)

    def finish(self, summary: RunSummary) -> None:
        self.stream.flush()
