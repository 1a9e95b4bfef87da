"""One session's agent, handed its parts — provider, tools, policy (with its remembered
choices), executor — by the composition root (agentcli.assembly.session) and then asked turn
after turn: by `run` once, by the REPL many times, by `serve` once per run of a thread.

Each turn is one AG-UI run: RUN_STARTED, the steps, then RUN_FINISHED or RUN_ERROR. Every
way a turn can end (finished, step limit, timeout, provider failure, cancel, a closed
stdout, a bug) becomes a summary with a documented exit code; a cancelled turn leaves the
conversation valid (its partial answer marked, its unanswered calls answered)."""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from agentcli.agent.budget import StepBudget
from agentcli.agent.compaction import Compactor
from agentcli.agent.executor import Executor
from agentcli.agent.loop import AgentLoop, LoopState
from agentcli.agent.session_hooks import MAX_STOP_BLOCKS, SessionHooks
from agentcli.agent.stream_limits import StreamLimits
from agentcli.conversation import events as ev
from agentcli.conversation.images import ImagePart
from agentcli.conversation.messages import Message, new_id
from agentcli.errors import AgentCliError, ExitCode
from agentcli.output.base import FanOut, RunSummary
from agentcli.policy.engine import Policy, TurnCancelled
from agentcli.process.run import LiveTrees
from agentcli.providers.base import Provider
from agentcli.records import dataclass, field
from agentcli.sessions.session import Session
from agentcli.settings import RunSettings, context_window
from agentcli.text.decoding import shown
from agentcli.tools.base import ToolContext
from agentcli.tools.registry import ToolRegistry
from agentcli.workspace.root import Workspace

INTERRUPTED_MARK = "\n\n[interrupted by the user]"
CUT_MARK = "\n\n[the answer was cut off here: its stream failed]"


@dataclass(slots=True)
class Ending:
    status: str  # finished | pending | max_steps | timeout | error | cancelled | output_closed
    exit_code: int
    error: str | None = None
    code: str | None = None  # RUN_ERROR's machine-readable code


@dataclass(slots=True)
class AgentParts:
    """Everything one session's agent is handed (agentcli.assembly.session builds them)."""

    settings: RunSettings
    session: Session
    emit: FanOut  # the session file and the outputs, in that order
    workspace: Workspace
    policy: Policy
    registry: ToolRegistry
    context: ToolContext  # what its tools may use
    executor: Executor
    provider: Provider
    processes: LiveTrees  # the process trees its commands join
    sandbox: Any  # agentcli.sandbox.confine.Sandbox: what its commands run in
    # agentcli's, the project's, the started MCP servers' instructions, then --system:
    # made again when the sources change.
    system_prompt: Callable[[], str]
    instructions: list[Any] = field(default_factory=list)  # the project's instruction files
    owns_provider: bool = True  # False: a provider shared by many agents (serve)
    hooks: SessionHooks | None = None  # the user's hooks on the session's own events
    # What this agent made for itself and closes when it ends (a registry, a sandbox),
    # in order; the parts a REPL or a server shares are theirs to close.
    owned: list[Callable[[], Any]] = field(default_factory=list)
    # A subagent's: the steps it shares with the agents above it (--max-steps bounds the
    # whole). None: its own, --max-steps for each turn.
    budget: StepBudget | None = None


class Agent:
    def __init__(self, parts: AgentParts) -> None:
        self.settings = parts.settings
        self.session = parts.session
        self.emit = parts.emit
        self.workspace = parts.workspace
        self.sandbox = parts.sandbox
        self.policy = parts.policy
        self.registry = parts.registry
        self.processes = parts.processes
        self.context = parts.context
        self.executor = parts.executor
        self.provider = parts.provider
        self.instructions = parts.instructions
        self.model = parts.settings.model
        self._system_prompt = parts.system_prompt
        self.hooks = parts.hooks
        self._hook_context = ""  # what SessionStart hooks added to the system prompt
        self._owns_provider = parts.owns_provider
        self._owned = list(parts.owned)
        self._budget = parts.budget
        self._announced: set[str] = set()  # MCP servers whose start was reported
        self.output_dir = parts.context.output_dir
        if hasattr(self.provider, "thread_id"):  # a remote AG-UI agent: the session's thread
            self.provider.thread_id = self.session.id
        self.loop = self._build_loop()
        self.usage = ev.Usage()  # the whole session's tokens, for /usage
        self.thread_id = self.session.id  # AG-UI's threadId (a served thread names its own)
        self.run_id: str | None = None  # the turn's, while one runs (a subagent's parent)
        self.pending: list[str] = []  # calls a client must answer before the turn goes on
        self._cancel_code: int | None = None
        self._turn: asyncio.Task | None = None

    @property
    def in_turn(self) -> bool:
        """A turn is running (an MCP server's request can be put to a person now)."""
        return self._turn is not None

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
            before=self.hooks.pre_compact if self.hooks is not None else None,
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
            budget=self._budget,
        )

    def _built_system(self) -> str:
        """agentcli's, the project's, the instructions of trusted MCP servers running (none
        before they start), then --system."""
        self._system = self._system_prompt() + self._hook_context
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

    def use_model(self, settings: RunSettings, provider: Provider) -> Provider:
        """`/model NAME`: the next turns go to `provider` (the conversation stays); returns
        the one it replaces, for the caller to close."""
        before = self.provider
        self.settings, self.model, self.provider = settings, settings.model, provider
        self.loop = self._build_loop()
        return before

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
        run_id = self.run_id = run_id or new_id("run")
        self._cancel_code = None
        self._turn = asyncio.current_task()
        self.executor.start_run()
        self.pending = []
        conversation = self.session.conversation
        self.loop.state = LoopState()  # a turn its hooks stop has no steps of its own
        ending, prompt = await self._before_turn(prompt if prelude is None else None)
        if prelude is None and ending is None:
            conversation.repair()  # before the new prompt, so results follow their calls
            if prompt is not None:  # typed or piped: no lone surrogate goes further
                conversation.add(Message.user(shown(prompt), images))
        self.emit(ev.RunStarted(thread_id=self.thread_id, run_id=run_id))
        if self.instructions and ending is None:
            files = [str(i.path) for i in self.instructions]
            self.emit(ev.Instructions(files=files))
        earlier, steps = ev.Usage(), 0  # of the drives before a Stop hook sent it on
        try:
            if ending is None:
                ending = await self._drive(prelude)
            for active in range(MAX_STOP_BLOCKS):
                reason = await self._stop_hooks(ending, active > 0)
                if isinstance(reason, Ending):
                    ending = reason
                if not isinstance(reason, str):
                    break
                earlier.add(self.loop.state.usage)
                steps += self.loop.state.steps
                conversation.add(Message.user(reason))
                ending = await self._drive(None)
        finally:
            self._turn = None
        if ending.status in ("cancelled", "error"):
            self._leave_valid_history(
                INTERRUPTED_MARK if ending.status == "cancelled" else CUT_MARK
            )
        if ending.exit_code == ExitCode.OK and self.executor.decision.denied:
            ending.exit_code = ExitCode.DENIED
        state = self.loop.state
        earlier.add(state.usage)
        self.usage.add(earlier)
        summary = RunSummary(
            thread_id=self.thread_id,
            run_id=run_id,
            model=str(self.model),
            status=ending.status,
            exit_code=ending.exit_code,
            steps=steps + state.steps,
            usage=earlier,
            final_text=state.collector.text if state.collector is not None else state.final_text,
            error=ending.error,
        )
        if ending.status != "output_closed":
            self._emit_ending(summary, ending.code)
        return summary

    async def _before_turn(self, prompt: str | None) -> tuple[Ending | None, str | None]:
        """The session's first turn starts it (SessionStart); a prompt goes through the
        UserPromptSubmit hooks, which may block it (the turn ends, exit 4) or add context
        below it. An Ending when the turn ends here."""
        if self.hooks is None:
            return None, prompt
        try:
            if not self.hooks.started:
                source = "resume" if self.session.conversation.messages else "startup"
                context = await self.hooks.session_start(source)
                if context:
                    self._hook_context = f"\n\n{context}"
                    self.loop.system = self._built_system()
            if prompt is None:
                return None, prompt
            verdict = await self.hooks.user_prompt(prompt)
        except asyncio.CancelledError:
            if self._cancel_code is None:
                raise
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
            return Ending("cancelled", self._cancel_code, "interrupted"), prompt
        if verdict.blocked is not None:
            return Ending("blocked", ExitCode.DENIED, verdict.blocked, "hook_blocked"), prompt
        if verdict.context:
            prompt = f"{prompt}\n\n{verdict.context}"
        return None, prompt

    async def _stop_hooks(self, ending: Ending, active: bool) -> str | Ending | None:
        """Why the model should go on (a Stop hook blocked the stop), None to stop, or the
        Ending of a turn cancelled while they ran."""
        if self.hooks is None or ending.status != "finished" or self.pending:
            return None
        try:
            return await self.hooks.stop(active, self.loop.state.final_text)
        except asyncio.CancelledError:
            if self._cancel_code is None:
                raise
            asyncio.current_task().uncancel()  # type: ignore[union-attr]
            return Ending("cancelled", self._cancel_code, "interrupted")

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
            # Fewer of its own: its subagents took the rest.
            counted = (
                " (with its subagents' steps)" if self.loop.state.steps < settings.max_steps else ""
            )
            message = (
                f"stopped after {settings.max_steps} steps{counted} before the model "
                "finished; raise --max-steps to let it go on"
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

    def _leave_valid_history(self, mark: str) -> None:
        """After a cancel or a stream that failed: keep the partial answer, marked (the
        error line said it is kept: the next turn's model sees it), and answer unanswered
        calls."""
        collector = self.loop.state.collector
        conversation = self.session.conversation
        if collector is not None and collector.text:
            partial = Message(role="assistant", content=collector.text + mark)
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

    async def aclose(self, *, stop_all: bool = True, reason: str = "other") -> None:
        """`stop_all`: every process its trees hold (the process is ending); otherwise
        only this agent's background jobs (a served run, beside other runs). `reason`: why
        the session ends, for its SessionEnd hooks (Claude Code's words)."""
        if self.hooks is not None:
            await self.hooks.session_end(reason)
        if stop_all:
            await self.processes.stop_all()  # foreground commands and background jobs alike
        else:
            jobs = self.context.jobs
            for job in list(jobs.jobs.values()) if jobs is not None else []:
                await jobs.kill(job)
        for close in self._owned:  # its own registry (MCP servers), then its sandbox
            closing = close()
            if inspect.isawaitable(closing):
                await closing
        if self._owns_provider:
            await self.provider.aclose()
        # Off the event loop: the file's close waits for its fsync (and its syncer thread),
        # which a slow disk makes long, and a served run's end must not hold up the others'.
        await asyncio.to_thread(self.session.close)
