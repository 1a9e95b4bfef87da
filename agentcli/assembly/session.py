"""A session's agent, put together from its settings: the workspace, the sandbox, the policy,
the tools, the executor with the steps around each call, the provider — and what MCP
servers may ask of the session. The one place that does it: `run`, the REPL, `serve`, a
subagent and `mcp serve` all call `open_agent`, handing over the long-lived parts they
already hold as one `SharedParts`."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Callable, Sequence
from typing import TYPE_CHECKING, Any

from agentcli.records import dataclass, field

if TYPE_CHECKING:
    from agentcli.agent.call_steps import CallStep
    from agentcli.agent.session import Agent
    from agentcli.assembly.subagents import Lineage
    from agentcli.habits.hooks import Hooks
    from agentcli.habits.skills import Skills
    from agentcli.output.base import Output
    from agentcli.policy.engine import Approver
    from agentcli.process.run import LiveTrees
    from agentcli.providers.base import Provider
    from agentcli.sandbox.confine import Sandbox
    from agentcli.sessions.session import Session
    from agentcli.settings import RunSettings
    from agentcli.tools.registry import ToolRegistry


@dataclass(slots=True)
class SharedParts:
    """What a REPL or a server keeps across the agents it opens, and closes itself: the
    REPL its sandbox and tools (MCP servers keep running through /clear and /resume), a
    server its provider (one HTTP pool for every run) and its process trees."""

    provider: Provider | None = None
    registry: ToolRegistry | None = None
    sandbox: Sandbox | None = None
    processes: LiveTrees | None = None
    # Steps around every tool call of every agent opened with these parts.
    steps: list[CallStep] = field(default_factory=list)
    skills: Skills | None = None  # found once: their folders are places of `sandbox`
    hooks: Hooks | None = None  # found once, run by each agent

    async def aclose(self) -> None:
        """The holder is done: every process its agents started, the MCP servers, the
        sandbox they ran in, the provider."""
        if self.processes is not None:
            await self.processes.stop_all()
        if self.registry is not None:
            await self.registry.aclose()
        if self.sandbox is not None:
            self.sandbox.close()
        if self.provider is not None:
            await self.provider.aclose()


def long_lived_tools(settings: RunSettings) -> SharedParts:
    """The sandbox and the tools that outlive each agent of a REPL (started now: MCP
    servers take a while)."""
    from agentcli.assembly.habits import session_hooks, session_skills, skill_places
    from agentcli.assembly.tools import session_registry
    from agentcli.sandbox.confine import session_sandbox
    from agentcli.workspace.root import Workspace

    skills = session_skills(settings)
    hooks = session_hooks(settings)  # before anything starts: a bad one stops the REPL
    sandbox = session_sandbox(settings, skill_places(skills))
    try:
        registry = session_registry(
            settings.config, settings.provider, Workspace(settings.workspace), sandbox
        )
    except BaseException:
        sandbox.close()
        raise
    return SharedParts(registry=registry, sandbox=sandbox, skills=skills, hooks=hooks)


# Tools `mcp serve` never lends: ask_user would ask a person the client's agent has its own
# way to reach.
NOT_LENT = frozenset({"ask_user"})


def lent_tools(settings: RunSettings, *, configured: bool) -> SharedParts:
    """`agentcli mcp serve`'s parts: the sandbox and the tools it lends — the built-ins, and
    with `configured` the configuration's command tools, the plug-ins' and the MCP
    servers' (started now) — and no model: the client's agent brings its own. Must be
    called on the running event loop (the sources start in its background)."""
    from agentcli.assembly.habits import session_skills, skill_places
    from agentcli.assembly.tools import add_extensions, build_registry
    from agentcli.providers.no_model import NoModel
    from agentcli.sandbox.confine import session_sandbox
    from agentcli.tools.registry import ToolRegistry
    from agentcli.workspace.root import Workspace

    skills = session_skills(settings)
    sandbox = session_sandbox(settings, skill_places(skills))
    try:
        built = build_registry(settings.config, None)
        if not configured:
            built = ToolRegistry(tool for tool in built if tool.source == "builtin")
        registry = ToolRegistry(tool for tool in built if tool.name not in NOT_LENT)
        if configured:
            add_extensions(registry, settings.config, Workspace(settings.workspace), sandbox)
        registry.start()
    except BaseException:
        sandbox.close()
        raise
    provider = NoModel("agentcli mcp serve runs no model: the client's agent decides the calls")
    return SharedParts(provider=provider, registry=registry, sandbox=sandbox, skills=skills)


def new_provider(settings: RunSettings) -> Provider:
    """The provider the settings name (one a server shares, or `/model`'s next one)."""
    from agentcli.providers.factory import make_provider

    return make_provider(settings)


def open_agent(
    settings: RunSettings,
    session: Session,
    outputs: Sequence[Output],
    *,
    approver: Approver | None = None,
    shared: SharedParts | None = None,
    steps: Sequence[CallStep] = (),
    lineage: Lineage | None = None,
) -> Agent:
    """A session's agent with every part it runs on: built here, or taken from `shared`
    (whose holder closes them). `steps`: around this agent's tool calls, after the shared
    ones. `lineage`: a subagent's, what it takes from the agent that starts it
    (agentcli.assembly.subagents). Whatever fails part-way closes what was already built."""
    shared = shared or SharedParts()
    owned: list[Callable[[], Any]] = []
    try:
        return _assemble(
            settings, session, outputs, approver, shared, [*shared.steps, *steps], owned, lineage
        )
    except BaseException:
        _close_now(owned)
        raise


def open_subagent(
    settings: RunSettings,
    session: Session,
    outputs: Sequence[Output],
    *,
    approver: Approver | None,
    steps: Sequence[CallStep],
    lineage: Lineage,
    **parts: Any,
) -> Agent:
    """A subagent's agent, on the parts of the agent that starts it (`parts`: SharedParts'
    fields); handed to agentcli.assembly.subagents, which needs nothing else of the root."""
    return open_agent(
        settings,
        session,
        outputs,
        approver=approver,
        shared=SharedParts(**parts),
        steps=steps,
        lineage=lineage,
    )


def _close_now(closers: list[Callable[[], Any]]) -> None:
    """What a failed assembly had built, closed: at once, or on the running event loop."""
    import asyncio
    import inspect

    for close in closers:
        closing = close()
        if not inspect.isawaitable(closing):
            continue
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            asyncio.run(_awaited(closing))
        else:
            _closing.add(task := loop.create_task(_awaited(closing)))
            task.add_done_callback(_closing.discard)


_closing: set[Any] = set()  # closes still running (a task with no reference may vanish)


async def _awaited(closing: Any) -> None:
    await closing


def _assemble(
    settings: RunSettings,
    session: Session,
    outputs: Sequence[Output],
    approver: Approver | None,
    shared: SharedParts,
    steps: list[CallStep],
    owned: list[Callable[[], Any]],
    lineage: Lineage | None = None,
) -> Agent:
    from agentcli.agent.executor import Executor
    from agentcli.agent.session import Agent, AgentParts
    from agentcli.assembly.habits import hook_parts, session_hooks, session_skills, skill_places
    from agentcli.assembly.subagents import subagents_for
    from agentcli.assembly.tools import session_registry
    from agentcli.context.instructions import find_instructions, instructions_block
    from agentcli.context.system_prompt import build_system_prompt
    from agentcli.habits.skills import prompt_section
    from agentcli.mcp.client_features import bind_session, instructions_section, roots_of
    from agentcli.output.base import FanOut
    from agentcli.paths import data_dir
    from agentcli.policy.setup import build_policy
    from agentcli.process.env import child_environment
    from agentcli.process.jobs import JobManager
    from agentcli.process.run import LiveTrees
    from agentcli.sandbox.confine import session_sandbox
    from agentcli.tools.base import ToolContext
    from agentcli.workspace.changes import WorkspaceChanges
    from agentcli.workspace.root import Workspace

    config = settings.config
    hooks = shared.hooks if shared.hooks is not None else session_hooks(settings)
    # The provider first: a configuration it refuses fails before anything is started.
    provider = shared.provider
    if provider is None:
        provider = new_provider(settings)
        owned.append(provider.aclose)
    emit = FanOut([session, *outputs])
    workspace = Workspace(settings.workspace)
    skills = shared.skills if shared.skills is not None else session_skills(settings)
    sandbox = shared.sandbox
    if sandbox is None:
        sandbox = session_sandbox(settings, skill_places(skills))
        owned.append(sandbox.close)
    if lineage is not None:  # a subagent: its parent's policy, remembered choices and all
        policy = lineage.policy
    else:
        policy = build_policy(
            config,
            workspace,
            yes=settings.yes,
            deny=settings.deny,
            allow=list(settings.allow),
            forbid=list(settings.forbid),
            approver=approver,
            allow_network=sandbox.settings.allow_network,
        )
        policy.sandbox = sandbox
    registry = shared.registry
    if registry is None:
        registry = session_registry(config, settings.provider, workspace, sandbox)
        owned.insert(0, registry.aclose)  # closed before the sandbox its servers run in
    output_dir = data_dir() / "outputs" / session.id
    limit = config.get("shell.output_limit")
    processes = shared.processes if shared.processes is not None else LiveTrees()
    child_env = child_environment(config.get("shell.env"), provider_keys=[settings.api_key_env])
    context = ToolContext(
        workspace=workspace,
        output_dir=output_dir,
        child_env=child_env,
        boundary=sandbox.boundary(child_env, output_dir),
        jobs=JobManager(output_dir, limit=limit, live=processes, saving=session),
        processes=processes,
        output_limit=limit,
        image_limit=config.get("images.max_bytes"),
        python=config.get("shell.python"),
        ask=getattr(approver, "question", None),  # a person, if one is there
        sandbox=sandbox,
        changes=WorkspaceChanges(workspace.root),  # for the REPL's /diff
        saving=session,  # a full or read-only data directory: said once, never lost
        subagents=subagents_for(registry, approver, skills, lineage, open_subagent),
    )
    event_hooks = None
    if lineage is None:
        # A subagent runs its parent's steps (these among them), so they are added once:
        # its changes are kept by the parent's checkpoint, in the parent's turn, and the
        # session's own events (SessionStart, Stop, …) are the parent's.
        hook_steps, event_hooks = hook_parts(hooks, workspace.root, child_env, session, emit)
        if event_hooks is not None:
            emit.outputs.append(event_hooks)  # Notification: a call waiting for an approval
        # A PostToolUse hook inside the checkpoint: what it changes (a formatter) is the call's.
        steps = [
            *steps,
            *_checkpoints(settings, session, workspace.root, emit),
            *hook_steps,
            _overwrite_asks(lambda: agent.settings),  # `agent`: made below, asked per call
        ]
    executor = Executor(
        registry,
        policy,
        context,
        emit,
        max_concurrency=config.get("tools.concurrency"),
        max_invalid_calls=config.get("tools.max_invalid_calls"),
        steps=steps,
    )
    instructions = find_instructions(settings.workspace, config.get("instructions.files"))
    skills_said = prompt_section(skills, settings.workspace)

    def system_prompt() -> str:
        return build_system_prompt(
            settings.workspace,
            settings.system,
            instructions_block(instructions, settings.workspace),
            instructions_section(registry.sources),
            skills=skills_said,
        )

    agent = Agent(
        AgentParts(
            settings=settings,
            session=session,
            emit=emit,
            workspace=workspace,
            policy=policy,
            registry=registry,
            context=context,
            executor=executor,
            provider=provider,
            processes=processes,
            sandbox=sandbox,
            system_prompt=system_prompt,
            instructions=instructions,
            owns_provider=shared.provider is None,
            hooks=event_hooks,
            owned=[close for close in owned if close != provider.aclose],
            budget=lineage.budget if lineage is not None else None,
        )
    )
    if context.subagents is not None:
        context.subagents.parent = agent
    if lineage is not None:
        return agent  # MCP servers' requests stay with the session's agent
    bind_session(  # what MCP servers may ask of this session: roots, the person, the model
        registry.sources,
        emit=emit,
        person=policy.approver,
        policy=policy,
        provider=lambda: agent.provider,
        roots=roots_of(workspace.root, sandbox),
        in_turn=lambda: agent.in_turn,
    )
    return agent


def _overwrite_asks(current: Callable[[], RunSettings]) -> CallStep:
    """The step that has a person asked before a whole-file overwrite the embedded small
    model chose (`--yes` does not answer it), while the model in use is the local one."""
    from agentcli.agent.overwrite_step import OverwriteAsksStep
    from agentcli.providers.table import provider_spec

    def asks() -> bool:
        spec = provider_spec(current().provider.type)
        return spec is not None and spec.overwrites_need_a_person

    return OverwriteAsksStep(asks)


def _checkpoints(settings: RunSettings, session: Session, root: Any, emit: Any) -> list[CallStep]:
    """The step that keeps what each turn changes, for /rewind (none when turned off)."""
    from agentcli.agent.checkpoint_step import CheckpointStep, current_turn
    from agentcli.workspace.checkpoints import checkpoints_for

    store = checkpoints_for(settings.config, session.id, root)
    return [CheckpointStep(store, lambda: current_turn(session.conversation), emit)]


async def switch_model(agent: Agent, settings: RunSettings) -> None:
    """`/model NAME`: the agent's next turns go to the model `settings` name."""
    replaced = agent.use_model(settings, new_provider(settings))
    await replaced.aclose()


@contextlib.asynccontextmanager
async def model_for_one_turn(agent: Agent, settings: RunSettings) -> AsyncIterator[None]:
    """A custom command's `model`: the agent's turns go to the model `settings` name until
    the block ends, then to the one before (whose provider is kept, not made again)."""
    before = agent.settings
    replaced = agent.use_model(settings, new_provider(settings))
    try:
        yield
    finally:
        used = agent.use_model(before, replaced)
        await used.aclose()
