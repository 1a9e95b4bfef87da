"""The one seam around a tool call: an ordered chain of steps, each of which may act before
the call runs (refuse it, have a person asked, change its arguments) and after it (see or
change its result). The policy's decision is one step of the chain; the user's hooks, a
command's or a subagent's narrowed tools, checkpoints and records are others. A step
plugs in by its place in the list the composition root hands the executor, never by a
branch in the executor's body.

A step is a callable `step(flight, proceed) -> ToolOutput` (the shape of a middleware
stack): it does its part, then returns `await proceed(flight)` to go on — or returns an
output of its own to stop there. `stage` says where it stands: "before" steps run before
the decision (they may still make it stricter), "around" steps wrap a call that was
allowed (what they do happens only to calls that run)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

from agentcli.records import dataclass, field

if TYPE_CHECKING:
    from agentcli.conversation.messages import ToolCall
    from agentcli.risk import ApprovalRequest, Decision
    from agentcli.tools.base import Tool, ToolContext, ToolOutput

Stage = Literal["before", "decision", "around"]
STAGES: tuple[Stage, ...] = ("before", "decision", "around")


@dataclass(slots=True)
class ToolCallFlight:
    """One tool call on its way through the chain: what it is, what was decided, and what
    the steps said of it."""

    call: ToolCall
    tool: Tool
    arguments: dict[str, Any]
    request: ApprovalRequest
    context: ToolContext  # the session's; the call's own copy is made when it runs
    # Revises the arguments (a hook changed them): checked against the schema and assessed
    # again, so the decision is made on what will really run. Raises InvalidArguments.
    revise: Callable[[dict[str, Any]], None]
    decided: Decision | None = None  # made elsewhere before the run (a deferred approval)
    # Why steps before the decision want a person asked: an ask, as an `ask` rule is.
    ask_reasons: list[str] = field(default_factory=list)
    # Only a person may answer those reasons: no flag (--yes) and no rule does.
    person_only: bool = False
    decision: Decision | None = None  # the policy's, once made
    profile: str | None = None  # the sandbox profile of a tool that runs commands
    ran: bool = False  # the tool itself was run (not refused before)


Proceed = Callable[[ToolCallFlight], Awaitable["ToolOutput"]]


class CallStep(Protocol):
    """One step around every tool call."""

    stage: Stage

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput: ...


class InvalidArguments(Exception):
    """Arguments a step gave (`flight.revise`) that the tool's schema refuses."""


def ordered(steps: Sequence[CallStep]) -> list[CallStep]:
    """The chain in its stages' order; within a stage, in the order given."""
    unknown = [step for step in steps if step.stage not in STAGES]
    if unknown:
        raise ValueError(f"a call step's stage must be one of {STAGES}: {unknown[0]!r}")
    return [step for stage in STAGES for step in steps if step.stage == stage]


async def through(
    steps: Sequence[CallStep],
    flight: ToolCallFlight,
    run: Proceed,
    index: int = 0,
) -> ToolOutput:
    """`flight` through `steps[index:]`, then `run` (the tool itself)."""
    if index == len(steps):
        return await run(flight)

    async def proceed(next_flight: ToolCallFlight) -> ToolOutput:
        return await through(steps, next_flight, run, index + 1)

    return await steps[index](flight, proceed)
