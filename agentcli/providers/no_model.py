"""The provider of a session that runs no model: `agentcli mcp serve` lends its tools to
another agent, whose model decides the calls. Asked for a step anyway (an MCP server
of its own asking to sample), it says so instead of reaching a network."""

from __future__ import annotations

from collections.abc import AsyncIterator

from agentcli.errors import ProviderError
from agentcli.providers.base import ModelRequest, StreamItem


class NoModel:
    name = "none"
    model = "none"

    def __init__(self, why: str) -> None:
        self.why = why

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamItem]:
        raise ProviderError(self.why)
        yield  # an async generator, as the interface says  # pragma: no cover

    async def aclose(self) -> None:
        pass
