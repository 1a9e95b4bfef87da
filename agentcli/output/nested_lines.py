"""What a terminal shows of a subagent's work: one line for each of its calls once the
call has its result, under the `task` call that started it (`  ↳ reader ✓ read_file: 3
lines`). Its text and its other events stay in `--output jsonl` and the session file."""

from __future__ import annotations

from typing import TYPE_CHECKING

from agentcli.conversation import events as ev
from agentcli.conversation.fold import StreamFold
from agentcli.output.results import result_line

if TYPE_CHECKING:
    from agentcli.output.style import Styler

SHOWN = (ev.RunStarted, ev.ToolCallStart, ev.ToolCallArgs, ev.ToolCallEnd, ev.ToolCallResult)


class SubagentCalls:
    def __init__(self) -> None:
        self._runs: dict[str, tuple[str, StreamFold]] = {}  # run id → (its name, its calls)

    def line(self, event: ev.Event, style: Styler) -> str | None:
        """The line to show for a subagent's event (already made visible), if any."""
        metadata = event.metadata or {}
        if isinstance(event, ev.RunStarted):
            self._runs[event.run_id] = (str(metadata.get("subagent", "subagent")), StreamFold())
            return None
        run = self._runs.get(str(metadata.get("runId")))
        if run is None or not isinstance(event, SHOWN):
            return None
        name, fold = run
        fold.apply(event)
        if not isinstance(event, ev.ToolCallResult):
            return None
        call = fold.calls.get(event.tool_call_id)
        if call is None:
            return None
        return style.dim(f"  ↳ {name}") + result_line(call, style)
