"""Runs one prompt to the end (`agentcli run`, or `chat` with a pipe): opens the session,
hands the prompt to the agent, and turns the ending into an exit code."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from agentcli.config import trust
from agentcli.errors import AgentCliError, ExitCode, UsageError, print_error
from agentcli.output.base import Output
from agentcli.sessions.session import Session, find_session, latest_for
from agentcli.settings import RunSettings
from agentcli.signals import ending_signals
from agentcli.ui.screen import TerminalGate

if TYPE_CHECKING:
    from agentcli.cli.command_prompt import OneShotPrompt


def open_session(settings: RunSettings, *, resume: str | None, continue_: bool) -> Session:
    """The session this run belongs to: a new one, the latest of this workspace
    (--continue), or a named one (--resume ID)."""
    if resume is not None and continue_:
        raise UsageError("--continue and --resume contradict each other; pass one of them")
    if resume is not None or continue_:  # `--resume ''` names no session: said, not a new one
        path = find_session(resume) if resume is not None else latest_for(settings.workspace)
        config = settings.config
        return Session.open(
            path,
            lock_wait=config.get("sessions.lock_wait"),
            images=config.get("images.max_bytes"),  # only a run sends images on: it reads them
        )
    return Session.create(settings.workspace, str(settings.model))


def startup_notices(settings: RunSettings, session: Session) -> None:
    """Warnings about the configuration and the session file, once, on stderr."""
    from agentcli.output.visible import one_line

    config = settings.config
    for warning in [*config.warnings, *session.warnings]:  # they quote files and keys
        sys.stderr.write(f"agentcli: warning: {one_line(warning)}\n")
    if config.ignored and trust.first_notice(settings.workspace, config.ignored):
        sys.stderr.write(
            "agentcli: this workspace is not trusted, so its .agentcli/config.toml may not set "
            f"{one_line(', '.join(config.ignored))}; run `agentcli trust` to trust it\n"
        )


async def run_prompt(
    settings: RunSettings,
    prompt: str,
    outputs: list[Output],
    session: Session,
    screen: TerminalGate | None = None,
    asked: OneShotPrompt | None = None,
) -> int:
    """One prompt to the end: SIGINT, SIGTERM and SIGHUP cancel it, and everything it started
    stops. `screen`: the terminal's gate, shared by the text output and the approval prompt;
    `asked`: a custom command's prompt, with the steps its allowed-tools make."""
    from agentcli.assembly.session import open_agent
    from agentcli.ui.approval import terminal_approver

    steps = asked.steps if asked is not None else []
    try:
        agent = open_agent(
            settings, session, outputs, approver=terminal_approver(screen), steps=steps
        )
    except AgentCliError as error:
        session.close()
        print_error(str(error))
        return error.exit_code
    try:
        with ending_signals(agent.cancel):
            images: list[Any] = []
            if asked is not None and asked.mentions_in and prompt.startswith(asked.mentions_in):
                typed, below = asked.mentions_in, prompt[len(asked.mentions_in) :]
                typed, images = await attach_mentions(agent, typed)
                prompt = typed + below
            summary = await agent.run_turn(prompt, images=images)
    except BrokenPipeError:  # stdout's reader left while the ending was written
        return ExitCode.OUTPUT_CLOSED
    finally:
        await agent.aclose()
    if summary.error and summary.status not in ("cancelled", "output_closed"):
        print_error(summary.error)
    return summary.exit_code


async def attach_mentions(agent: Any, prompt: str) -> tuple[str, list[Any]]:
    """`@path` (and `@server:uri`) in the prompt attach as in the REPL; what was attached,
    or why not, is said on stderr."""
    if "@" not in prompt:
        return prompt, []
    from agentcli.output.visible import visible
    from agentcli.ui.resource_mentions import expand_chat_mentions

    def say(line: str) -> None:
        sys.stderr.write(f"agentcli: {visible(line.strip())}\n")

    message, notes, images = await expand_chat_mentions(
        prompt,
        agent.workspace,
        agent.registry,
        say,
        image_limit=agent.context.image_limit,
        sees_images=bool(getattr(agent.provider, "takes_images", False)),
    )
    for note in notes:
        say(note)
    return message, images


def build_outputs(settings: RunSettings, screen: TerminalGate | None = None) -> list[Output]:
    from agentcli.output.notices import Notices

    outputs: list[Output] = [Notices(sys.stderr, waiting=settings.output != "text")]
    if settings.output == "jsonl":
        from agentcli.output.jsonl import JsonlOutput

        outputs.append(JsonlOutput(sys.stdout))
    elif settings.output == "json":
        from agentcli.output.json_summary import JsonOutput

        outputs.append(JsonOutput(sys.stdout))
    else:
        from agentcli.output.text import TextOutput

        outputs.append(TextOutput(sys.stdout, sys.stderr, screen=screen))
    return outputs


def run_in_event_loop(
    settings: RunSettings, prompt: str, session: Session, asked: OneShotPrompt | None = None
) -> int:
    startup_notices(settings, session)
    screen = TerminalGate()  # this run's terminal: the text output and the approval prompt
    workers = CountingExecutor()
    runner = asyncio.Runner()
    code = ExitCode.FAILURE  # if the run itself raised
    try:
        runner.get_loop().set_default_executor(workers)
        outputs = build_outputs(settings, screen)
        code = runner.run(run_prompt(settings, prompt, outputs, session, screen, asked))
    finally:
        if workers.busy:
            # A tool is stuck in a blocking call (a read the kernel never finishes): no
            # thread can be stopped, and waiting for it would hold the process forever
            # after --timeout or Ctrl-C. Everything is written: end now.
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
        runner.close()
    if code == ExitCode.OUTPUT_CLOSED:
        die_of_sigpipe()
    return code


class CountingExecutor(ThreadPoolExecutor):
    """The event loop's thread pool (asyncio.to_thread), counting calls still running."""

    def __init__(self) -> None:
        super().__init__(thread_name_prefix="agentcli-tool")
        self.busy = 0
        self._lock = threading.Lock()

    def submit(self, fn: Any, /, *args: Any, **kwargs: Any) -> Future[Any]:
        def counted() -> Any:
            try:
                return fn(*args, **kwargs)
            finally:
                with self._lock:
                    self.busy -= 1

        with self._lock:
            self.busy += 1
        try:
            return super().submit(counted)
        except BaseException:
            with self._lock:
                self.busy -= 1
            raise


def die_of_sigpipe() -> None:
    """The reader of stdout went away (`agentcli run ... | head -1`): end quietly the Unix
    way, by SIGPIPE, rather than with Python's complaint about an unflushable stdout."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    os.kill(os.getpid(), signal.SIGPIPE)
