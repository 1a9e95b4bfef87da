"""Runs one prompt to the end (`agentcli run`, or `chat` with a pipe): opens the session,
hands the prompt to the agent, and turns the ending into an exit code."""

from __future__ import annotations

import asyncio
import os
import signal
import sys

from agentcli.agent import Agent
from agentcli.config import trust
from agentcli.errors import AgentCliError, ExitCode, UsageError
from agentcli.output.base import Output
from agentcli.sessions.session import Session, find_session, latest_for
from agentcli.settings import RunSettings


def print_error(message: str) -> None:
    from agentcli.output.visible import visible

    sys.stderr.write(f"agentcli: error: {visible(message)}\n")  # it may quote a server
    sys.stderr.flush()


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
    """One prompt to the end: SIGINT and SIGTERM cancel it, and everything it started stops."""
    try:
        agent = Agent(settings, session, outputs)
    except AgentCliError as error:
        session.close()
        print_error(str(error))
        return error.exit_code
    loop = asyncio.get_running_loop()
    loop.add_signal_handler(signal.SIGINT, agent.cancel, ExitCode.INTERRUPTED)
    loop.add_signal_handler(signal.SIGTERM, agent.cancel, ExitCode.TERMINATED)
    try:
        summary = await agent.run_turn(prompt)
    except BrokenPipeError:  # stdout's reader left while the ending was written
        return ExitCode.OUTPUT_CLOSED
    finally:
        loop.remove_signal_handler(signal.SIGINT)
        loop.remove_signal_handler(signal.SIGTERM)
        await agent.aclose()
    if summary.error and summary.status not in ("cancelled", "output_closed"):
        print_error(summary.error)
    return summary.exit_code


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
