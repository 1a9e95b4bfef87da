"""One-line notices on stderr that every output mode needs: why calls were denied when
nobody could be asked, and warnings from the loop."""

from __future__ import annotations

from typing import TextIO

from agentcli.agent.waiting import waiting_line
from agentcli.conversation import events as ev
from agentcli.output.base import RunSummary
from agentcli.output.visible import one_line, visible_event
from agentcli.policy.engine import NO_TERMINAL_HINT


class Notices:
    def __init__(self, stderr: TextIO, *, waiting: bool = True) -> None:
        self.stderr = stderr
        self.waiting = waiting  # False where the output itself shows it (text mode)
        self._hinted = False

    def handle(self, event: ev.Event) -> None:
        if not isinstance(event, ev.Custom):
            return  # every notice is a CUSTOM event; a streamed piece costs nothing here
        event = visible_event(ev.typed(event))  # names and messages from the model or a server
        if isinstance(event, ev.Approval):
            if event.decision == "deny" and event.by == "auto" and not self._hinted:
                self._hinted = True
                # Beyond the boundary, --yes would not help: the reason says what would.
                hint = NO_TERMINAL_HINT if NO_TERMINAL_HINT in event.reason else event.reason
                self._say(f"denied {event.tool}: {hint}")
        elif isinstance(event, ev.RunWarning):
            self._say(f"warning: {event.message}")
        elif getattr(event, "name", None) == "waiting" and self.waiting:
            self._say(waiting_line(event.value if isinstance(event.value, dict) else {}))
        elif isinstance(event, (ev.McpLog, ev.McpRequest)):
            line = mcp_notice(event)
            if line:
                self._say(line)
        elif isinstance(event, ev.Compacting):
            self._say(event.notice)
        elif isinstance(event, ev.Compaction):
            self._say(
                f"compacted the conversation: {event.summarised_messages} earlier messages "
                f"summarised, the latest {event.kept_messages} kept verbatim"
            )

    def _say(self, line: str) -> None:
        from agentcli.output.wrapping import for_stream

        # One line, whatever it quotes: a server's or a hook's newline would start a line
        # that passes for agentcli's own.
        self.stderr.write(for_stream(f"agentcli: {one_line(line)}", self.stderr) + "\n")
        self.stderr.flush()

    def finish(self, summary: RunSummary) -> None:
        pass


def mcp_notice(event: ev.McpLog | ev.McpRequest) -> str:
    """A server's log message, or what became of a request of its that no person saw
    (declined, sent its defaults, or run on the model by a rule): one line, or none."""
    return one_line(_notice(event))  # a log message's newline would start a line of its own


def _notice(event: ev.McpLog | ev.McpRequest) -> str:
    if isinstance(event, ev.McpLog):
        logger = f" {event.logger}" if event.logger else ""
        return f"MCP server {event.server} [{event.level}{logger}]: {event.message}"
    what = "request for input" if event.kind == "elicitation" else "sampling request"
    if event.outcome == "decline" and event.by != "user":
        return f"declined MCP server {event.server}'s {what}: {event.reason}"
    if event.outcome == "error":
        return f"MCP server {event.server}'s {what} failed: {event.reason}"
    if event.outcome == "accept" and event.by in ("rule", "flag"):
        how = f"allowed by the rule {event.rule}" if event.rule else event.reason
        tokens = (event.usage or {}).get("totalTokens")
        spent = f", {tokens:,} tokens" if isinstance(tokens, int) else ""
        return f"answered MCP server {event.server}'s {what} ({how}{spent})"
    return ""
