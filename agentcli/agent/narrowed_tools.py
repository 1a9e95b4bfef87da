"""A step before the decision that narrows what may run: during a custom command's turn,
only the calls its `allowed-tools` rules cover go on to the policy (which may still ask or
refuse them), and in a subagent only those its definition's `tools` cover; every other
call is refused with the rules in the reason. It never allows anything itself: a covered
call is decided as any other.

Covered means what an allow rule means (agentcli.policy.rules): each command of a command
line matched as written, a path by its glob, an MCP tool by its name's glob; a command line
that may run a program no rule can see is not covered."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from agentcli.agent.call_steps import Proceed, Stage, ToolCallFlight
from agentcli.conversation.error_kinds import DENIED
from agentcli.policy.rules import Rule, command_allowed_by, covers
from agentcli.tools.base import ToolOutput

if TYPE_CHECKING:
    from agentcli.risk import ApprovalRequest


class NarrowedTools:
    stage: Stage = "before"

    def __init__(
        self, rules: Sequence[Rule] | None = None, label: str = "", what: str = "allowed-tools"
    ) -> None:
        self.rules: list[Rule] | None = list(rules) if rules is not None else None
        self.label = label  # whose rules: `/git:commit`, `the subagent explorer`
        self.what = what  # what its definition calls them: a command's allowed-tools

    @contextlib.contextmanager
    def narrowed(self, rules: Sequence[Rule] | None, label: str) -> Iterator[None]:
        """For one turn (the REPL keeps one step across turns)."""
        before = self.rules, self.label
        self.rules, self.label = (list(rules) if rules is not None else None), label
        try:
            yield
        finally:
            self.rules, self.label = before

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        rules = self.rules
        if rules is None or covered(rules, flight.request, flight.context.workspace.root):
            return await proceed(flight)
        allowed = ", ".join(rule.text for rule in rules) or "no tool"
        return ToolOutput.failure(
            f"{self.label} lets only its {self.what} run ({allowed}); this "
            f"{flight.request.tool} call is not among them",
            DENIED,
        )


def covered(rules: Sequence[Rule], request: ApprovalRequest, root: Path) -> bool:
    """Whether an allow rule among `rules` would cover the call (without granting it)."""
    tool, subjects = request.tool, request.subjects
    candidates = [rule for rule in rules if rule.names(tool)]
    if any(rule.pattern is None for rule in candidates):
        return True
    if not candidates:
        return False
    if subjects.kind != "command":
        return any(covers(rule, tool, subjects, root) for rule in candidates)
    if not subjects.complete or not subjects.commands or subjects.hidden is not None:
        return False
    return all(
        any(command_allowed_by(rule.pattern or "", command) for rule in candidates)
        for command in subjects.commands
    )
