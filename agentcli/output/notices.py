"""One-line notices on stderr that every output mode needs: why calls were denied when
nobody could be asked, and warnings from the loop."""

from __future__ import annotations

from typing import TextIO

from agentcli import events as ev
from agentcli.output.base import RunSummary
from agentcli.output.visible import visible_event
from agentcli.policy import NO_TERMINAL_HINT


class Notices:
    def __init__(self, stderr: TextIO) -> None:
        self.stderr = stderr
        self._hinted = False

    def handle(self, event: ev.Event) -> None:
        if not isinstance(event, ev.Custom) or not isinstance(event.value, dict):
            return
        value = visible_event(event).value  # names and messages from the model or a server
        if (
            event.name == "approval"
            and value.get("decision") == "deny"
            and value.get("by") == "auto"
        ):
            if not self._hinted:
                self._hinted = True
                self._say(f"denied {value.get('tool')}: {NO_TERMINAL_HINT}")
        elif event.name == "warning":
            self._say(f"warning: {value.get('message')}")
        elif event.name == "compaction":
            self._say(
                f"compacted the conversation: {value.get('summarisedMessages')} earlier messages "
                f"summarised, the latest {value.get('keptMessages')} kept verbatim"
            )

    def _say(self, line: str) -> None:
        self.stderr.write(f"agentcli: {line}\n")
        self.stderr.flush()

    def finish(self, summary: RunSummary) -> None:
        pass
