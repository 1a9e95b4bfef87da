"""Decides whether a tool call may run.

Until rules and inline prompts exist: low risk runs; anything above low runs with --yes,
is denied with --deny, and is denied when nobody can be asked (never wait)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Literal

from agentcli.tools.base import Assessment, Risk

DecisionKind = Literal["allow", "deny"]
DecidedBy = Literal["auto", "rule", "session", "user", "flag"]


@dataclass(frozen=True, slots=True)
class Decision:
    decision: DecisionKind
    by: DecidedBy
    reason: str
    rule: str | None = None

    @property
    def allowed(self) -> bool:
        return self.decision == "allow"


@dataclass(frozen=True, slots=True)
class ApprovalRequest:
    tool: str
    arguments: dict
    assessment: Assessment
    preview: str | None


# An approver asks a person; it returns a Decision made "by user".
Approver = Callable[[ApprovalRequest], Awaitable[Decision]]

NO_TERMINAL_HINT = "no terminal to ask for approval; rerun with --yes to allow such calls"


@dataclass(slots=True)
class Policy:
    yes: bool = False
    deny: bool = False
    approver: Approver | None = None

    async def decide(self, request: ApprovalRequest) -> Decision:
        assessment = request.assessment
        if assessment.risk is Risk.LOW:
            return Decision("allow", "auto", assessment.reason)
        if self.deny:
            return Decision("deny", "flag", f"{assessment.reason}; --deny refuses it")
        if self.yes:
            return Decision("allow", "flag", f"{assessment.reason}; allowed by --yes")
        if self.approver is not None:
            return await self.approver(request)
        return Decision("deny", "auto", f"{assessment.reason}; {NO_TERMINAL_HINT}")
