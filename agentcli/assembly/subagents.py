"""Subagents as parts of a session: what the `task` tool hands a sub-task to. The
composition root gives each agent that may start subagents one `Subagents`; its `run`
opens a fresh agent through the same root (`open_agent`), on the parent's parts:

- the same provider (unless the definition names another model), registry, sandbox and
  process trees, and the same policy object — its rules, the choices a person made this
  session, its approver (who sees that the subagent asks);
- the parent's steps around each call (hooks, a command's narrowed tools), then its own:
  its definition's `tools` as a narrowing step, and its name on each request;
- offered only the tools its definition keeps (never more than the parent's), without
  `task` once agents.max_depth is reached;
- a step budget inside its parent's, so that --max-steps bounds the whole; --timeout is
  the parent's, whose cancel (Ctrl-C, a signal, the time limit) ends it too.

Its events go into its parent's stream, nested under the call (agentcli.output.nested);
its final answer is the call's result."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agentcli.records import dataclass

if TYPE_CHECKING:
    from agentcli.agent.budget import StepBudget
    from agentcli.agent.session import Agent
    from agentcli.habits.subagents import Definition
    from agentcli.habits.subagents import Subagents as Definitions
    from agentcli.policy.engine import Approver, Policy
    from agentcli.tools.base import Tool, ToolOutput

# The root's way to open an agent (agentcli.assembly.session.open_subagent): handed in, so
# that this module needs nothing of the root's.
OpenAgent = Callable[..., "Agent"]


@dataclass(slots=True)
class Lineage:
    """What a subagent's assembly takes from the agent that starts it."""

    policy: Policy
    budget: StepBudget
    depth: int  # 1: a subagent of the session's agent


class Subagents:
    """One agent's way to start subagents (it is `ToolContext.subagents`)."""

    def __init__(
        self,
        definitions: Definitions,
        *,
        depth: int,
        max_depth: int,
        approver: Approver | None,
        skills: Any,
        open_agent: OpenAgent,
    ) -> None:
        self.definitions = definitions
        self.open_agent = open_agent
        self.depth = depth  # the parent's: 0 for the session's agent
        self.max_depth = max_depth
        self.approver = approver
        self.skills = skills
        self.parent: Agent | None = None  # bound once the root has made it

    async def run(self, name: str, prompt: str, call_id: str) -> ToolOutput:
        from agentcli.tools.base import ToolFailure

        definition = self.definitions.named(name)
        if definition is None:
            names = ", ".join(self.definitions.found)
            raise ToolFailure(f"no subagent is named {name!r}; these are: {names}")
        parent = self.parent
        if parent is None:
            raise ToolFailure("this agent cannot start subagents")
        return await _run(self, parent, definition, prompt, call_id)


async def _run(
    runner: Subagents, parent: Agent, definition: Definition, prompt: str, call_id: str
) -> ToolOutput:
    from agentcli.agent.budget import StepBudget
    from agentcli.agent.narrowed_tools import NarrowedTools
    from agentcli.conversation import events as ev
    from agentcli.conversation.messages import new_id
    from agentcli.errors import AgentCliError
    from agentcli.output.nested import NestedOutput
    from agentcli.tools.base import ToolFailure

    name = definition.name
    settings = _settings(parent, definition)
    budget = StepBudget(definition.max_steps or parent.settings.max_steps, parent.loop.budget)
    settings = _replace(settings, max_steps=budget.limit)
    rules = _rules(definition, parent)
    steps: list[Any] = [s for s in parent.executor.steps if s is not parent.executor.decision]
    if rules is not None:
        steps.append(NarrowedTools(rules, f"the subagent {name}", "tools"))
    steps.append(_asker(name))
    same_model = settings.model == parent.settings.model
    run_id = new_id("run")
    nested = NestedOutput(parent.emit, parent.run_id, call_id, name, run_id)
    try:
        child = runner.open_agent(
            settings,
            _session(parent),
            [nested],
            approver=runner.approver,
            provider=parent.provider if same_model else None,
            registry=_offered(parent, definition, rules, runner),
            sandbox=parent.sandbox,
            processes=parent.processes,
            skills=runner.skills,
            steps=steps,
            lineage=Lineage(parent.policy, budget, runner.depth + 1),
        )
    except AgentCliError as error:  # its model's provider refused its configuration, say
        raise ToolFailure(f"the subagent {name} could not start: {error}") from None
    child.thread_id = parent.thread_id
    try:
        summary = await child.run_turn(prompt, run_id=run_id)
    except asyncio.CancelledError:  # the parent's turn was cancelled or timed out
        outcome = {"type": "cancelled"}
        nested.handle(ev.RunFinished(thread_id=parent.thread_id, run_id=run_id, outcome=outcome))
        raise
    finally:
        parent.executor.decision.denied += child.executor.decision.denied
        await child.aclose(stop_all=False)
    return _result(name, summary, budget, definition)


def _settings(parent: Agent, definition: Definition) -> Any:
    """The parent's settings with the definition's prompt and model, and no time limit of
    its own (the parent's bounds the whole)."""
    from agentcli.errors import AgentCliError
    from agentcli.tools.base import ToolFailure

    settings = parent.settings
    if definition.model and definition.model != str(parent.model):
        from agentcli.assembly.settings import with_model

        try:
            settings = with_model(settings, definition.model)
        except AgentCliError as error:
            raise ToolFailure(
                f"the subagent {definition.name} ({definition.origin}) names the model "
                f"{definition.model!r}, which agentcli cannot use: {error}"
            ) from None
    return _replace(settings, system=definition.prompt or None, timeout=None)


def _replace(settings: Any, **changes: Any) -> Any:
    from agentcli.records import replace

    return replace(settings, **changes)


def _rules(definition: Definition, parent: Agent) -> list[Any] | None:
    """The definition's tools as narrowing rules (None: not narrowed): its `tools`, or,
    when it only takes some away (`disallowedTools`), every other tool offered now."""
    from agentcli.habits.commands import tool_rules
    from agentcli.habits.front_matter import FrontMatterError
    from agentcli.policy.rules import Rule
    from agentcli.tools.base import ToolFailure

    try:
        rules, _unknown = tool_rules(definition.tools)
        taken, _ = tool_rules(definition.disallowed or None)
    except FrontMatterError as problem:
        where = f"the subagent {definition.name} ({definition.origin})"
        raise ToolFailure(f"{where}: {problem}") from None
    if not taken:
        return rules
    away = {rule.tool for rule in taken}
    if rules is None:
        rules = [Rule(tool, None, "tools") for tool in parent.registry.names()]
    return [rule for rule in rules if rule.tool not in away]


def _offered(parent: Agent, definition: Definition, rules: list[Any] | None, runner: Subagents):
    """The parent's tools as the subagent is offered them."""
    from agentcli.tools.subset import ToolSubset
    from agentcli.tools.task import NAME as TASK

    last = runner.depth + 1 >= runner.max_depth  # it may start none

    def offered(tool: str) -> bool:
        if tool == TASK and last:
            return False
        return rules is None or any(rule.names(tool) for rule in rules)

    return ToolSubset(parent.registry, offered)


def _asker(name: str) -> Any:
    from agentcli.agent.asker_step import NamedAsker

    return NamedAsker(name)


def _session(parent: Agent) -> Any:
    """A conversation of its own, not a file of its own: its events are recorded in the
    parent's session, under the call."""
    from agentcli.conversation.messages import Conversation
    from agentcli.sessions.session import Session
    from agentcli.sessions.store import new_session_id

    child_id = new_session_id()
    header = {"t": "session", "id": child_id, "parent": parent.session.id}
    return Session(child_id, parent.session.path, header, Conversation())


def _result(name: str, summary: Any, budget: StepBudget, definition: Definition) -> ToolOutput:
    from agentcli.conversation.error_kinds import FAILED
    from agentcli.policy.engine import TurnCancelled
    from agentcli.tools.base import ToolOutput

    steps = f"{summary.steps} step{'s' if summary.steps != 1 else ''}"
    if summary.status == "finished":
        text = summary.final_text.strip() or f"(the subagent {name} answered with no text)"
        return ToolOutput(text, summary=f"{name} answered after {steps}")
    if summary.status == "cancelled":
        raise TurnCancelled("interrupted")  # a person stopped it at a prompt: the whole turn ends
    said = f" Its last words: {summary.final_text.strip()}" if summary.final_text.strip() else ""
    whole_spent = budget.parent is not None and budget.parent.spent
    if summary.status == "max_steps" and definition.max_steps and not whole_spent:
        limit = f"{budget.limit} step{'s' if budget.limit != 1 else ''}"
        why = f"it used the {limit} its definition gives it ({definition.origin})"
    elif summary.status == "max_steps":
        why = "the run reached --max-steps (its steps and its parent's together)"
    else:
        why = summary.error or summary.status
    return ToolOutput.failure(
        f"the subagent {name} stopped before it finished: {why}.{said}", FAILED
    )


def task_tool(config: Any, workspace: Path) -> Tool | None:
    """The `task` tool, naming the subagents found (None when agents.max_depth is 0)."""
    from agentcli.habits.subagents import GENERAL, find_subagents
    from agentcli.tools.task import Task

    max_depth = config.get("agents.max_depth")
    if max_depth < 1:
        return None
    return Task(find_subagents(workspace, config.trusted), GENERAL, max_depth)


def subagents_for(
    registry: Any,
    approver: Approver | None,
    skills: Any,
    lineage: Lineage | None,
    open_agent: OpenAgent,
) -> Subagents | None:
    """What the agent being made hands sub-tasks to; None when it may start none (no
    `task` tool, or agents.max_depth reached)."""
    from agentcli.tools.task import NAME, Task

    task = registry.get(NAME)
    depth = lineage.depth if lineage is not None else 0
    if not isinstance(task, Task) or depth >= task.max_depth:
        return None
    return Subagents(
        task.definitions,
        depth=depth,
        max_depth=task.max_depth,
        approver=approver,
        skills=skills,
        open_agent=open_agent,
    )
