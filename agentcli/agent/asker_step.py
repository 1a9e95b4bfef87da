"""A step before the decision in a subagent's chain: its calls carry its name, so that a
person asked to approve one sees that the subagent asks, not the agent they talk to."""

from __future__ import annotations

from agentcli.agent.call_steps import Proceed, Stage, ToolCallFlight
from agentcli.records import replace
from agentcli.tools.base import ToolOutput


class NamedAsker:
    stage: Stage = "before"

    def __init__(self, name: str) -> None:
        self.name = name

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        flight.request = replace(flight.request, asker=self.name)
        return await proceed(flight)
