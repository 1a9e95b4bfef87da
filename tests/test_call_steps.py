"""The one seam around a tool call: steps before the decision may refuse a call, ask for a
person or revise its arguments; steps around a call that runs see and change its result;
the policy's decision stands between them and a step never widens it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agentcli.agent.call_steps import InvalidArguments, Proceed, ToolCallFlight, ordered
from agentcli.agent.executor import Executor
from agentcli.assembly import builtin_tools
from agentcli.conversation import events as ev
from agentcli.conversation.messages import ToolCall
from agentcli.policy.engine import Policy, Prompt, UserChoice, offered
from agentcli.policy.rules import parse_rule
from agentcli.tools.base import ToolContext, ToolOutput
from agentcli.workspace.root import Workspace


class Refuse:
    stage = "before"

    def __init__(self) -> None:
        self.seen: list[str] = []

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        self.seen.append(flight.call.id)
        return ToolOutput.failure("blocked by the team's step: no writes today")


class Ask:
    stage = "before"

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        flight.ask_reasons.append("the team's step wants a person to look")
        return await proceed(flight)


class Revise:
    stage = "before"

    def __init__(self, arguments: dict[str, Any]) -> None:
        self.arguments = arguments

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        try:
            flight.revise(self.arguments)
        except InvalidArguments as invalid:
            return ToolOutput.failure(f"the step's arguments were refused: {invalid}")
        return await proceed(flight)


class Around:
    stage = "around"

    def __init__(self, log: list[str]) -> None:
        self.log = log

    async def __call__(self, flight: ToolCallFlight, proceed: Proceed) -> ToolOutput:
        self.log.append(f"before {flight.call.id}")
        output = await proceed(flight)
        self.log.append(f"after {flight.call.id} ran={flight.ran}")
        output.content += "\n[seen by the around step]"
        return output


def executor_in(
    root: Path, steps: list[Any], policy: Policy | None = None
) -> tuple[Executor, list[ev.Event]]:
    events: list[ev.Event] = []
    workspace = Workspace(root)
    policy = policy or Policy(workspace=workspace, yes=True)
    context = ToolContext(workspace=workspace)
    return Executor(builtin_tools(), policy, context, events.append, steps=steps), events


def write(path: str, content: str = "hello\n", call_id: str = "c1") -> ToolCall:
    return ToolCall(call_id, "write_file", json.dumps({"path": path, "content": content}))


def test_a_step_before_the_decision_refuses_and_nothing_runs(tmp_path: Path) -> None:
    refuse = Refuse()
    executor, events = executor_in(tmp_path, [refuse])
    [result] = asyncio.run(executor.run([write("a.txt")]))
    assert not (tmp_path / "a.txt").exists()
    assert "no writes today" in result.content
    assert refuse.seen == ["c1"]
    assert not any(isinstance(e, ev.Approval) for e in events)  # refused before the decision


def test_a_step_that_asks_is_asked_as_an_ask_rule_and_never_remembered(tmp_path: Path) -> None:
    prompts: list[Prompt] = []

    async def person(prompt: Prompt) -> UserChoice:
        prompts.append(prompt)
        return UserChoice("once")

    workspace = Workspace(tmp_path)
    policy = Policy(workspace=workspace, approver=person)
    executor, _ = executor_in(tmp_path, [Ask()], policy)
    asyncio.run(executor.run([write("a.txt", call_id="c1"), write("b.txt", call_id="c2")]))
    assert (tmp_path / "a.txt").exists() and (tmp_path / "b.txt").exists()
    assert len(prompts) == 2  # asked each time: nothing was remembered
    assert "the team's step wants a person to look" in prompts[0].reasons
    assert offered(prompts[0]) == ["once", "deny"]


def test_a_step_that_asks_with_nobody_there_is_a_denial(tmp_path: Path) -> None:
    """Even of a call that would run unasked (a low-risk read)."""
    (tmp_path / "a.txt").write_text("secret plans\n")
    read = ToolCall("c1", "read_file", json.dumps({"path": "a.txt"}))
    workspace = Workspace(tmp_path)
    executor, _ = executor_in(tmp_path, [], Policy(workspace=workspace))
    [plain] = asyncio.run(executor.run([read]))
    assert "secret plans" in plain.content  # low risk: it runs with nobody there
    executor, _ = executor_in(tmp_path, [Ask()], Policy(workspace=workspace))
    [result] = asyncio.run(executor.run([read]))
    assert "secret plans" not in result.content
    assert "the team's step wants a person to look" in result.content
    assert executor.decision.denied == 1


def test_revised_arguments_are_what_runs_and_what_is_decided_on(tmp_path: Path) -> None:
    prompts: list[Prompt] = []

    async def person(prompt: Prompt) -> UserChoice:
        prompts.append(prompt)
        return UserChoice("once")

    policy = Policy(workspace=Workspace(tmp_path), approver=person)
    revise = Revise({"path": "b.txt", "content": "other\n"})
    executor, _ = executor_in(tmp_path, [revise], policy)
    asyncio.run(executor.run([write("a.txt")]))
    assert not (tmp_path / "a.txt").exists()
    assert (tmp_path / "b.txt").read_text() == "other\n"
    [prompt] = prompts  # the person was shown what would really run
    assert prompt.request.arguments == {"path": "b.txt", "content": "other\n"}


def test_revised_arguments_outside_the_workspace_are_decided_as_such(tmp_path: Path) -> None:
    """A step cannot smuggle a path past the decision: the revision is assessed again."""
    root = tmp_path / "ws"
    root.mkdir()
    target = tmp_path / "outside.txt"
    executor, _ = executor_in(root, [Revise({"path": str(target), "content": "x\n"})])
    [result] = asyncio.run(executor.run([write("a.txt")]))
    assert not target.exists() and not (root / "a.txt").exists()
    assert result.content.startswith("denied:")
    assert "outside" in result.content or "beyond" in result.content


def test_revised_arguments_the_schema_refuses_do_not_run(tmp_path: Path) -> None:
    executor, _ = executor_in(tmp_path, [Revise({"path": 7})])
    [result] = asyncio.run(executor.run([write("a.txt")]))
    assert "the step's arguments were refused" in result.content
    assert "invalid arguments for write_file" in result.content
    assert not (tmp_path / "a.txt").exists()


def test_an_around_step_wraps_a_call_that_runs_and_only_those(tmp_path: Path) -> None:
    log: list[str] = []
    workspace = Workspace(tmp_path)
    policy = Policy(workspace=workspace, yes=True)
    policy.rules.deny.append(parse_rule("write_file(b.txt)", "flag"))
    executor, _ = executor_in(tmp_path, [Around(log)], policy)
    ok, refused = asyncio.run(
        executor.run([write("a.txt", call_id="c1"), write("b.txt", call_id="c2")])
    )
    assert ok.content.endswith("[seen by the around step]")
    assert not refused.content.endswith("[seen by the around step]")
    assert log == ["before c1", "after c1 ran=True"]  # the denied call never reached it


def test_a_deny_rule_wins_over_every_step(tmp_path: Path) -> None:
    """A step that lets a call go on widens nothing: the rule still refuses it."""
    workspace = Workspace(tmp_path)
    policy = Policy(workspace=workspace, yes=True)
    policy.rules.deny.append(parse_rule("write_file", "flag"))
    executor, _ = executor_in(tmp_path, [Revise({"path": "a.txt", "content": "x"})], policy)
    [result] = asyncio.run(executor.run([write("a.txt")]))
    assert not (tmp_path / "a.txt").exists()
    assert "the rule write_file denies it" in result.content


def test_steps_take_their_place_by_stage_not_by_the_order_given() -> None:
    around, before = Around([]), Refuse()
    decision = type("Decision", (), {"stage": "decision"})()
    assert ordered([around, decision, before]) == [before, decision, around]
    with pytest.raises(ValueError, match="stage"):
        ordered([type("Odd", (), {"stage": "later"})()])
