"""Runs one prompt to the end: wires provider, tools, policy, executor, loop and outputs,
and turns every way a run can end into events, a summary and an exit code."""

from __future__ import annotations

import asyncio
import signal
import sys
import traceback
from collections.abc import Callable

from agentcli import events as ev
from agentcli.errors import AgentCliError, ExitCode
from agentcli.executor import Executor
from agentcli.loop import AgentLoop
from agentcli.messages import Message, new_id
from agentcli.output.base import FanOut, Output, RunSummary
from agentcli.paths import data_dir
from agentcli.policy import Policy
from agentcli.process.env import child_environment
from agentcli.process.jobs import JobManager
from agentcli.process.run import LIVE
from agentcli.providers.factory import make_provider
from agentcli.settings import RunSettings
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


async def run_prompt(settings: RunSettings, prompt: str, outputs: list[Output]) -> int:
    emit = FanOut(outputs)
    thread_id, run_id = new_id("thread"), new_id("run")
    provider = make_provider(settings)
    policy = Policy(yes=settings.yes, deny=settings.deny)
    registry = builtin_tools()
    output_dir = data_dir() / "outputs" / run_id
    context = ToolContext(
        workspace=Workspace(settings.workspace),
        output_dir=output_dir,
        child_env=child_environment(provider_keys=[settings.api_key_env]),
        jobs=JobManager(output_dir, limit=30_000),
    )
    executor = Executor(registry, policy, context, emit)
    loop = AgentLoop(
        provider,
        executor,
        emit,
        system=build_system_prompt(settings.workspace, settings.system),
        tools=[tool.spec() for tool in registry],
        max_steps=settings.max_steps,
    )
    conversation = [Message.user(prompt)]
    stop = _Stop()
    task = asyncio.current_task()
    _install_signal_handlers(stop, task)

    emit(ev.RunStarted(thread_id=thread_id, run_id=run_id))
    status, exit_code, error = "finished", ExitCode.OK, None
    try:
        async with asyncio.timeout(settings.timeout):
            status = await loop.run(conversation)
        if status == "max_steps":
            exit_code = ExitCode.LIMIT
            error = (
                f"stopped after {settings.max_steps} steps before the model finished; "
                "raise --max-steps to let it go on"
            )
    except TimeoutError:
        status, exit_code = "timeout", ExitCode.LIMIT
        error = f"the run reached --timeout {settings.timeout:g}s before the model finished"
    except asyncio.CancelledError:
        if stop.code is None:
            raise
        if task is not None:
            task.uncancel()
        status, exit_code = "cancelled", stop.code
        error = "interrupted"
    except AgentCliError as failure:
        status, exit_code, error = "error", failure.exit_code, str(failure)
    except Exception as bug:  # an internal error still ends in one line and a clean summary
        status, exit_code = "error", ExitCode.FAILURE
        error = f"internal error: {type(bug).__name__}: {bug}"
        if settings.debug:
            traceback.print_exc()
        else:
            error += " (rerun with --debug for the traceback)"
    finally:
        await LIVE.stop_all()  # foreground commands and background jobs alike
        _remove_signal_handlers()
        await provider.aclose()

    if exit_code == ExitCode.OK and executor.denied:
        exit_code = ExitCode.DENIED
    state = loop.state
    final_text = state.collector.text if state.collector is not None else state.final_text
    usage = [state.usage.to_wire(provider.name, provider.model)]
    if status in ("finished", "cancelled"):
        outcome = {"type": "success" if status == "finished" else "cancelled"}
        emit(ev.RunFinished(thread_id=thread_id, run_id=run_id, outcome=outcome, usage=usage))
    else:
        emit(ev.RunError(message=error or status, code=status, usage=usage))
    emit.finish(
        RunSummary(
            thread_id=thread_id,
            run_id=run_id,
            model=str(settings.model),
            status=status,
            exit_code=exit_code,
            steps=state.steps,
            usage=state.usage,
            final_text=final_text,
            error=error,
        )
    )
    if error and status != "cancelled":
        print_error(error)
    return exit_code


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


def run_in_event_loop(settings: RunSettings, prompt: str) -> int:
    return asyncio.run(run_prompt(settings, prompt, build_outputs(settings)))
