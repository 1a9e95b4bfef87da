"""The decision, as one step of the chain around a tool call: the policy allows, denies or
asks (a person, a flag, or — when approvals are deferred, as `serve` does — someone outside
this run, whose answer comes with the next run). What it decided is an event; a refused
call stops here with the reason as its result."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from agentcli.agent.call_steps import Proceed, Stage, ToolCallFlight
from agentcli.conversation.error_kinds import DENIED
from agentcli.records import replace
from agentcli.tools.base import ToolOutput

if TYPE_CHECKING:
    from agentcli.conversation import events as ev
    from agentcli.conversation.messages import ToolCall
    from agentcli.policy.engine import Policy
    from agentcli.risk import ApprovalRequest, Decision

# Called instead of asking when approvals are deferred (agentcli serve): the call, its
# request and why it would ask. The call then gets no result in this run.
Defer = Callable[["ToolCall", "ApprovalRequest", list[str]], None]


class Deferred(Exception):
    """The approval went to someone outside this run; the call waits for the next run."""


class PolicyStep:
    stage: Stage = "decision"

    def __init__(self, policy: Policy, emit: Callable[[ev.Event], None]) -> None:
        self.policy = policy
        self.emit = emit
        self.defer: Defer | None = None
        self.denied = 0  # calls refused in this run by any step (the run's exit code says so)
        self.deferred: list[str] = []  # ids of calls whose approval was deferred this run

    def start_run(self) -> None:
        self.denied = 0
        self.deferred = []

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        call, request = flight.call, flight.request
        if flight.ask_reasons:
            request = replace(
                request, ask_reasons=tuple(flight.ask_reasons), person_only=flight.person_only
            )
        asks = self.defer is not None or self.policy.approver is not None
        decided = flight.decided
        verdict = self.policy.explain(request) if decided is None and asks else None
        if verdict is not None and verdict.decision == "ask":
            self._emit_state(call, "waiting for approval")
            if self.defer is not None:  # someone outside this run answers: the call waits
                self.defer(call, request, verdict.reasons)
                raise Deferred
        decision = decided or await self.policy.decide(request)
        flight.decision = decision
        self._emit_approval(flight, decision)
        if not decision.allowed:  # counted by the executor, as every refusal is
            return ToolOutput.failure(f"denied: {decision.reason}", DENIED)
        return await proceed(flight)

    def _emit_state(self, call: ToolCall, state: str) -> None:
        from agentcli.conversation import events as ev

        self.emit(ev.ToolState(tool_call_id=call.id, state=state))

    def _emit_approval(self, flight: ToolCallFlight, decision: Decision) -> None:
        from agentcli.conversation import events as ev

        self.emit(
            ev.Approval(
                tool_call_id=flight.call.id,
                tool=flight.tool.name,
                risk=flight.request.assessment.risk.label,
                decision=decision.decision,
                by=decision.by,
                reason=decision.reason,
                rule=decision.rule or None,
                sandbox=flight.profile,
            )
        )
