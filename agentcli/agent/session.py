"""One session's agent: provider, tools, policy (with its remembered choices), executor and
loop, wired once and then asked turn after turn — by `run` once, by the REPL many times.

Each turn is one AG-UI run: RUN_STARTED, the steps, then RUN_FINISHED or RUN_ERROR. Every
way a turn can end (finished, step limit, timeout, provider failure, cancel, a closed
stdout, a bug) becomes a summary with a documented exit code; a cancelled turn leaves the
conversation valid (its partial answer marked, its unanswered calls answered)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from agentcli.agent.compaction import Compactor
from agentcli.agent.executor import Executor
from agentcli.agent.loop import AgentLoop
from agentcli.agent.stream_limits import StreamLimits
from agentcli.assembly import session_registry
from agentcli.context.instructions import find_instructions, instructions_block
from agentcli.context.system_prompt import build_system_prompt
from agentcli.conversation import events as ev
from agentcli.conversation.images import ImagePart
from agentcli.conversation.messages import Message, new_id
from agentcli.errors import AgentCliError, ExitCode
from agentcli.mcp.client_features import bind_session, instructions_section, roots_of
from agentcli.output.base import FanOut, Output, RunSummary
from agentcli.paths import data_dir
from agentcli.policy.engine import Approver, TurnCancelled
from agentcli.policy.setup import build_policy
from agentcli.process.env import child_environment
from agentcli.process.jobs import JobManager
from agentcli.process.run import LiveTrees
from agentcli.providers.base import Provider
from agentcli.providers.factory import make_provider
from agentcli.records import dataclass
from agentcli.sandbox.confine import Sandbox, session_sandbox
from agentcli.sessions.session import Session
from agentcli.settings import ModelSpec, RunSettings, context_window
from agentcli.text.decoding import shown
from agentcli.tools.base import ToolContext
from agentcli.tools.registry import ToolRegistry
from agentcli.workspace.changes import WorkspaceChanges
from agentcli.workspace.root import Workspace

INTERRUPTED_MARK = "\n\n[interrupted by the user]"


@dataclass(slots=True)
class Ending:
    status: str  # finished | pending | max_steps | timeout | error | cancelled | output_closed
    exit_code: int
    error: str | None = None
    code: str | None = None  # RUN_ERROR's machine-readable code


class Agent:
    def __init__(
        self,
        settings: RunSettings,
        session: Session,
        outputs: list[Output],
        *,
        approver: Approver | None = None,
        provider: Provider | None = None,
        registry: ToolRegistry | None = None,
        processes: LiveTrees | None = None,
        sandbox: Sandbox | None = None,
    ) -> None:
        """`provider`: one shared by many agents (agentcli serve), not closed by this one;
        `processes`: the process trees its commands join (a server's, shared by its runs);
        by default its own."""
        self.settings = settings
        self.session = session
        self.emit = FanOut([session, *outputs])
        config = settings.config
        self.workspace = Workspace(settings.workspace)
        # The REPL hands its sandbox (and registry) to each agent it makes: one guard of the
        # protected paths, one temp directory, for its MCP servers and commands alike.
        self._owns_sandbox = sandbox is None
        self.sandbox = sandbox or session_sandbox(settings)
        self.policy = build_policy(
            config,
            self.workspace,
            yes=settings.yes,
            deny=settings.deny,
            allow=list(settings.allow),
            forbid=list(settings.forbid),
            approver=approver,
            allow_network=self.sandbox.settings.allow_network,
        )
        self.policy.sandbox = self.sandbox
        # The REPL hands its registry to each agent it makes (/clear, /resume), so MCP
        # servers keep running; otherwise the agent has its own, started now.
        self._owns_registry = registry is None
        self.registry = registry or session_registry(
            config, settings.provider, self.workspace, self.sandbox
        )
        self._announced: set[str] = set()  # MCP servers whose start was reported
        self.output_dir = data_dir() / "outputs" / session.id
        limit = config.get("shell.output_limit")
        self.processes = processes if processes is not None else LiveTrees()
        child_env = child_environment(config.get("shell.env"), provider_keys=[settings.api_key_env])
        self.context = ToolContext(
            workspace=self.workspace,
            output_dir=self.output_dir,
            child_env=child_env,
            boundary=self.sandbox.boundary(child_env, self.output_dir),
            jobs=JobManager(self.output_dir, limit=limit, live=self.processes, saving=session),
            processes=self.processes,
            output_limit=limit,
            image_limit=config.get("images.max_bytes"),
            python=config.get("shell.python"),
            ask=getattr(self.policy.approver, "question", None),  # a person, if one is there
            sandbox=self.sandbox,
            changes=WorkspaceChanges(self.workspace.root),  # for the REPL's /diff
            saving=session,  # a full or read-only data directory: said once, never lost
        )
        self.executor = Executor(
            self.registry,
            self.policy,
            self.context,
            self.emit,
            max_concurrency=config.get("tools.concurrency"),
            max_invalid_calls=config.get("tools.max_invalid_calls"),
        )
        self.instructions = find_instructions(settings.workspace, config.get("instructions.files"))
        self.model = settings.model
        self._owns_provider = provider is None
        self.provider = provider or make_provider(settings)
        if hasattr(self.provider, "thread_id"):  # a remote AG-UI agent: the session's thread
            self.provider.thread_id = session.id
        bind_session(  # what MCP servers may ask of this session: roots, the person, the model
            self.registry.sources,
            emit=self.emit,
            person=self.policy.approver,
            policy=self.policy,
            provider=lambda: self.provider,
            roots=roots_of(self.workspace.root, self.sandbox),
            in_turn=lambda: self._turn is not None,
        )
        self.loop = self._build_loop()
        self.usage = ev.Usage()  # the whole session's tokens, for /usage
        self.thread_id = session.id  # AG-UI's threadId (a served thread names its own)
        self.pending: list[str] = []  # calls a client must answer before the turn goes on
        self._cancel_code: int | None = None
        self._turn: asyncio.Task | None = None

    def _warm_provider(self) -> None:
        warm = getattr(self.provider, "warm", None)
        if warm is not None and self.registry.starting:
            warm()

    def _build_loop(self) -> AgentLoop:
        config, settings = self.settings.config, self.settings
        compactor = Compactor(
            self.provider,
            window=context_window(config, str(self.model)),
            threshold=config.get("context.threshold"),
            keep_turns=config.get("context.keep_turns"),
            emit=self.emit,
            on_compacted=self.session.record_compaction,
        )
        return AgentLoop(
            self.provider,
            self.executor,
            self.emit,
            system=self._built_system(),
            tools=self.registry.specs(),
            max_steps=settings.max_steps,
            compactor=compactor,
            refresh_tools=self._refresh_tools,
            limits=StreamLimits(
                tool_arguments=config.get("limits.tool_arguments"),
                text_message=config.get("limits.text_message"),
            ),
            images_per_request=config.get("images.max_per_request"),
        )

    def _built_system(self) -> str:
        """agentcli's, the project's, the instructions of trusted MCP servers running (none
        before they start), then --system."""
        self._system = build_system_prompt(
            self.settings.workspace,
            self.settings.system,
            instructions_block(self.instructions, self.settings.workspace),
            instructions_section(self.registry.sources),
        )
        return self._system

    def _update_system(self) -> None:
        """Once servers have started, their instructions join the system prompt; what a
        served run added after it (a client's context) stays at its end."""
        current, before = self.loop.system, self._system
        added = current[len(before) :] if current.startswith(before) else ""
        if self._built_system() != before:
            self.loop.system = self._system + added

    async def _refresh_tools(self) -> list[dict]:
        """Before every step: the tools as their sources list them now; what went wrong
        with a source (a server that did not start, a name clash) is said once."""
        if self.registry.starting and not self._announced:
            # Once the servers are spawned the loop waits on them: build the provider's
            # client then, so the first request leaves as soon as the last one is ready.
            asyncio.get_running_loop().call_later(0.05, self._warm_provider)
        for problem in await self.registry.refresh():
            self.emit(ev.RunWarning(message=problem))
        for source in self.registry.sources:
            if source.kind == "mcp" and source.name not in self._announced:
                self._announced.add(source.name)
                status = getattr(source, "status", None)
                if status is not None:
                    self.emit(ev.Custom(name="mcp_server", value=status()))
        self._update_system()
        return self.registry.specs()

    async def switch_model(self, spec: ModelSpec, settings: RunSettings) -> None:
        """`/model NAME`: the next turns go to another model (the conversation stays)."""
        await self.provider.aclose()
        self.settings, self.model = settings, spec
        self.provider = make_provider(settings)
        self.loop = self._build_loop()

    def cancel(self, code: int = ExitCode.INTERRUPTED) -> bool:
        """Cancels the turn in progress (Ctrl-C, SIGTERM). False when there is none."""
        if self._turn is None or self._turn.done() or self._cancel_code is not None:
            return False
        self._cancel_code = code
        self._turn.cancel()
        return True

    async def run_turn(
        self,
        prompt: str | None,
        *,
        run_id: str | None = None,
        prelude: Callable[[], Awaitable[None]] | None = None,
        images: list[ImagePart] | None = None,
    ) -> RunSummary:
        """One run. `prelude` (a served run) adds the client's messages and answers once
        the run has started; without it, `prompt` is the new user message (with `images`,
        attached by `@path`)."""
        run_id = run_id or new_id("run")
        self._cancel_code = None
        self._turn = asyncio.current_task()
        self.executor.denied = 0
        self.executor.give_up = None
        self.executor.deferred = []
        self.pending = []
        conversation = self.session.conversation
        if prelude is None:
            conversation.repair()  # before the new prompt, so results follow their calls
            if prompt is not None:  # typed or piped: no lone surrogate goes further
                conversation.add(Message.user(shown(prompt), images))
        self.emit(ev.RunStarted(thread_id=self.thread_id, run_id=run_id))
        if self.instructions:
            files = [str(i.path) for i in self.instructions]
            self.emit(ev.Instructions(files=files))
        try:
            ending = await self._drive(prelude)
        finally:
            self._turn = None
        if ending.status == "cancelled":
            self._leave_valid_history()
        if ending.exit_code == ExitCode.OK and self.executor.denied:
            ending.exit_code = ExitCode.DENIED
        state = self.loop.state
        self.usage.add(state.usage)
        summary = RunSummary(
            thread_id=self.thread_id,
            run_id=run_id,
            model=str(self.model),
            status=ending.status,
            exit_code=ending.exit_code,
            steps=state.steps,
            usage=state.usage,
            final_text=state.collector.text if state.collector is not None else state.final_text,
            error=ending.error,
        )
        if ending.status != "output_closed":
            self._emit_ending(summary, ending.code)
        return summary

    async def _drive(self, prelude: Callable[[], Awaitable[None]] | None = None) -> Ending:
        settings = self.settings
        try:
            async with asyncio.timeout(settings.timeout):
                if prelude is not None:
                    await prelude()
                status = await self.loop.run(self.session.conversation)
        except TimeoutError:
            message = f"the run reached --timeout {settings.timeout:g}s before the model finished"
            return Ending("timeout", ExitCode.LIMIT, message, "timeout")
        except asyncio.CancelledError:
            if self._cancel_code is None:
                raise  # not ours: let whoever cancelled see it
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
            return Ending("cancelled", self._cancel_code, "interrupted")
        except TurnCancelled:
            return Ending("cancelled", ExitCode.INTERRUPTED, "interrupted")
        except BrokenPipeError:
            return Ending("output_closed", ExitCode.OUTPUT_CLOSED)
        except AgentCliError as failure:
            return Ending("error", failure.exit_code, str(failure), failure.code)
        except Exception as bug:  # an internal error still ends in one line and a summary
            message = f"internal error: {type(bug).__name__}: {bug}"
            if settings.debug:
                import traceback

                traceback.print_exc()
            else:
                message += " (rerun with --debug for the traceback)"
            return Ending("error", ExitCode.FAILURE, message, "internal")
        if status == "max_steps":
            message = (
                f"stopped after {settings.max_steps} steps before the model finished; "
                "raise --max-steps to let it go on"
            )
            return Ending("max_steps", ExitCode.LIMIT, message, "max_steps")
        if status == "pending":
            self.pending = [*self._unanswered_frontend_calls(), *self.pending]
        return Ending("finished", ExitCode.OK)

    def _unanswered_frontend_calls(self) -> list[str]:
        messages = self.session.conversation.messages
        last = next((m for m in reversed(messages) if m.role == "assistant"), None)
        answered = {m.tool_call_id for m in messages if m.role == "tool"}
        calls = last.tool_calls if last is not None else []
        return [c.id for c in calls if c.name in self.loop.frontend and c.id not in answered]

    def _leave_valid_history(self) -> None:
        """After a cancel: keep the partial answer, marked, and answer unanswered calls."""
        collector = self.loop.state.collector
        conversation = self.session.conversation
        if collector is not None and collector.text:
            partial = Message(role="assistant", content=collector.text + INTERRUPTED_MARK)
            conversation.add(partial)
        conversation.repair()

    def _emit_ending(self, summary: RunSummary, code: str | None) -> None:
        """Closes what an interrupted step left open, then RUN_FINISHED or RUN_ERROR."""
        collector = self.loop.state.collector
        if collector is not None and collector.text_open:
            self.emit(ev.TextMessageEnd(message_id=collector.message_id or ""))
        usage = [summary.usage.to_wire(self.provider.name, self.provider.model)]
        ids = {"thread_id": summary.thread_id, "run_id": summary.run_id}
        if summary.status == "finished":
            outcome: dict = {"type": "success"}
            if self.pending:
                outcome["pendingToolCallIds"] = list(self.pending)
            self.emit(ev.RunFinished(**ids, outcome=outcome, usage=usage))
        elif summary.status == "cancelled":
            self.emit(ev.RunFinished(**ids, outcome={"type": "cancelled"}, usage=usage))
        else:
            message = summary.error or summary.status
            self.emit(ev.RunError(message=message, code=code, usage=usage))
        self.emit.finish(summary)

    async def aclose(self, *, stop_all: bool = True) -> None:
        """`stop_all`: every process its trees hold (the process is ending); otherwise
        only this agent's background jobs (a served run, beside other runs)."""
        if stop_all:
            await self.processes.stop_all()  # foreground commands and background jobs alike
        else:
            jobs = self.context.jobs
            for job in list(jobs.jobs.values()) if jobs is not None else []:
                await jobs.kill(job)
        if self._owns_registry:
            await self.registry.aclose()  # MCP servers, with their process trees
        if self._owns_provider:
            await self.provider.aclose()
        if self._owns_sandbox:
            self.sandbox.close()
        self.session.close()
