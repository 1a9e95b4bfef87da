"""What every output consumes: the events as they happen, then the run's summary."""

from __future__ import annotations

from typing import Any, Protocol

from agentcli.conversation import events as ev
from agentcli.records import dataclass


@dataclass(slots=True)
class RunSummary:
    thread_id: str
    run_id: str
    model: str
    status: str  # finished | max_steps | timeout | error | cancelled
    exit_code: int
    steps: int
    usage: ev.Usage
    final_text: str
    error: str | None = None

    def usage_wire(self) -> dict[str, Any]:
        return self.usage.to_wire()


class Output(Protocol):
    def handle(self, event: ev.Event) -> None: ...

    def finish(self, summary: RunSummary) -> None: ...


class FanOut:
    """Sends each event to every output, in order."""

    def __init__(self, outputs: list[Output]) -> None:
        self.outputs = outputs

    def __call__(self, event: ev.Event) -> None:
        for output in self.outputs:
            output.handle(event)

    def nested(self, event: ev.Event) -> None:
        """A subagent's event (agentcli.output.nested): to the outputs that take them."""
        for output in self.outputs:
            take = getattr(output, "nested", None)
            if take is not None:
                take(event)

    def finish(self, summary: RunSummary) -> None:
        for output in self.outputs:
            output.finish(summary)
