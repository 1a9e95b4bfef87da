"""The user's PreToolUse and PostToolUse hooks as steps of the chain around a tool call
(agentcli.agent.call_steps), handed out by the composition root.

PreToolUse stands before the decision, so a hook may refuse a call, have a person asked,
or change its arguments — and never widen: its `allow` takes away no ask and no denial
the policy would make (deny rules, the boundary and a person still decide after it), and
changed arguments are checked against the tool's schema and decided by the policy as
they will run. A PreToolUse hook that fails (times out, cannot start, exits other than 0
or 2, answers what is not its JSON) refuses the call: a guard that could not look must
not let through what it guards.

PostToolUse wraps a call that ran: exit 2 or `decision: "block"` gives its reason to the
model beside the result, as does `additionalContext`; a failure is one line and the
result stands."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.agent.call_steps import InvalidArguments, Proceed, Stage, ToolCallFlight
from agentcli.agent.hook_runner import HookRunner, label
from agentcli.conversation.error_kinds import DENIED
from agentcli.habits.hook_answer import Answer
from agentcli.tools.base import ToolOutput

if TYPE_CHECKING:
    from agentcli.habits.hooks import Hook


# Claude Code's file tools name their path `file_path`, absolute; agentcli's name it `path`.
# A hook gets both, so that a script that reads `tool_input.file_path` works unchanged.
PEER_PATH = "file_path"


def tool_input(flight: ToolCallFlight) -> dict[str, Any]:
    """The call's arguments as a hook sees them."""
    args = flight.arguments
    path = args.get("path")
    if not isinstance(path, str) or PEER_PATH in _properties(flight):
        return args
    return {**args, PEER_PATH: str(flight.context.workspace.root / Path(path).expanduser())}


def from_hook(updated: dict[str, Any], flight: ToolCallFlight) -> dict[str, Any]:
    """A hook's `updatedInput` as the tool's arguments: a `file_path` it changed is the
    path; the one it was given is dropped."""
    if PEER_PATH not in updated or PEER_PATH in _properties(flight):
        return updated
    updated = dict(updated)
    peer = updated.pop(PEER_PATH)
    given = tool_input(flight).get(PEER_PATH)
    if peer != given and updated.get("path") == flight.arguments.get("path"):
        updated["path"] = peer
    return updated


def _properties(flight: ToolCallFlight) -> dict[str, Any]:
    properties = flight.tool.parameters.get("properties")
    return properties if isinstance(properties, dict) else {}


def _applies(hook: Hook, flight: ToolCallFlight) -> bool:
    request = flight.request
    return hook.applies(request.tool, request.subjects, flight.context.workspace.root)


async def _answers(
    runner: HookRunner, event: str, flight: ToolCallFlight, **extra: Any
) -> AsyncIterator[tuple[Hook, Answer]]:
    """Each of `event`'s hooks that applies to the call, in order, and its answer; each
    is given the call's arguments as the hooks before it left them."""
    for hook in runner.of(event):
        if not _applies(hook, flight):
            continue
        payload = runner.payload(
            event,
            tool_name=flight.tool.name,
            tool_input=tool_input(flight),
            tool_use_id=flight.call.id,
            **extra,
        )
        yield hook, await runner.run(hook, payload, flight.call.id)


class PreToolUseHooks:
    stage: Stage = "before"

    def __init__(self, runner: HookRunner) -> None:
        self.runner = runner

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        async with contextlib.aclosing(_answers(self.runner, "PreToolUse", flight)) as answers:
            async for hook, answer in answers:
                refused = _heeded(hook, answer, flight)
                if refused is not None:
                    return refused
        return await proceed(flight)


def _heeded(hook: Hook, answer: Answer, flight: ToolCallFlight) -> ToolOutput | None:
    """A PreToolUse hook's answer applied to the call: its refusal, or None when the call
    goes on (its arguments as the hook changed them, its reasons to ask added)."""
    if answer.failure is not None:
        return ToolOutput.failure(
            f"denied: {label(hook)} {answer.failure}, and a call its guard could not check "
            "does not run",
            DENIED,
        )
    if answer.decision in ("deny", "block"):
        return ToolOutput.failure(
            f"denied: {label(hook)} refused it: {answer.reason or 'no reason given'}", DENIED
        )
    if answer.updated_input is not None:
        # What someone approved before this run (a deferred approval) was the call as it
        # was: the changed one is decided again.
        flight.decided = None
        try:
            flight.revise(from_hook(answer.updated_input, flight))
        except InvalidArguments as invalid:
            return ToolOutput.failure(
                f"denied: {label(hook)} changed the arguments into ones the tool refuses "
                f"({invalid})",
                DENIED,
            )
    if answer.decision == "ask":
        flight.ask_reasons.append(
            f"{label(hook)} asks" + (f": {answer.reason}" if answer.reason else "")
        )
    return None


class PostToolUseHooks:
    stage: Stage = "around"

    def __init__(self, runner: HookRunner) -> None:
        self.runner = runner

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        output = await proceed(flight)
        if not flight.ran:
            return output
        notes = []
        response = {"content": output.content, "is_error": output.error}
        async for hook, answer in _answers(
            self.runner, "PostToolUse", flight, tool_response=response
        ):
            if answer.decision in ("deny", "block"):
                notes.append(f"[{label(hook)}: {answer.reason or 'blocked'}]")
            if answer.context:
                notes.append(f"[{label(hook)} adds: {answer.context}]")
        if notes:
            output.content = "\n\n".join([output.content, *notes])
        return output
