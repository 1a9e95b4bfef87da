"""The tools as a subagent sees them: its parent's registry, of which it is offered only
the tools its definition keeps. A call of another tool still reaches the chain around
calls, whose narrowing step refuses it and says why (rather than "no such tool")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


class ToolSubset:
    def __init__(self, registry: Any, offered: Callable[[str], bool]) -> None:
        self.registry = registry  # agentcli.tools.registry.ToolRegistry (or another subset)
        self.offered = offered

    def __getattr__(self, name: str) -> Any:
        return getattr(self.registry, name)  # everything but what is offered: the parent's

    def specs(self) -> list[dict[str, Any]]:
        return [spec for spec in self.registry.specs() if self.offered(spec["name"])]

    def names(self) -> list[str]:
        return [name for name in self.registry.names() if self.offered(name)]

    async def aclose(self) -> None:
        """The parent's registry is its holder's to close."""
