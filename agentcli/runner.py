"""Runs one prompt to the end: wires provider, tools, policy, executor, loop and outputs,
and turns every way a run can end into events, a summary and an exit code."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import traceback
from collections.abc import Callable
from dataclasses import dataclass

from agentcli import events as ev
from agentcli.compaction import Compactor
from agentcli.config import trust
from agentcli.errors import AgentCliError, ExitCode, UsageError
from agentcli.executor import Executor
from agentcli.instructions import find_instructions, instructions_block
from agentcli.loop import AgentLoop, LoopState
from agentcli.messages import Message, new_id
from agentcli.output.base import FanOut, Output, RunSummary
from agentcli.paths import data_dir
from agentcli.policy.setup import build_policy
from agentcli.process.env import child_environment
from agentcli.process.jobs import JobManager
from agentcli.process.run import LIVE
from agentcli.providers.factory import make_provider
from agentcli.sessions.session import Session, find_session, latest_for
from agentcli.settings import RunSettings, context_window
from agentcli.system_prompt import build_system_prompt
from agentcli.tools.base import ToolContext
from agentcli.tools.registry import builtin_tools
from agentcli.workspace import Workspace


def print_error(message: str) -> None:
    sys.stderr.write(f"agentcli: error: {message}\n")
    sys.stderr.flush()


class _Stop:
    """Which signal ended the run, if one did."""

    def __init__(self) -> None:
        self.code: int | None = None


def open_session(settings: RunSettings, *, resume: str | None, continue_: bool) -> Session:
    """The session this run belongs to: a new one, the latest of this workspace
    (--continue), or a named one (--resume ID)."""
    if resume and continue_:
        raise UsageError("--continue and --resume contradict each other; pass one of them")
    if resume or continue_:
        path = find_session(resume) if resume else latest_for(settings.workspace)
        session = Session.load(path)
        session.open_for_append()
        return session
    return Session.create(settings.workspace, str(settings.model))


def startup_notices(settings: RunSettings, session: Session) -> None:
    """Warnings about the configuration and the session file, once, on stderr."""
    config = settings.config
    for warning in [*config.warnings, *session.warnings]:
        sys.stderr.write(f"agentcli: warning: {warning}\n")
    if config.ignored and trust.first_notice(settings.workspace, config.ignored):
        sys.stderr.write(
            "agentcli: this workspace is not trusted, so its .agentcli/config.toml may not set "
            f"{', '.join(config.ignored)}; run `agentcli trust` to trust it\n"
        )


async def run_prompt(
    settings: RunSettings, prompt: str, outputs: list[Output], session: Session
) -> int:
    emit = FanOut([session, *outputs])
    thread_id, run_id = session.id, new_id("run")
    provider = make_provider(settings)
    workspace = Workspace(settings.workspace)
    policy = build_policy(
        settings.config,
        workspace,
        yes=settings.yes,
        deny=settings.deny,
        allow=list(settings.allow),
        forbid=list(settings.forbid),
        interactive=True,
    )
    registry = builtin_tools()
    output_dir = data_dir() / "outputs" / run_id
    config = settings.config
    output_limit = config.get("shell.output_limit")
    context = ToolContext(
        workspace=workspace,
        output_dir=output_dir,
        child_env=child_environment(config.get("shell.env"), provider_keys=[settings.api_key_env]),
        jobs=JobManager(output_dir, limit=output_limit),
        output_limit=output_limit,
        python=config.get("shell.python"),
    )
    executor = Executor(
        registry, policy, context, emit, max_concurrency=config.get("tools.concurrency")
    )
    instructions = find_instructions(settings.workspace, config.get("instructions.files"))
    compactor = Compactor(
        provider,
        window=context_window(config, str(settings.model)),
        threshold=config.get("context.threshold"),
        keep_turns=config.get("context.keep_turns"),
        emit=emit,
        on_compacted=session.record_compaction,
    )
    loop = AgentLoop(
        provider,
        executor,
        emit,
        system=build_system_prompt(
            settings.workspace,
            settings.system,
            instructions_block(instructions, settings.workspace),
        ),
        tools=[tool.spec() for tool in registry],
        max_steps=settings.max_steps,
        compactor=compactor,
    )
    conversation = session.conversation
    conversation.repair()  # before the new prompt, so results follow their calls
    conversation.add(Message.user(prompt))
    stop = _Stop()
    task = asyncio.current_task()
    _install_signal_handlers(stop, task)

    emit(ev.RunStarted(thread_id=thread_id, run_id=run_id))
    if instructions:
        emit(ev.Custom(name="instructions", value={"files": [str(i.path) for i in instructions]}))
    try:
        ending = await _drive(loop, conversation, settings, stop, task)
    finally:
        await LIVE.stop_all()  # foreground commands and background jobs alike
        _remove_signal_handlers()
        await provider.aclose()
    if ending.exit_code == ExitCode.OK and executor.denied:
        ending.exit_code = ExitCode.DENIED

    state = loop.state
    summary = RunSummary(
        thread_id=thread_id,
        run_id=run_id,
        model=str(settings.model),
        status=ending.status,
        exit_code=ending.exit_code,
        steps=state.steps,
        usage=state.usage,
        final_text=state.collector.text if state.collector is not None else state.final_text,
        error=ending.error,
    )
    if ending.status == "output_closed":
        session.close()
        return ending.exit_code  # the reader of stdout is gone: nothing more to say
    try:
        _emit_ending(emit, summary, state, provider.name, provider.model, ending.code)
    except BrokenPipeError:
        return ExitCode.OUTPUT_CLOSED
    finally:
        session.close()
    if ending.error and ending.status != "cancelled":
        print_error(ending.error)
    return ending.exit_code


@dataclass(slots=True)
class _Ending:
    status: str  # finished | max_steps | timeout | error | cancelled | output_closed
    exit_code: int
    error: str | None = None
    code: str | None = None  # RUN_ERROR's machine-readable code


async def _drive(
    loop: AgentLoop,
    conversation: list[Message],
    settings: RunSettings,
    stop: _Stop,
    task: asyncio.Task | None,
) -> _Ending:
    """Runs the loop and turns every way it can end into an _Ending."""
    try:
        async with asyncio.timeout(settings.timeout):
            status = await loop.run(conversation)
    except TimeoutError:
        message = f"the run reached --timeout {settings.timeout:g}s before the model finished"
        return _Ending("timeout", ExitCode.LIMIT, message, "timeout")
    except asyncio.CancelledError:
        if stop.code is None:
            raise
        if task is not None:
            task.uncancel()
        return _Ending("cancelled", stop.code, "interrupted")
    except BrokenPipeError:
        return _Ending("output_closed", ExitCode.OUTPUT_CLOSED)
    except AgentCliError as failure:
        return _Ending("error", failure.exit_code, str(failure), failure.code)
    except Exception as bug:  # an internal error still ends in one line and a clean summary
        message = f"internal error: {type(bug).__name__}: {bug}"
        if settings.debug:
            traceback.print_exc()
        else:
            message += " (rerun with --debug for the traceback)"
        return _Ending("error", ExitCode.FAILURE, message, "internal")
    if status == "max_steps":
        message = (
            f"stopped after {settings.max_steps} steps before the model finished; "
            "raise --max-steps to let it go on"
        )
        return _Ending("max_steps", ExitCode.LIMIT, message, "max_steps")
    return _Ending("finished", ExitCode.OK)


def _emit_ending(
    emit: FanOut,
    summary: RunSummary,
    state: LoopState,
    provider: str,
    model: str,
    code: str | None,
) -> None:
    """Closes what the interrupted step left open, then RUN_FINISHED or RUN_ERROR."""
    if state.collector is not None and state.collector.text_open:
        emit(ev.TextMessageEnd(message_id=state.collector.message_id or ""))
    usage = [summary.usage.to_wire(provider, model)]
    ids = {"thread_id": summary.thread_id, "run_id": summary.run_id}
    if summary.status == "finished":
        emit(ev.RunFinished(**ids, outcome={"type": "success"}, usage=usage))
    elif summary.status == "cancelled":
        emit(ev.RunFinished(**ids, outcome={"type": "cancelled"}, usage=usage))
    else:
        emit(ev.RunError(message=summary.error or summary.status, code=code, usage=usage))
    emit.finish(summary)


def _install_signal_handlers(stop: _Stop, task: asyncio.Task | None) -> None:
    loop = asyncio.get_running_loop()

    def cancel(code: int) -> Callable[[], None]:
        def handler() -> None:
            if stop.code is None and task is not None:
                stop.code = code
                task.cancel()

        return handler

    loop.add_signal_handler(signal.SIGINT, cancel(ExitCode.INTERRUPTED))
    loop.add_signal_handler(signal.SIGTERM, cancel(ExitCode.TERMINATED))


def _remove_signal_handlers() -> None:
    loop = asyncio.get_running_loop()
    loop.remove_signal_handler(signal.SIGINT)
    loop.remove_signal_handler(signal.SIGTERM)


def build_outputs(settings: RunSettings) -> list[Output]:
    from agentcli.output.notices import Notices

    outputs: list[Output] = [Notices(sys.stderr)]
    if settings.output == "jsonl":
        from agentcli.output.jsonl import JsonlOutput

        outputs.append(JsonlOutput(sys.stdout))
    elif settings.output == "json":
        from agentcli.output.json_summary import JsonOutput

        outputs.append(JsonOutput(sys.stdout))
    else:
        from agentcli.output.text import TextOutput

        outputs.append(TextOutput(sys.stdout, sys.stderr))
    return outputs


def run_in_event_loop(settings: RunSettings, prompt: str, session: Session) -> int:
    startup_notices(settings, session)
    code = asyncio.run(run_prompt(settings, prompt, build_outputs(settings), session))
    if code == ExitCode.OUTPUT_CLOSED:
        die_of_sigpipe()
    return code


def die_of_sigpipe() -> None:
    """The reader of stdout went away (`agentcli run ... | head -1`): end quietly the Unix
    way, by SIGPIPE, rather than with Python's complaint about an unflushable stdout."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
