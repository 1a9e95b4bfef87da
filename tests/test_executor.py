"""The executor: parse, refine, validate, decide, run concurrently, keep the order."""

from __future__ import annotations

import asyncio
import json
import time
from typing import Any

import pytest

from agentcli.agent.executor import Executor
from agentcli.agent.refine import refine_arguments
from agentcli.conversation import events as ev
from agentcli.conversation.messages import ToolCall
from agentcli.policy.engine import Policy
from agentcli.risk import Assessment, Risk
from agentcli.tools.base import Tool, ToolContext, ToolFailure, ToolOutput
from agentcli.tools.registry import ToolRegistry
from agentcli.workspace.root import Workspace


class Sleeper(Tool):
    name = "sleep"
    description = "sleeps"
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {"seconds": {"type": "number"}, "label": {"type": "string"}},
        "required": ["seconds"],
        "additionalProperties": False,
    }

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "sleeps")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        await asyncio.sleep(args["seconds"])
        return ToolOutput(content=f"slept {args['seconds']} {args.get('label', '')}".strip())


class Meeting(Tool):
    """Two calls that can only both succeed when they run at the same time: the waiter
    finishes once the signaller has run, so the verdict rests on events, not on a clock."""

    name = "meet"
    description = "waits for, or signals, the other call"
    parameters = {  # noqa: RUF012
        "type": "object",
        "properties": {"role": {"enum": ["waiter", "signaller"]}},
        "required": ["role"],
    }
    arrived: asyncio.Event | None = None

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "meets")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        if Meeting.arrived is None:
            Meeting.arrived = asyncio.Event()
        if args["role"] == "signaller":
            Meeting.arrived.set()
            return ToolOutput(content="signalled")
        try:  # one after the other, the signaller never comes while the waiter waits
            await asyncio.wait_for(Meeting.arrived.wait(), timeout=30)
        except TimeoutError:
            raise ToolFailure("the other call never ran alongside") from None
        return ToolOutput(content="met")


class Risky(Tool):
    name = "risky"
    description = "high risk"
    parameters = {"type": "object", "properties": {}}  # noqa: RUF012
    ran = 0

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.HIGH, "it is risky")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        Risky.ran += 1
        return ToolOutput(content="ran")


class Broken(Tool):
    name = "broken"
    description = "raises"
    parameters = {"type": "object", "properties": {"kind": {"type": "string"}}}  # noqa: RUF012

    def assess(self, args: dict[str, Any], ctx: ToolContext) -> Assessment:
        return Assessment(Risk.LOW, "harmless")

    async def execute(self, args: dict[str, Any], ctx: ToolContext) -> ToolOutput:
        if args.get("kind") == "expected":
            raise ToolFailure("no such thing")
        raise RuntimeError("boom")


def make(policy: Policy | None = None, **kwargs) -> tuple[Executor, list[ev.Event]]:
    events: list[ev.Event] = []
    registry = ToolRegistry([Sleeper(), Meeting(), Risky(), Broken()])
    context = ToolContext(workspace=Workspace("."))
    return Executor(registry, policy or Policy(), context, events.append, **kwargs), events


def call(name: str, arguments: Any, call_id: str = "c1") -> ToolCall:
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(id=call_id, name=name, arguments=raw)


def run(executor: Executor, calls: list[ToolCall]):
    return asyncio.run(executor.run(calls))


def test_calls_run_concurrently_and_results_keep_the_model_order():
    executor, events = make()
    Meeting.arrived = None
    calls = [
        call("meet", {"role": "waiter"}, "a"),
        call("meet", {"role": "signaller"}, "b"),
    ]
    results = run(executor, calls)
    assert [m.tool_call_id for m in results] == ["a", "b"]
    assert results[0].content == "met"  # the waiter saw the signaller run meanwhile
    finished = [e.tool_call_id for e in events if isinstance(e, ev.ToolCallResult)]
    assert finished == ["b", "a"]  # the signaller reported first, but results stay ordered


def test_concurrency_is_bounded():
    executor, _ = make(max_concurrency=1)
    started = time.monotonic()
    run(executor, [call("sleep", {"seconds": 0.2}, "a"), call("sleep", {"seconds": 0.2}, "b")])
    assert time.monotonic() - started >= 0.38


@pytest.mark.parametrize(
    ("name", "arguments", "expected"),
    [
        ("sleep", '{"seconds": 1', "not valid JSON"),
        ("sleep", "[1, 2]", "must be a JSON object"),
        ("nope", "{}", "unknown tool 'nope'; available tools: broken, meet, risky, sleep"),
        ("sleep", {"seconds": "soon"}, "seconds: 'soon' is not of type 'number'"),
        ("sleep", {}, "'seconds' is a required property"),
        ("sleep", {"seconds": 0, "extra": 1}, "Additional properties are not allowed"),
    ],
)
def test_invalid_calls_do_not_run_and_explain_themselves(name, arguments, expected):
    executor, events = make()
    (result,) = run(executor, [call(name, arguments)])
    assert result.error is not None
    assert expected in result.content
    if name != "nope":
        assert "Expected parameters (JSON Schema)" in result.content
    assert not [e for e in events if isinstance(e, ev.Custom) and e.name == "approval"]


def test_refinement_drops_null_optional_fields_and_coerces_numeric_strings():
    executor, _ = make()
    (result,) = run(executor, [call("sleep", {"seconds": "0.01", "label": None})])
    assert result.error is None and result.content == "slept 0.01"


def test_tool_exceptions_become_error_results():
    executor, _ = make()
    expected, bug = run(
        executor, [call("broken", {"kind": "expected"}, "a"), call("broken", {}, "b")]
    )
    assert expected.error == "no such thing"
    assert bug.error is not None and "RuntimeError: boom" in bug.content


@pytest.mark.parametrize(
    ("policy", "allowed", "by"),
    [
        (Policy(), False, "auto"),
        (Policy(yes=True), True, "flag"),
        (Policy(deny=True), False, "flag"),
    ],
)
def test_high_risk_needs_yes_and_every_decision_is_an_event(policy, allowed, by):
    Risky.ran = 0
    executor, events = make(policy)
    (result,) = run(executor, [call("risky", {})])
    approvals = [e.value for e in events if isinstance(e, ev.Custom) and e.name == "approval"]
    assert approvals == [
        {
            "toolCallId": "c1",
            "tool": "risky",
            "risk": "high",
            "decision": "allow" if allowed else "deny",
            "by": by,
            "reason": approvals[0]["reason"],
        }
    ]
    assert Risky.ran == (1 if allowed else 0)
    assert executor.decision.denied == (0 if allowed else 1)
    assert (result.error is None) == allowed


def test_result_events_carry_latency_and_error_metadata():
    executor, events = make()
    run(executor, [call("broken", {"kind": "expected"})])
    (result,) = [e for e in events if isinstance(e, ev.ToolCallResult)]
    assert result.metadata["error"] == "no such thing"
    assert isinstance(result.metadata["latencyMs"], int)


def test_latency_is_the_tools_own_time_not_the_wait_for_approval():
    from agentcli.policy.engine import UserChoice

    async def slow_person(prompt: Any) -> UserChoice:
        await asyncio.sleep(0.6)
        return UserChoice("once")

    Risky.ran = 0
    executor, events = make(Policy(approver=slow_person))
    started = time.monotonic()
    (result,) = run(executor, [call("risky", {})])
    assert time.monotonic() - started >= 0.6 and result.error is None and Risky.ran == 1
    (finished,) = [e for e in events if isinstance(e, ev.ToolCallResult)]
    assert finished.metadata["latencyMs"] < 300


def test_refine_keeps_required_values_and_unknown_names():
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}, "b": {"type": "string"}, "c": {"type": "boolean"}},
        "required": ["a"],
    }
    assert refine_arguments({"a": None, "b": None, "z": 1}, schema) == {"a": None, "z": 1}
    assert refine_arguments({"a": "7", "c": "true"}, schema) == {"a": 7, "c": True}
    assert refine_arguments({"a": 1, "b": "", "c": ""}, schema) == {"a": 1, "b": ""}
    assert refine_arguments({"a": "seven"}, schema) == {"a": "seven"}  # validation will say so


def test_a_persons_approval_beyond_the_boundary_is_for_that_one_path(tmp_path):
    """At a terminal, one call beyond the boundary may be approved: the prompt offers no
    longer-lived choice, and what the call may then open is that path, nothing else."""
    from pathlib import Path

    from agentcli.policy.engine import UserChoice, offered
    from agentcli.tools.file_access import walk_base
    from agentcli.tools.read_file import ReadFile

    ws, outside = tmp_path / "ws", tmp_path / "elsewhere"
    ws.mkdir()
    outside.mkdir()
    (outside / "notes.txt").write_text("approved text\n")
    (outside / "other.txt").write_text("not approved\n")
    prompts = []

    async def approver(prompt):  # type: ignore[no-untyped-def]
        prompts.append(prompt)
        return UserChoice("once")

    registry = ToolRegistry([ReadFile()])
    policy = Policy(workspace=Workspace(ws), approver=approver)
    events: list[ev.Event] = []
    executor = Executor(registry, policy, ToolContext(workspace=Workspace(ws)), events.append)
    [result] = run(executor, [call("read_file", {"path": str(outside / "notes.txt")})])
    assert "approved text" in result.content
    [prompt] = prompts
    assert prompt.session_rules == [] and offered(prompt) == ["once", "deny"]
    # what the approval granted opens that path only: another one beyond stays refused
    granted = ToolContext(workspace=Workspace(ws), grant=outside / "notes.txt")
    target = Workspace(ws).resolve(str(outside / "other.txt"))
    with pytest.raises(ToolFailure, match="add-dir"):
        walk_base(granted, target, "other.txt", writing=False)
    assert walk_base(
        granted, Workspace(ws).resolve(str(outside / "notes.txt")), "n", writing=False
    ) == Path("/")
