"""`--output jsonl`: the event stream itself, one AG-UI event per line, flushed per line."""

from __future__ import annotations

import json
from typing import TextIO

from agentcli.conversation import events as ev
from agentcli.output.base import RunSummary


class JsonlOutput:
    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def handle(self, event: ev.Event) -> None:
        self.stream.write(json.dumps(event.to_wire(), ensure_ascii=False) + "\n")
        self.stream.flush()

    nested = handle  # a subagent's events, tagged with its run (agentcli.output.nested)

    def finish(self, summary: RunSummary) -> None:
        self.stream.flush()
